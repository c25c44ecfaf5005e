// The team's webhooks (admins): create one with the events it wants and
// an optional rate limit (its signing secret shown once), edit, enable or
// disable (a webhook the service switched off shows why, and enabling it
// sends what was kept), send a test event, delete, and each one's delivery
// log (WebhookLog.tsx).
import { useState } from 'preact/hooks';
import { api, errorText, ok, type Schemas } from '../api/client';
import { checkRequired, checkURL } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { CopyField } from '../ui/CopyField';
import { DataTable } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice, Page } from '../ui/Page';
import { DeliveryLog } from './WebhookLog';

type Webhook = Schemas['Webhook'];
type EventType = Schemas['EventType'];
type EventTypeInfo = Schemas['WebhookEventTypeInfo'];
type Group = EventTypeInfo['group'];

// The editor's headings of the service's groups of event types (the
// types themselves, their groups and summaries come from the service).
const groupNames: Record<Group, string> = {
  contacts: 'Contacts',
  emails: 'Emails',
  campaigns: 'Campaigns',
  subscriptions: 'Subscriptions',
  team: 'Team',
};
const groups = Object.keys(groupNames) as Group[];

/** state says whether a webhook is on, and if the service switched it off, when and why. */
function state(h: Webhook): string {
  if (h.active) return 'Enabled';
  if (h.disabled_at) return `Switched off by the service on ${new Date(h.disabled_at).toLocaleString()}. ${h.disabled_reason ?? ''}`;
  return 'Disabled';
}

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
  // Bumped after a test send, so an open log shows its attempt.
  const [logReloads, setLogReloads] = useState(0);
  const hookPath = (h: Webhook) => ({ params: { path: { team_id: teamId, webhook_id: h.id } } });

  async function toggle(h: Webhook) {
    try {
      await ok(api.PATCH('/api/teams/{team_id}/webhooks/{webhook_id}', { ...hookPath(h), body: { active: !h.active } }));
      setNotice(
        h.active
          ? `The webhook to ${h.url} is disabled: nothing is sent to it until it is enabled.`
          : h.disabled_at
            ? `The webhook to ${h.url} is enabled: the deliveries kept while it was off are being sent, oldest first.`
            : `The webhook to ${h.url} is enabled.`,
      );
      list.reload();
    } catch (e) {
      setNotice(errorText(e));
    }
  }

  async function sendTest(h: Webhook) {
    try {
      await ok(api.POST('/api/teams/{team_id}/webhooks/{webhook_id}/test', hookPath(h)));
      setNotice(`A test event is on its way to ${h.url}; its attempt shows in the delivery log.`);
      setLogOf(h);
      setLogReloads((n) => n + 1);
    } catch (e) {
      setNotice(errorText(e));
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
      <p class="hint">Each webhook receives a signed POST (header X-Service-Signature: HMAC-SHA256 of the body with its secret) for every event it subscribes to; failed deliveries are retried with backoff, and a webhook whose deliveries keep failing for days is switched off (its admins are emailed) until it is enabled again.</p>
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
          { key: 'rate', header: 'Rate limit', cell: (h) => (h.rate_limit ? `${h.rate_limit.toLocaleString('en')} a second` : 'None') },
          { key: 'state', header: 'State', cell: (h) => state(h) },
          {
            key: 'actions',
            header: 'Actions',
            cell: (h) => (
              <span class="row-actions">
                <button type="button" class="secondary" aria-label={`Delivery log of ${h.url}`} onClick={() => setLogOf(h)}>
                  Delivery log
                </button>
                <button type="button" class="secondary" aria-label={`Send test to ${h.url}`} onClick={() => void sendTest(h)}>
                  Send test
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
      {logOf && <DeliveryLog teamId={teamId} webhook={list.rows?.find((h) => h.id === logOf.id) ?? logOf} reloads={logReloads} />}
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
  const form = useForm({ url: webhook?.url ?? '', events: (webhook?.events ?? []) as EventType[], rate_limit: webhook?.rate_limit ? String(webhook.rate_limit) : '' });
  const chosen = new Set(form.values.events);
  const types = useResource((signal) => ok(api.GET('/api/webhook-event-types', { signal })).then((r) => r.data), []);
  const toggle = (t: EventType, on: boolean) => form.set('events', on ? [...form.values.events, t] : form.values.events.filter((x) => x !== t));
  return (
    <FormDialog
      title={webhook ? `Edit the webhook to ${webhook.url}` : 'New webhook'}
      submit={webhook ? 'Save webhook' : 'Create webhook'}
      form={form}
      checks={() => ({
        url: checkRequired(form.values.url, 'the address that receives the events') || checkURL(form.values.url),
        events: form.values.events.length ? '' : 'Choose at least one event.',
        rate_limit: checkRateLimit(form.values.rate_limit),
      })}
      send={async () => {
        const rate = form.values.rate_limit.trim();
        const body = { url: form.values.url.trim(), events: form.values.events, rate_limit: rate ? Number(rate) : null };
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
      <Field
        label="Rate limit (deliveries a second)"
        type="number"
        min={1}
        max={1000}
        inputMode="numeric"
        hint="Optional, 1 to 1,000. Deliveries beyond it wait their turn rather than fail. Empty for no limit."
        {...form.bind('rate_limit')}
      />
      <fieldset aria-describedby={form.errors.events ? 'events-error' : undefined}>
        <legend>Events</legend>
        {types.loading && <p>Loading the event types…</p>}
        {types.error && (
          <p class="error" role="alert">
            {types.error}
          </p>
        )}
        {groups.map((g) => {
          const inGroup = (types.data ?? []).filter((t) => t.group === g);
          if (!inGroup.length) return null;
          return (
            <fieldset class="event-group">
              <legend>{groupNames[g]}</legend>
              {inGroup.map((t) => (
                <Field label={`${t.type}: ${t.summary}`} type="checkbox" checked={chosen.has(t.type)} onChange={(e) => toggle(t.type, (e.target as HTMLInputElement).checked)} />
              ))}
            </fieldset>
          );
        })}
        {form.errors.events && (
          <p class="error" id="events-error" role="alert">
            {form.errors.events}
          </p>
        )}
      </fieldset>
    </FormDialog>
  );
}

/** checkRateLimit accepts an empty limit (none) or a whole number from 1 to 1,000. */
function checkRateLimit(v: string): string {
  const t = v.trim();
  if (!t) return '';
  const n = Number(t);
  return Number.isInteger(n) && n >= 1 && n <= 1000 ? '' : 'Enter a whole number from 1 to 1,000, or leave it empty for no limit.';
}
