// The team's audit log (admins): who did what, newest first, with filters
// by action, by member and by date, more entries on demand (the API's
// cursor), and a CSV export of what the filters select.
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, isAbort, ok, type Member, type Schemas } from '../api/client';
import { atLeast, needs } from '../lib/roles';
import { useWorkspace } from '../lib/workspace';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { Page } from '../ui/Page';

type Entry = Schemas['AuditEntry'];

/** actions are the recorded actions, for the filter. */
const actions = [
  'member.invited', 'member.joined', 'member.role_changed', 'member.removed', 'invitation.revoked',
  'api_key.created', 'api_key.deleted', 'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.disabled',
  'book.created', 'book.deleted', 'team.updated', 'email_settings.updated', 'addon.changed',
  'contacts.bulk_deleted', 'contacts.exported', 'import.started', 'contact.erased', 'suppression.lifted', 'security.2fa_required',
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
  const [members, setMembers] = useState<Member[]>([]);
  const [rows, setRows] = useState<Entry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);

  const filters: Record<string, string> = {};
  if (action) filters.action = action;
  if (actor) filters.actor_id = actor;
  // Dates are days of the browser's calendar: from the start of since to the end of until.
  if (since) filters.since = new Date(`${since}T00:00:00`).toISOString();
  if (until) filters.until = new Date(new Date(`${until}T00:00:00`).getTime() + 86400000).toISOString();
  const key = JSON.stringify(filters);
  const path = { team_id: w.team.id };

  useEffect(() => {
    ok(api.GET('/api/teams/{team_id}/members', { params: { path } }))
      .then((r) => setMembers(r.data))
      .catch(() => setMembers([]));
  }, [w.team.id]);

  const load = async (cursor: string | null, signal?: AbortSignal) => {
    setLoading(true);
    setError('');
    try {
      const r = await ok(api.GET('/api/teams/{team_id}/audit-log', { params: { path, query: { ...filters, ...(cursor ? { cursor } : {}) } }, signal }));
      setRows((old) => (cursor && old ? [...old, ...r.data] : r.data));
      setNext(r.meta.next_cursor ?? null);
    } catch (e) {
      if (isAbort(e)) return;
      setError(errorText(e));
    }
    setLoading(false);
  };
  useEffect(() => {
    const abort = new AbortController();
    void load(null, abort.signal);
    return () => abort.abort();
  }, [key, w.team.id]);

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
        <button type="button" class="secondary" disabled={loading} onClick={() => void load(next)}>
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
