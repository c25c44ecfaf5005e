// A contact's timeline: its campaign enrollments, every campaign and
// transactional email and what became of it (delivered, opened, clicked,
// bounced, marked as spam), and its unsubscribes, newest first, a page at a
// time; and the product events its team's systems reported of it.
import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client';
import { pageCount } from '../lib/contactsView';
import { useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { Pager } from '../ui/Pager';

type Activity = Schemas['Activity'];

const what: Record<Activity['type'], string> = {
  enrolled: 'Enrolled in',
  removed: 'Removed from',
  sent: 'Email sent by',
  failed: 'Email not sent by',
  skipped: 'Step skipped (its condition did not hold) in',
  delivered: 'Email delivered, from',
  deferred: 'Delivery deferred by the receiving server, email of',
  bounced: 'Email bounced, from',
  dropped: 'Email dropped by the provider, from',
  opened: 'Email opened, from',
  clicked: 'Link clicked in the email of',
  complained: 'Email marked as spam, from',
  unsubscribed: 'Unsubscribed from',
  transactional_sent: 'Transactional email sent',
  transactional_failed: 'Transactional email not sent',
  transactional_suppressed: 'Transactional email not sent (address suppressed)',
  transactional_delivered: 'Transactional email delivered',
  transactional_deferred: 'Transactional email deferred by the receiving server',
  transactional_bounced: 'Transactional email bounced',
  transactional_dropped: 'Transactional email dropped by the provider',
  transactional_opened: 'Transactional email opened',
  transactional_clicked: 'Link clicked in a transactional email',
  transactional_complained: 'Transactional email marked as spam',
  transactional_unsubscribed: 'Unsubscribed through a transactional email',
};
const tone: Partial<Record<Activity['type'], string>> = {
  failed: 'bad', bounced: 'bad', dropped: 'bad', complained: 'bad', unsubscribed: 'warn', deferred: 'warn',
  transactional_failed: 'bad', transactional_suppressed: 'warn', transactional_bounced: 'bad', transactional_dropped: 'bad',
  transactional_complained: 'bad', transactional_deferred: 'warn',
};
const pageSize = 20;

export function ContactTimeline({ id, bookId, campaignNames }: { id: string; bookId: string; campaignNames: Map<string, string> }) {
  const [page, setPage] = useState(1);
  const list = useList<Activity>(
    (signal) => ok(api.GET('/api/contacts/{id}/activity', { params: { path: { id }, query: { page, limit: pageSize } }, signal })),
    `${id}/${page}`,
  );
  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      {list.error && <p role="alert">{list.error}</p>}
      {list.rows?.length === 0 ? (
        <p class="state">No campaign email or enrollment yet.</p>
      ) : (
        <ol class="timeline" aria-busy={list.loading || undefined}>
          {(list.rows ?? []).map((a) => (
            <li class={tone[a.type] ?? ''} data-type={a.type}>
              <time dateTime={a.at}>{new Date(a.at).toLocaleString()}</time>{' '}
              <span>
                {a.campaign_id ? (
                  <>
                    {what[a.type]} <a href={`/app/books/${bookId}/campaigns/${a.campaign_id}`}>{campaignNames.get(a.campaign_id) ?? 'a campaign'}</a>
                  </>
                ) : (
                  <a href={`/app/books/${bookId}/transactional?message=${a.transactional_id}`}>{what[a.type]}</a>
                )}
                {a.detail && <span class="detail">: {a.detail}</span>}
              </span>
            </li>
          ))}
        </ol>
      )}
      {list.total > pageSize && <Pager page={page} pages={pageCount(list.total, pageSize)} onPage={setPage} />}
    </section>
  );
}

type TrackedEvent = Schemas['Event'];

/** ContactEvents lists the product events of the contact, newest first, older ones on demand. */
export function ContactEvents({ id }: { id: string }) {
  const [older, setOlder] = useState<TrackedEvent[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [more, setMore] = useState(false);
  const first = useResource(
    (signal) => ok(api.GET('/api/contacts/{id}/events', { params: { path: { id }, query: { limit: 20 } }, signal })),
    [id],
  );
  const next = older.length ? cursor : (first.data?.meta.next_cursor ?? null);
  const rows = [...(first.data?.data ?? []), ...older];
  const loadOlder = async () => {
    if (!next) return;
    setMore(true);
    try {
      const r = await ok(api.GET('/api/contacts/{id}/events', { params: { path: { id }, query: { limit: 20, cursor: next } } }));
      setOlder((o) => [...o, ...r.data]);
      setCursor(r.meta.next_cursor ?? null);
    } finally {
      setMore(false);
    }
  };
  return (
    <section aria-labelledby="events">
      <h2 id="events">Events</h2>
      {first.error && <p role="alert">{first.error}</p>}
      {first.data && rows.length === 0 ? (
        <p class="state">No event reported yet. Your systems report them with POST /api/v1/events.</p>
      ) : (
        <ol class="timeline" aria-busy={first.loading || undefined}>
          {rows.map((e) => (
            <li data-event={e.name}>
              <time dateTime={e.occurred_at}>{new Date(e.occurred_at).toLocaleString()}</time> <code>{e.name}</code>
              {Object.keys(e.properties ?? {}).length > 0 && <span class="detail">: {JSON.stringify(e.properties)}</span>}
            </li>
          ))}
        </ol>
      )}
      {next && (
        <button type="button" class="secondary" disabled={more} onClick={() => void loadOlder()}>
          Show older events
        </button>
      )}
    </section>
  );
}
