// A contact's timeline: its campaign enrollments, every campaign email and
// what became of it (delivered, opened, clicked, bounced, marked as spam),
// and its unsubscribes, newest first, a page at a time.
import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client';
import { pageCount } from '../lib/contactsView';
import { useList } from '../lib/useList';
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
};
const tone: Partial<Record<Activity['type'], string>> = { failed: 'bad', bounced: 'bad', dropped: 'bad', complained: 'bad', unsubscribed: 'warn', deferred: 'warn' };
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
                {what[a.type]} <a href={`/app/books/${bookId}/campaigns/${a.campaign_id}`}>{campaignNames.get(a.campaign_id) ?? 'a campaign'}</a>
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
