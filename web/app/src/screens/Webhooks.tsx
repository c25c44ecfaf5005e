// The team's webhooks (admins): create one with the events it wants (its
// signing secret shown once), edit, enable or disable, delete, and each
// one's delivery log (status, duration, payload and response), filtered by
// outcome.
import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client';
import { checkRequired, checkURL } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useList } from '../lib/useList';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { CopyField } from '../ui/CopyField';
import { DataTable } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice, Page } from '../ui/Page';

type Webhook = Schemas['Webhook'];
type EventType = Schemas['EventType'];
type Attempt = Schemas['DeliveryLogEntry'];

const eventNames: Record<EventType, string> = {
  'contact.created': 'A contact is created',
  'contact.updated': 'A contact changes (its fields, labels or custom values)',
  'contact.deleted': 'A contact is deleted',
  'book.created': 'A book is created',
  'book.deleted': 'A book is deleted',
  'member.joined': 'Someone joins the team',
  'member.removed': 'Someone leaves the team',
};
const eventTypes = Object.keys(eventNames) as EventType[];

export default function Webhooks() {
  const w = useWorkspace();
  if (!atLeast(w.role, 'admin')) {
    return (
      <Page title="Webhooks">
        <p>Webhooks send the team's changes to other systems as they happen. {needs('admin')}</p>
      </Page>
    );
  }
  return <Manage teamId={w.team.id} />;
}

function Manage({ teamId }: { teamId: string }) {
  const path = { params: { path: { team_id: teamId } } };
  const list = useList<Webhook>(async (signal) => {
    const r = await ok(api.GET('/api/teams/{team_id}/webhooks', { ...path, signal }));
    return { data: r.data, meta: { total: r.data.length } };
  }, teamId);
  const [editing, setEditing] = useState<Webhook | 'new' | null>(null);
  const [secret, setSecret] = useState('');
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const [logOf, setLogOf] = useState<Webhook | null>(null);
  const [notice, setNotice] = useState('');
  const hookPath = (h: Webhook) => ({ params: { path: { team_id: teamId, webhook_id: h.id } } });

  async function toggle(h: Webhook) {
    try {
      await ok(api.PATCH('/api/teams/{team_id}/webhooks/{webhook_id}', { ...hookPath(h), body: { active: !h.active } }));
      setNotice(h.active ? `The webhook to ${h.url} is disabled: nothing is sent to it until it is enabled.` : `The webhook to ${h.url} is enabled.`);
      list.reload();
    } catch (e) {
      setNotice(e instanceof Error ? e.message : String(e));
    }
  }

  return (
    <Page
      title="Webhooks"
      actions={
        <button type="button" onClick={() => setEditing('new')}>
          New webhook
        </button>
      }
    >
      <p class="hint">Each webhook receives a signed POST (header X-Service-Signature: HMAC-SHA256 of the body with its secret) for every event it subscribes to; failed deliveries are retried with backoff.</p>
      <Notice message={notice} />
      <DataTable
        caption="Webhooks of the team"
        rows={list.rows}
        rowKey={(h) => h.id}
        loading={list.loading}
        error={list.error}
        empty="No webhook yet."
        columns={[
          { key: 'url', header: 'URL', cell: (h) => <code>{h.url}</code> },
          { key: 'events', header: 'Events', cell: (h) => h.events.join(', ') },
          { key: 'state', header: 'State', cell: (h) => (h.active ? 'Enabled' : 'Disabled') },
          {
            key: 'actions',
            header: 'Actions',
            cell: (h) => (
              <span class="row-actions">
                <button type="button" class="secondary" aria-label={`Delivery log of ${h.url}`} onClick={() => setLogOf(h)}>
                  Delivery log
                </button>
                <button type="button" class="secondary" aria-label={`Edit ${h.url}`} onClick={() => setEditing(h)}>
                  Edit
                </button>
                <button type="button" class="secondary" aria-label={`${h.active ? 'Disable' : 'Enable'} ${h.url}`} onClick={() => void toggle(h)}>
                  {h.active ? 'Disable' : 'Enable'}
                </button>
                <button type="button" class="danger" aria-label={`Delete ${h.url}`} onClick={() => setDeleting(h)}>
                  Delete
                </button>
              </span>
            ),
          },
        ]}
      />
      {logOf && <DeliveryLog teamId={teamId} webhook={logOf} />}
      {editing && (
        <WebhookForm
          teamId={teamId}
          webhook={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(h, newSecret) => {
            setEditing(null);
            if (newSecret) setSecret(newSecret);
            setNotice(`The webhook to ${h.url} is saved.`);
            list.reload();
          }}
        />
      )}
      {secret && (
        <Dialog title="The webhook's signing secret" open onClose={() => setSecret('')} closeText="Done">
          <p>Copy the secret now: it is shown only once. The receiver checks each request's X-Service-Signature with it.</p>
          <CopyField label="Signing secret" value={secret} button="Copy secret" />
        </Dialog>
      )}
      {deleting && (
        <Confirm
          title={`Delete the webhook to ${deleting.url}?`}
          button="Delete webhook"
          run={() => ok(api.DELETE('/api/teams/{team_id}/webhooks/{webhook_id}', hookPath(deleting)))}
          onClose={() => setDeleting(null)}
          onDone={() => {
            setNotice(`The webhook to ${deleting.url} was deleted.`);
            if (logOf?.id === deleting.id) setLogOf(null);
            setDeleting(null);
            list.reload();
          }}
        >
          <p>Nothing more is sent to it, deliveries waiting for a retry included, and its delivery log goes with it.</p>
        </Confirm>
      )}
    </Page>
  );
}

