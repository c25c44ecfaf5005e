// The team's audit log (admins): who did what, newest first, with filters
// by action, by member and by date, more entries on demand (the API's
// cursor), and a CSV export of what the filters select.
import { useState } from 'preact/hooks';
import { api, ok, type Member, type Schemas } from '../api/client';
import { atLeast, needs } from '../lib/roles';
import { useResource, type Resource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { Page } from '../ui/Page';

type Entry = Schemas['AuditEntry'];

const noMembers: Member[] = [];

/** actions are the recorded actions, for the filter. */
const actions = [
  'member.invited', 'member.joined', 'member.role_changed', 'member.removed', 'invitation.revoked',
  'api_key.created', 'api_key.deleted', 'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.disabled',
  'book.created', 'book.deleted', 'team.updated', 'email_settings.updated', 'addon.changed',
  'contacts.bulk_deleted', 'contacts.exported', 'import.started', 'contact.erased', 'suppression.lifted', 'security.2fa_required',
  'contact.data_exported', 'sso.updated', 'sso.deleted', 'sso.login',
];

export default function AuditLog() {
  const w = useWorkspace();
  if (!atLeast(w.role, 'admin')) {
    return (
      <Page title="Audit log">
        <p>{needs('admin')} The audit log records who did what in the team.</p>
      </Page>
    );
  }
  return <Log />;
}

function Log() {
  const w = useWorkspace();
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  // The older entries asked for, with the filters they continue.
  const [older, setOlder] = useState<{ after: string; cursor: string } | null>(null);

  const filters: Record<string, string> = {};
  if (action) filters.action = action;
  if (actor) filters.actor_id = actor;
  // Dates are days of the browser's calendar: from the start of since to the end of until.
  if (since) filters.since = new Date(`${since}T00:00:00`).toISOString();
  if (until) filters.until = new Date(new Date(`${until}T00:00:00`).getTime() + 86400000).toISOString();
  const key = JSON.stringify(filters);
  const path = { team_id: w.team.id };

  // Without the members the filter offers only "Anyone".
  const members = useResource((signal) => ok(api.GET('/api/teams/{team_id}/members', { params: { path }, signal })).then((r) => r.data), [w.team.id]).data ?? noMembers;

  // Another filter starts again from the newest entries; "Show older
  // entries" adds the next page under the ones shown.
  const after = `${w.team.id}${key}`;
  const cursor = older?.after === after ? older.cursor : null;
  const log: Resource<{ rows: Entry[]; next: string | null }> = useResource(
    async (signal) => {
      const r = await ok(api.GET('/api/teams/{team_id}/audit-log', { params: { path, query: { ...filters, ...(cursor ? { cursor } : {}) } }, signal }));
      return { rows: cursor && log.data ? [...log.data.rows, ...r.data] : r.data, next: r.meta.next_cursor ?? null };
    },
    [after, cursor],
    { keep: true },
  );
  const rows = log.data?.rows ?? null;
  const next = log.data?.next ?? null;
  const { error, loading } = log;

  const query = new URLSearchParams(filters).toString();
  const exportURL = `/api/teams/${w.team.id}/audit-log/export${query ? '?' + query : ''}`;
  return (
    <Page
      title="Audit log"
      actions={
        <a class="button secondary" href={exportURL} download>
          Export CSV
        </a>
      }
    >
      <p class="hint">Every change to the team's members, keys, webhooks, books and settings, kept for at least 400 days.</p>
      <div class="filters">
        <Field label="Action" as="select" value={action} onChange={(e) => setAction((e.target as HTMLSelectElement).value)}>
          <option value="">Any action</option>
          {actions.map((a) => (
            <option value={a}>{a}</option>
          ))}
        </Field>
        <Field label="Member" as="select" value={actor} onChange={(e) => setActor((e.target as HTMLSelectElement).value)}>
          <option value="">Anyone</option>
          {members.map((m) => (
            <option value={m.user_id}>{m.name || m.email}</option>
          ))}
        </Field>
        <Field label="From" type="date" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} />
        <Field label="To" type="date" value={until} onInput={(e) => setUntil((e.target as HTMLInputElement).value)} />
      </div>
      <DataTable<Entry>
        caption="Audit log entries, newest first"
        rows={rows}
        rowKey={(e) => e.id}
        loading={loading && rows === null}
        error={error}
        empty={key !== '{}' ? 'No entry matches.' : 'Nothing recorded yet.'}
        columns={[
          { key: 'at', header: 'When', cell: (e) => new Date(e.at).toLocaleString() },
          { key: 'actor', header: 'Who', cell: (e) => (e.actor.type === 'system' ? 'contactbook' : e.actor.type === 'api_key' ? `API key ${e.actor.name}` : e.actor.name) },
          { key: 'action', header: 'Action', cell: (e) => <code>{e.action}</code> },
          { key: 'target', header: 'Target', cell: (e) => (e.target.type ? `${e.target.type} ${e.target.id}` : '') },
          { key: 'details', header: 'Details', cell: (e) => describe(e.details) },
          { key: 'from', header: 'From', cell: (e) => e.ip },
        ]}
      />
      {next && (
        <button type="button" class="secondary" disabled={loading} onClick={() => (next === cursor ? void log.reload() : setOlder({ after, cursor: next }))}>
          Show older entries
        </button>
      )}
    </Page>
  );
}

/** describe renders an entry's details as key: value pairs. */
function describe(details: Record<string, unknown>): string {
  return Object.entries(details)
    .filter(([, v]) => v !== null && v !== '')
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(', ');
}
