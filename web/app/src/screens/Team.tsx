// The team: its name and Campaigns add-on state (Billing manages it), its members and their roles,
// invitations (send, resend, revoke), and its API keys (a new key is shown
// once, with a copy button).
import { useState } from 'preact/hooks';
import { api, errorText, ok, type ApiKey, type Invitation, type Member, type Role, type Schemas } from '../api/client';
import { checkEmail, checkRequired } from '../lib/form';
import { atLeast, needs, roleNames, roles } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { addonNames } from '../lib/addon';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { CopyField } from '../ui/CopyField';
import { Dialog } from '../ui/Dialog';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice, Page } from '../ui/Page';

export default function Team() {
  const w = useWorkspace();
  const [notice, setNotice] = useState('');
  const isAdmin = atLeast(w.role, 'admin');
  return (
    <Page title={`Team ${w.team.name}`}>
      <Notice message={notice} />
      <TeamSettings onNotice={setNotice} />
      <Members onNotice={setNotice} />
      <h2>Invitations</h2>
      {isAdmin ? <Invitations onNotice={setNotice} /> : <p>{needs('admin')} Invitations bring new people into the team.</p>}
      <h2>API keys</h2>
      {isAdmin ? <ApiKeys onNotice={setNotice} /> : <p>{needs('admin')} API keys let programs use the API on the team's behalf.</p>}
      <h2>Single sign-on</h2>
      {w.role === 'owner' ? (
        <p>
          <a href="/app/team/sso">Single sign-on settings</a>: sign in through the team's identity provider (OpenID Connect).
        </p>
      ) : (
        <p>{needs('owner')} Single sign-on lets the team sign in through its identity provider.</p>
      )}
    </Page>
  );
}


function TeamSettings({ onNotice }: { onNotice: (m: string) => void }) {
  const w = useWorkspace();
  const [renaming, setRenaming] = useState(false);
  const isAdmin = atLeast(w.role, 'admin');
  const path = { params: { path: { team_id: w.team.id } } };
  const { data: team, error, set: setTeam } = useResource((signal) => ok(api.GET('/api/teams/{team_id}', { ...path, signal })).then((r) => r.data), [w.team.id]);
  const [requiringUnprotected, setRequiringUnprotected] = useState(false);
  const requireTwoFactor = async (on: boolean) => {
    const r = await ok(api.PATCH('/api/teams/{team_id}', { ...path, body: { require_two_factor: on } }));
    onNotice(on ? 'Two-factor sign-in is now required of every member.' : 'Two-factor sign-in is no longer required.');
    return r.data;
  };
  if (error) return <p role="alert">{error}</p>;
  if (!team) return <p>Loading…</p>;
  return (
    <>
      <dl class="facts">
        <div>
          <dt>Name</dt>
          <dd>
            {team.name}{' '}
            {isAdmin && (
              <button type="button" class="link" onClick={() => setRenaming(true)}>
                Rename team
              </button>
            )}
          </dd>
        </div>
        <div>
          <dt>Campaigns add-on</dt>
          <dd>
            {addonNames[team.campaign_addon]}
            {team.campaign_addon === 'trial' && team.trial_ends_at && ` until ${new Date(team.trial_ends_at).toLocaleDateString()}`}{' '}
            <a href="/app/billing">Billing</a>
          </dd>
        </div>
        <div>
          <dt>Your role</dt>
          <dd>{roleNames[w.role]}</dd>
        </div>
        <div>
          <dt>Two-factor sign-in</dt>
          <dd>
            {team.require_two_factor ? 'Required of every member' : 'Each member chooses'}{' '}
            {w.role === 'owner' && (
              <button
                type="button"
                class="link"
                onClick={async () => {
                  onNotice('');
                  // Requiring it without having it keeps the owner out too,
                  // until they turn it on: said before, not found after.
                  if (!team.require_two_factor && !w.user.two_factor_enabled) {
                    setRequiringUnprotected(true);
                    return;
                  }
                  try {
                    const r = await requireTwoFactor(!team.require_two_factor);
                    setTeam(r);
                  } catch (e) {
                    onNotice(errorText(e));
                  }
                }}
              >
                {team.require_two_factor ? 'Stop requiring it' : 'Require two-factor sign-in'}
              </button>
            )}
          </dd>
        </div>
      </dl>
      {requiringUnprotected && (
        <Confirm
          title="Require two-factor sign-in of everyone, you included?"
          button="Require it"
          run={() => requireTwoFactor(true).then(setTeam)}
          onClose={() => setRequiringUnprotected(false)}
          onDone={() => {
            setRequiringUnprotected(false);
            void w.reloadBooks();
          }}
        >
          <p>
            You have not turned on two-factor sign-in yourself. Once it is required, you too are kept out of the team's books until you turn it
            on under <a href="/app/security">Security</a>.
          </p>
        </Confirm>
      )}
      {renaming && (
        <RenameTeam
          name={team.name}
          onClose={() => setRenaming(false)}
          onSaved={(t) => {
            setTeam(t);
            setRenaming(false);
            onNotice('Team renamed.');
            void w.reloadMe();
          }}
        />
      )}
    </>
  );
}

function RenameTeam({ name, onClose, onSaved }: { name: string; onClose: () => void; onSaved: (t: Schemas['Team']) => void }) {
  const w = useWorkspace();
  const f = useForm({ name });
  return (
    <FormDialog
      title="Rename team"
      submit="Save name"
      form={f}
      checks={() => ({ name: checkRequired(f.values.name, 'a name') })}
      send={async () => onSaved((await ok(api.PATCH('/api/teams/{team_id}', { params: { path: { team_id: w.team.id } }, body: f.values }))).data)}
      onClose={onClose}
    >
      <Field label="Team name" required {...f.bind('name')} />
    </FormDialog>
  );
}

function Members({ onNotice }: { onNotice: (m: string) => void }) {
  const w = useWorkspace();
  const [removing, setRemoving] = useState<Member | null>(null);
  const isAdmin = atLeast(w.role, 'admin');
  const path = (user_id: string) => ({ params: { path: { team_id: w.team.id, user_id } } });
  const { data: members, error, reload: load } = useResource(
    (signal) => ok(api.GET('/api/teams/{team_id}/members', { params: { path: { team_id: w.team.id } }, signal })).then((r) => r.data),
    [w.team.id],
  );
  // Only owners hand out (or take away) the owner role.
  const assignable = (m: Member) => isAdmin && (w.role === 'owner' || m.role !== 'owner');
  return (
    <>
      <h2>Members</h2>
      <DataTable<Member>
        caption="Members of the team"
        rows={members}
        error={error}
        rowKey={(m) => m.user_id}
        empty="No members."
        columns={[
          { key: 'name', header: 'Name', cell: (m) => (m.user_id === w.user.id ? `${m.name} (you)` : m.name) },
          { key: 'email', header: 'Email', cell: (m) => m.email },
          {
            key: 'role',
            header: 'Role',
            cell: (m) =>
              assignable(m) ? (
                <select
                  aria-label={`Role of ${m.name}`}
                  value={m.role}
                  onChange={async (e) => {
                    const role = (e.target as HTMLSelectElement).value as Role;
                    try {
                      await ok(api.PATCH('/api/teams/{team_id}/members/{user_id}', { ...path(m.user_id), body: { role } }));
                      onNotice(`${m.name} is now ${roleNames[role].toLowerCase()}.`);
                      if (m.user_id === w.user.id) void w.reloadMe();
                    } catch (err) {
                      onNotice(errorText(err));
                    }
                    void load();
                  }}
                >
                  <RoleOptions />
                </select>
              ) : (
                roleNames[m.role]
              ),
          },
          { key: 'joined', header: 'Joined', cell: (m) => new Date(m.joined_at).toLocaleDateString() },
          ...(isAdmin
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  cell: (m: Member) =>
                    assignable(m) && (
                      <button type="button" class="link danger" onClick={() => setRemoving(m)}>
                        Remove<span class="visually-hidden"> {m.name}</span>
                      </button>
                    ),
                },
              ]
            : []),
        ]}
      />
      {removing && (
        <Confirm
          title={removing.user_id === w.user.id ? 'Leave the team?' : `Remove ${removing.name}?`}
          button={removing.user_id === w.user.id ? 'Leave team' : 'Remove member'}
          run={() => ok(api.DELETE('/api/teams/{team_id}/members/{user_id}', path(removing.user_id)))}
          onClose={() => setRemoving(null)}
          onDone={() => {
            onNotice(`${removing.name} was removed from the team.`);
            setRemoving(null);
            if (removing.user_id === w.user.id) void w.reloadMe();
            else void load();
          }}
        >
          <p>{removing.name} loses access to the team's books and contacts at once.</p>
        </Confirm>
      )}
    </>
  );
}