function WebhookForm({ teamId, webhook, onClose, onSaved }: { teamId: string; webhook: Webhook | null; onClose: () => void; onSaved: (h: Webhook, secret?: string) => void }) {
  const form = useForm({ url: webhook?.url ?? '', events: (webhook?.events ?? []) as EventType[] });
  const chosen = new Set(form.values.events);
  return (
    <FormDialog
      title={webhook ? `Edit the webhook to ${webhook.url}` : 'New webhook'}
      submit={webhook ? 'Save webhook' : 'Create webhook'}
      form={form}
      checks={() => ({
        url: checkRequired(form.values.url, 'the address that receives the events') || checkURL(form.values.url),
        events: form.values.events.length ? '' : 'Choose at least one event.',
      })}
      send={async () => {
        const body = { url: form.values.url.trim(), events: form.values.events };
        if (webhook) {
          const r = await ok(api.PATCH('/api/teams/{team_id}/webhooks/{webhook_id}', { params: { path: { team_id: teamId, webhook_id: webhook.id } }, body }));
          onSaved(r.data);
        } else {
          const r = await ok(api.POST('/api/teams/{team_id}/webhooks', { params: { path: { team_id: teamId } }, body }));
          onSaved(r.data.webhook, r.data.secret);
        }
      }}
      onClose={onClose}
    >
      <Field label="URL" type="url" required hint="An https:// address of a public host. A user:password@ in it is sent as Basic authentication." {...form.bind('url')} />
      <fieldset aria-describedby={form.errors.events ? 'events-error' : undefined}>
        <legend>Events</legend>
        {eventTypes.map((t) => (
          <Field
            label={`${t}: ${eventNames[t]}`}
            type="checkbox"
            checked={chosen.has(t)}
            onChange={(e) => {
              const on = (e.target as HTMLInputElement).checked;
              form.set('events', on ? [...form.values.events, t] : form.values.events.filter((x) => x !== t));
            }}
          />
        ))}
        {form.errors.events && (
          <p class="error" id="events-error" role="alert">
            {form.errors.events}
          </p>
        )}
      </fieldset>
    </FormDialog>
  );
}

type Outcome = '' | 'true' | 'false';

function DeliveryLog({ teamId, webhook }: { teamId: string; webhook: Webhook }) {
  const [outcome, setOutcome] = useState<Outcome>('');
  const [shown, setShown] = useState<Attempt | null>(null);
  const log = useList<Attempt>(async (signal) => {
    const r = await ok(
      api.GET('/api/teams/{team_id}/webhooks/{webhook_id}/deliveries', {
        params: { path: { team_id: teamId, webhook_id: webhook.id }, query: { limit: 200, success: outcome === '' ? undefined : outcome === 'true' } },
        signal,
      }),
    );
    return { data: r.data, meta: { total: r.data.length } };
  }, `${webhook.id}/${outcome}`);
  return (
    <section aria-labelledby="delivery-log">
      <div class="section-head">
        <h2 id="delivery-log">Delivery log of {webhook.url}</h2>
        <Field label="Outcome" as="select" value={outcome} onChange={(e) => setOutcome((e.target as HTMLSelectElement).value as Outcome)}>
          <option value="">Every attempt</option>
          <option value="true">Succeeded</option>
          <option value="false">Failed</option>
        </Field>
        <button type="button" class="secondary" onClick={log.reload}>
          Refresh
        </button>
      </div>
      <DataTable
        caption={`Delivery attempts to ${webhook.url}, newest first`}
        rows={log.rows}
        rowKey={(a) => a.id}
        loading={log.loading}
        error={log.error}
        empty={outcome ? 'No attempt with this outcome among the latest 200.' : 'Nothing was sent to this webhook yet.'}
        columns={[
          { key: 'at', header: 'Time', cell: (a) => new Date(a.created_at).toLocaleString() },
          { key: 'event', header: 'Event', cell: (a) => a.event_type },
          { key: 'result', header: 'Result', cell: (a) => (a.success ? 'Succeeded' : 'Failed') },
          { key: 'status', header: 'Status', cell: (a) => a.response_status ?? 'No answer' },
          { key: 'duration', header: 'Duration', cell: (a) => `${a.duration_ms.toLocaleString('en')} ms` },
          {
            key: 'details',
            header: 'Details',
            cell: (a) => (
              <button type="button" class="secondary" aria-label={`Show the payload and response of the ${a.event_type} attempt at ${new Date(a.created_at).toLocaleString()}`} onClick={() => setShown(a)}>
                Show
              </button>
            ),
          },
        ]}
      />
      {shown && (
        <Dialog title={`${shown.event_type} at ${new Date(shown.created_at).toLocaleString()}`} open onClose={() => setShown(null)} closeText="Close">
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
    </section>
  );
}
