// A webhook's delivery log (admins): every attempt with its status,
// duration, payload and response, filtered by outcome, event and time,
// paged by cursor; each delivery can be sent again (Retry), and every
// event whose delivery failed since a chosen time can be recovered.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, ok, type Schemas } from '../api/client';
import { deliveredEventTypes } from '../api/enums';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { DataTable } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice } from '../ui/Page';

type Webhook = Schemas['Webhook'];
type Attempt = Schemas['DeliveryLogEntry'];
type DeliveredEvent = Schemas['DeliveredEventType'];
type Outcome = '' | 'true' | 'false';

const pageSize = 50;
const deliveredEvents = deliveredEventTypes;

/** localInput is t as a datetime-local input shows it (the browser's time zone, to the minute). */
function localInput(t: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

/** checkSince accepts a time within the last 30 days, as the API does. */
function checkSince(v: string): string {
  const t = Date.parse(v);
  if (!v || Number.isNaN(t)) return 'Choose the time from which failed events are sent again.';
  if (t > Date.now()) return 'Choose a time in the past.';
  if (t < Date.now() - 30 * 24 * 3600 * 1000) return 'Choose a time within the last 30 days.';
  return '';
}

export function DeliveryLog({ teamId, webhook, reloads }: { teamId: string; webhook: Webhook; reloads: number }) {
  const [outcome, setOutcome] = useState<Outcome>('');
  const [event, setEvent] = useState<DeliveredEvent | ''>('');
  const [since, setSince] = useState('');
  // The cursors of the pages walked to, newest page first: the last one is shown.
  const [cursors, setCursors] = useState<string[]>(['']);
  const [shown, setShown] = useState<Attempt | null>(null);
  const [recovering, setRecovering] = useState(false);
  const [notice, setNotice] = useState('');
  const path = { team_id: teamId, webhook_id: webhook.id };
  const cursor = cursors[cursors.length - 1];
  // The page shown stays until the next one arrives.
  const log = useResource(
    async (signal) => {
      const r = await ok(
        api.GET('/api/teams/{team_id}/webhooks/{webhook_id}/deliveries', {
          params: {
            path,
            query: {
              limit: pageSize,
              success: outcome === '' ? undefined : outcome === 'true',
              event: event || undefined,
              since: since ? new Date(since).toISOString() : undefined,
              cursor: cursor || undefined,
            },
          },
          signal,
        }),
      );
      return { rows: r.data, next: r.meta.next_cursor ?? null };
    },
    [webhook.id, outcome, event, since, cursor, reloads],
    { keep: true },
  );
  const next = log.data?.next ?? null;
  // A new filter starts again at the newest page.
  useEffect(() => setCursors(['']), [webhook.id, outcome, event, since]);

  async function retry(a: Attempt) {
    try {
      await ok(api.POST('/api/teams/{team_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', { params: { path: { ...path, delivery_id: a.delivery_id } } }));
      setNotice(`The ${a.event_type} delivery is being sent again; its attempt shows here once made (Refresh).`);
      setTimeout(log.reload, 1000);
    } catch (e) {
      setNotice(errorText(e));
    }
  }

  return (
    <section aria-labelledby="delivery-log">
      <div class="section-head">
        <h2 id="delivery-log">Delivery log of {webhook.url}</h2>
        <button type="button" class="secondary" onClick={log.reload}>
          Refresh
        </button>
        <button type="button" class="secondary" onClick={() => setRecovering(true)}>
          Recover failed events
        </button>
      </div>
      <div class="filters">
        <Field label="Outcome" as="select" value={outcome} onChange={(e) => setOutcome((e.target as HTMLSelectElement).value as Outcome)}>
          <option value="">Every attempt</option>
          <option value="true">Succeeded</option>
          <option value="false">Failed</option>
        </Field>
        <Field label="Event" as="select" value={event} onChange={(e) => setEvent((e.target as HTMLSelectElement).value as DeliveredEvent | '')}>
          <option value="">Every event</option>
          {deliveredEvents.map((t) => (
            <option value={t}>{t}</option>
          ))}
        </Field>
        <Field label="Attempted since" type="datetime-local" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} />
      </div>
      <Notice message={notice} />
      <DataTable
        caption={`Delivery attempts to ${webhook.url}, newest first`}
        rows={log.data?.rows ?? null}
        rowKey={(a) => a.id}
        loading={log.loading}
        error={log.error}
        empty={outcome || event || since ? 'No attempt matches these filters.' : 'Nothing was sent to this webhook yet.'}
        columns={[
          { key: 'at', header: 'Time', cell: (a) => new Date(a.created_at).toLocaleString() },
          { key: 'event', header: 'Event', cell: (a) => a.event_type },
          { key: 'result', header: 'Result', cell: (a) => (a.success ? 'Succeeded' : 'Failed') },
          { key: 'status', header: 'Status', cell: (a) => a.response_status ?? 'No answer' },
          { key: 'kind', header: 'Sent', cell: (a) => (a.manual ? 'By an admin' : 'Automatically') },
          { key: 'duration', header: 'Duration', cell: (a) => `${a.duration_ms.toLocaleString('en')} ms` },
          {
            key: 'details',
            header: 'Details',
            cell: (a) => {
              const what = `the ${a.event_type} attempt at ${new Date(a.created_at).toLocaleString()}`;
              return (
                <span class="row-actions">
                  <button type="button" class="secondary" aria-label={`Show the payload and response of ${what}`} onClick={() => setShown(a)}>
                    Show
                  </button>
                  <button type="button" class="secondary" aria-label={`Retry the delivery of ${what}`} onClick={() => void retry(a)}>
                    Retry
                  </button>
                </span>
              );
            },
          },
        ]}
      />
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
          Newer attempts
        </button>
        <button type="button" class="secondary" disabled={!next} onClick={() => next && setCursors((c) => [...c, next])}>
          Older attempts
        </button>
      </div>
      {shown && (
        <Dialog title={`${shown.event_type} at ${new Date(shown.created_at).toLocaleString()}`} open onClose={() => setShown(null)} closeText="Close">
          <p>Delivery {shown.delivery_id} (its X-Service-Delivery header).</p>
          <h3>Payload sent</h3>
          <pre class="payload" tabIndex={0} aria-label="Payload sent">
            {JSON.stringify(shown.payload, null, 2)}
          </pre>
          <h3>Response {shown.response_status !== null ? `(HTTP ${shown.response_status})` : '(none)'}</h3>
          <pre class="payload" tabIndex={0} aria-label="Response">
            {shown.response_body || '(empty)'}
          </pre>
        </Dialog>
      )}
      {recovering && (
        <RecoverDialog
          teamId={teamId}
          webhook={webhook}
          onClose={() => setRecovering(false)}
          onQueued={(queued) => {
            setRecovering(false);
            setNotice(recoveredNotice(queued, webhook.active));
            setTimeout(log.reload, 1000);
          }}
        />
      )}
    </section>
  );
}