/** RoleOptions are the roles the signed-in person may hand out: only owners make owners. */
function RoleOptions() {
  const w = useWorkspace();
  return (
    <>
      {roles
        .filter((r) => r !== 'owner' || w.role === 'owner')
        .map((r) => (
          <option value={r}>{roleNames[r]}</option>
        ))}
    </>
  );
}

function Invitations({ onNotice }: { onNotice: (m: string) => void }) {
  const w = useWorkspace();
  const [inviting, setInviting] = useState(false);
  const [revoking, setRevoking] = useState<Invitation | null>(null);
  const path = { params: { path: { team_id: w.team.id } } };
  const { data: invitations, error, reload: load } = useResource((signal) => ok(api.GET('/api/teams/{team_id}/invitations', { ...path, signal })).then((r) => r.data), [w.team.id]);
  const send = async (email: string, role: Role) => {
    await ok(api.POST('/api/teams/{team_id}/invitations', { ...path, body: { email, role } }));
    void load();
  };
  return (
    <>
      <button type="button" onClick={() => setInviting(true)}>
        Invite someone
      </button>
      <DataTable<Invitation>
        caption="Pending invitations"
        rows={invitations}
        error={error}
        rowKey={(i) => i.id}
        empty="No pending invitations."
        columns={[
          { key: 'email', header: 'Email', cell: (i) => i.email },
          { key: 'role', header: 'Role', cell: (i) => roleNames[i.role] },
          { key: 'sent', header: 'Sent', cell: (i) => new Date(i.created_at).toLocaleString() },
          { key: 'expires', header: 'Expires', cell: (i) => new Date(i.expires_at).toLocaleDateString() },
          {
            key: 'actions',
            header: 'Actions',
            cell: (i) => (
              <>
                {/* Re-inviting needs the right to invite with that role: only owners resend an owner's invitation. */}
                {(i.role !== 'owner' || w.role === 'owner') && (
                  <button
                    type="button"
                    class="link"
                    onClick={async () => {
                      try {
                        await send(i.email, i.role);
                        onNotice(`A new invitation went to ${i.email}; the earlier link no longer works.`);
                      } catch (e) {
                        onNotice(errorText(e));
                      }
                    }}
                  >
                    Resend<span class="visually-hidden"> to {i.email}</span>
                  </button>
                )}{' '}
                <button type="button" class="link danger" onClick={() => setRevoking(i)}>
                  Revoke<span class="visually-hidden"> invitation of {i.email}</span>
                </button>
              </>
            ),
          },
        ]}
      />
      {inviting && (
        <Invite
          onClose={() => setInviting(false)}
          send={send}
          onSent={(email) => {
            setInviting(false);
            onNotice(`Invitation sent to ${email}.`);
          }}
        />
      )}
      {revoking && (
        <Confirm
          title={`Revoke the invitation of ${revoking.email}?`}
          button="Revoke invitation"
          run={() => ok(api.DELETE('/api/teams/{team_id}/invitations/{id}', { params: { path: { team_id: w.team.id, id: revoking.id } } }))}
          onClose={() => setRevoking(null)}
          onDone={() => {
            onNotice(`The invitation of ${revoking.email} was revoked.`);
            setRevoking(null);
            void load();
          }}
        >
          <p>The link in the email stops working at once.</p>
        </Confirm>
      )}
    </>
  );
}

function Invite({ onClose, send, onSent }: { onClose: () => void; send: (email: string, role: Role) => Promise<void>; onSent: (email: string) => void }) {
  const f = useForm({ email: '', role: 'member' as Role });
  return (
    <FormDialog
      title="Invite someone"
      submit="Send invitation"
      form={f}
      checks={() => ({ email: checkEmail(f.values.email) })}
      send={async () => {
        const email = f.values.email.trim();
        await send(email, f.values.role);
        onSent(email);
      }}
      onClose={onClose}
    >
      <Field label="Email" type="email" autocomplete="off" required hint="The link in the email is valid for 7 days." {...f.bind('email')} />
      <Field label="Role" as="select" {...f.bind('role')}>
        <RoleOptions />
      </Field>
    </FormDialog>
  );
}

function ApiKeys({ onNotice }: { onNotice: (m: string) => void }) {
  const w = useWorkspace();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const path = { params: { path: { team_id: w.team.id } } };
  const { data: keys, error, reload: load } = useResource((signal) => ok(api.GET('/api/teams/{team_id}/api-keys', { ...path, signal })).then((r) => r.data), [w.team.id]);
  return (
    <>
      <button type="button" onClick={() => setCreating(true)}>
        New API key
      </button>
      <DataTable<ApiKey>
        caption="API keys of the team"
        rows={keys}
        error={error}
        rowKey={(k) => k.id}
        empty="No API keys yet."
        columns={[
          { key: 'name', header: 'Name', cell: (k) => k.name },
          { key: 'prefix', header: 'Starts with', cell: (k) => <code>{k.prefix}…</code> },
          { key: 'created', header: 'Created', cell: (k) => new Date(k.created_at).toLocaleDateString() },
          { key: 'used', header: 'Last used', cell: (k) => (k.last_used_at ? new Date(k.last_used_at).toLocaleString() : 'Never') },
          { key: 'scope', header: 'Scope', cell: (k) => scopeNames[k.scope] },
          { key: 'expires', header: 'Expires', cell: (k) => (k.expires_at ? expiry(k.expires_at) : 'Never') },
          {
            key: 'actions',
            header: 'Actions',
            cell: (k) => (
              <button type="button" class="link danger" onClick={() => setRevoking(k)}>
                Revoke<span class="visually-hidden"> {k.name}</span>
              </button>
            ),
          },
        ]}
      />
      {creating && (
        <NewKey
          onClose={() => setCreating(false)}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
            void load();
          }}
        />
      )}
      {created && <ShowKey secret={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <Confirm
          title={`Revoke ${revoking.name}?`}
          button="Revoke key"
          run={() => ok(api.DELETE('/api/teams/{team_id}/api-keys/{key_id}', { params: { path: { team_id: w.team.id, key_id: revoking.id } } }))}
          onClose={() => setRevoking(null)}
          onDone={() => {
            onNotice(`The key ${revoking.name} was revoked.`);
            setRevoking(null);
            void load();
          }}
        >
          <p>Programs using this key are refused from now on.</p>
        </Confirm>
      )}
    </>
  );
}