/** recoveredNotice says what a recovery queued; a switched-off webhook gets it once enabled. */
function recoveredNotice(queued: number, active: boolean): string {
  if (!queued) return 'No event failed since then: nothing to send again.';
  const one = queued === 1;
  const events = `${queued.toLocaleString('en')} failed ${one ? 'event is' : 'events are'}`;
  return active ? `${events} being sent again, oldest first.` : `${events} queued: ${one ? 'it is' : 'they are'} sent once the webhook is enabled.`;
}

function RecoverDialog({ teamId, webhook, onClose, onQueued }: { teamId: string; webhook: Webhook; onClose: () => void; onQueued: (queued: number) => void }) {
  const form = useForm({ since: localInput(new Date(Date.now() - 24 * 3600 * 1000)) });
  return (
    <FormDialog
      title={`Recover the failed events of ${webhook.url}`}
      submit="Recover"
      form={form}
      checks={() => ({ since: checkSince(form.values.since) })}
      send={async () => {
        const r = await ok(
          api.POST('/api/teams/{team_id}/webhooks/{webhook_id}/recover', {
            params: { path: { team_id: teamId, webhook_id: webhook.id } },
            body: { since: new Date(form.values.since).toISOString() },
          }),
        );
        onQueued(r.data.queued);
      }}
      onClose={onClose}
    >
      <p>Every event since this time whose latest attempt failed is sent once more, oldest first, in the background.</p>
      {!webhook.active && <p>The webhook is disabled: these events are kept and sent once it is enabled.</p>}
      <Field label="Since" type="datetime-local" required hint="Within the last 30 days, in your time zone." {...form.bind('since')} />
    </FormDialog>
  );
}