const scopeNames: Record<ApiKey['scope'], string> = { full: 'Read and write', read: 'Read only' };

/** expiry says when a key expires, or that it has. */
function expiry(at: string): string {
  const d = new Date(at);
  return d.getTime() <= Date.now() ? `Expired ${d.toLocaleDateString()}` : d.toLocaleDateString();
}

function NewKey({ onClose, onCreated }: { onClose: () => void; onCreated: (key: string) => void }) {
  const w = useWorkspace();
  const f = useForm({ name: '', scope: 'full' as ApiKey['scope'], expires_on: '' });
  return (
    <FormDialog
      title="New API key"
      submit="Create key"
      form={f}
      checks={() => ({
        name: checkRequired(f.values.name, 'a name that says where the key is used'),
        expires_on: f.values.expires_on && new Date(`${f.values.expires_on}T00:00:00`).getTime() <= Date.now() ? 'Pick a day after today.' : '',
      })}
      send={async () => {
        // The key works until the start of the chosen day, in the browser's time zone.
        const expires_at = f.values.expires_on ? new Date(`${f.values.expires_on}T00:00:00`).toISOString() : null;
        const body = { name: f.values.name, scope: f.values.scope, expires_at };
        onCreated((await ok(api.POST('/api/teams/{team_id}/api-keys', { params: { path: { team_id: w.team.id } }, body }))).data.key);
      }}
      onClose={onClose}
    >
      <Field label="Key name" required hint="Where the key is used, e.g. CRM sync." {...f.bind('name')} />
      <Field label="Scope" as="select" value={f.values.scope} onChange={(e) => f.set('scope', (e.target as HTMLSelectElement).value as ApiKey['scope'])}>
        <option value="full">{scopeNames.full}</option>
        <option value="read">{scopeNames.read}</option>
      </Field>
      <Field label="Expires on" type="date" hint="Leave empty for a key that does not expire." {...f.bind('expires_on')} />
    </FormDialog>
  );
}

function ShowKey({ secret, onClose }: { secret: string; onClose: () => void }) {
  return (
    <Dialog title="Your new API key" open onClose={onClose} closeText="Done">
      <p>Copy the key now: it is shown only once. Programs send it as a Bearer token to /api/v1.</p>
      <CopyField label="API key" value={secret} button="Copy key" />
    </Dialog>
  );
}
