// The team's single sign-on (OpenID Connect): the redirect URI to register
// with the identity provider, then the provider's issuer and client, the
// email domains it signs in, the roles it gives, and whether the team
// admits nobody else (owners excepted). Owners only.
import { useState } from 'preact/hooks';
import { api, ApiError, ok, type Schemas } from '../api/client';
import { checkRequired } from '../lib/form';
import { needs } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { CopyField } from '../ui/CopyField';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { Notice, Page } from '../ui/Page';

type Settings = Schemas['SSOSettings'];

/** callbackPath is where providers send people back (the answers' redirect_uri once saved). */
const callbackPath = '/api/auth/sso/callback';

export default function TeamSSO() {
  const w = useWorkspace();
  if (w.role !== 'owner') {
    return (
      <Page title="Single sign-on">
        <p>{needs('owner')} Single sign-on lets the team sign in through its identity provider.</p>
      </Page>
    );
  }
  return <Editor />;
}

/** roleMapText writes a role map one "group = role" a line; parseRoleMap reads it back. */
function roleMapText(m: Record<string, string> | undefined): string {
  return Object.entries(m ?? {})
    .map(([g, r]) => `${g} = ${r}`)
    .join('\n');
}

function parseRoleMap(text: string): Record<string, 'viewer' | 'member' | 'admin'> {
  const out: Record<string, 'viewer' | 'member' | 'admin'> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const at = line.lastIndexOf('=');
    out[(at < 0 ? line : line.slice(0, at)).trim()] = (at < 0 ? '' : line.slice(at + 1).trim()) as 'viewer' | 'member' | 'admin';
  }
  return out;
}

function Editor() {
  const w = useWorkspace();
  const path = { params: { path: { team_id: w.team.id } } };
  const [notice, setNotice] = useState('');
  const [deleting, setDeleting] = useState(false);
  const found = useResource<Settings | null>(
    (signal) =>
      ok(api.GET('/api/teams/{team_id}/sso', { ...path, signal }))
        .then((r) => r.data)
        .catch((e) => {
          if (e instanceof ApiError && e.status === 404) return null;
          throw e;
        }),
    [w.team.id],
  );
  if (found.error) return <Page title="Single sign-on"><p role="alert">{found.error}</p></Page>;
  if (found.loading && found.data === null) return <Page title="Single sign-on"><p>Loading…</p></Page>;
  const saved = found.data;
  return (
    <Page title="Single sign-on">
      <Notice message={notice} />
      <p>
        People of the team sign in through your identity provider (Okta, Entra ID, Google Workspace, Keycloak, Authentik, any OpenID Connect
        provider). Register a web application there with this redirect URI, then enter what the provider gives you.
      </p>
      <CopyField label="Redirect URI" value={saved?.redirect_uri ?? `${window.location.origin}${callbackPath}`} button="Copy the redirect URI" />
      <Settings
        key={saved?.updated_at ?? 'new'}
        saved={saved}
        onSaved={(s) => {
          found.set(s);
          setNotice('Single sign-on settings saved.');
        }}
      />
      {saved && (
        <p>
          <button type="button" class="danger" onClick={() => setDeleting(true)}>
            Turn single sign-on off
          </button>
        </p>
      )}
      {deleting && (
        <Confirm
          title="Turn single sign-on off?"
          button="Turn it off"
          run={() => ok(api.DELETE('/api/teams/{team_id}/sso', path))}
          onClose={() => setDeleting(false)}
          onDone={() => {
            setDeleting(false);
            found.set(null);
            setNotice('Single sign-on is off. People who signed in through it keep their accounts; without a password they set one with "Forgot your password?".');
          }}
        >
          <p>Nobody can sign in through the identity provider any more, and password logins work again for everyone.</p>
        </Confirm>
      )}
    </Page>
  );
}

function Settings({ saved, onSaved }: { saved: Settings | null; onSaved: (s: Settings) => void }) {
  const w = useWorkspace();
  const f = useForm({
    issuer: saved?.issuer ?? '',
    client_id: saved?.client_id ?? '',
    client_secret: saved?.client_secret ?? '',
    allowed_domains: (saved?.allowed_domains ?? []).join(', '),
    default_role: saved?.default_role ?? 'member',
    groups_claim: saved?.groups_claim ?? '',
    role_map: roleMapText(saved?.role_map),
    enforce: saved?.enforce ?? false,
  });
  return (
    <Form
      form={f}
      submit="Save single sign-on"
      checks={() => ({
        issuer: checkRequired(f.values.issuer, "the provider's issuer URL"),
        client_id: checkRequired(f.values.client_id, 'the client ID'),
        client_secret: saved ? '' : checkRequired(f.values.client_secret, 'the client secret'),
        allowed_domains: checkRequired(f.values.allowed_domains, 'at least one email domain'),
      })}
      send={async () => {
        const r = await ok(
          api.PUT('/api/teams/{team_id}/sso', {
            params: { path: { team_id: w.team.id } },
            body: {
              issuer: f.values.issuer.trim(),
              client_id: f.values.client_id.trim(),
              client_secret: f.values.client_secret,
              allowed_domains: f.values.allowed_domains.split(/[\s,]+/).filter(Boolean),
              default_role: f.values.default_role as 'viewer' | 'member',
              groups_claim: f.values.groups_claim.trim(),
              role_map: parseRoleMap(f.values.role_map),
              enforce: f.values.enforce,
            },
          }),
        );
        onSaved(r.data);
      }}
    >
      <Field label="Issuer URL" type="url" required hint="For example https://login.example.com/realms/acme; checked against its discovery document on save." {...f.bind('issuer')} />
      <Field label="Client ID" required {...f.bind('client_id')} />
      <Field
        label="Client secret"
        type="password"
        autocomplete="off"
        required={!saved}
        hint={saved ? 'Stored encrypted; leave as is to keep it.' : 'Stored encrypted, never shown again.'}
        {...f.bind('client_secret')}
      />
      <Field label="Email domains" required hint="Comma-separated, e.g. acme.com, acme.co.uk: addresses on them sign in here." {...f.bind('allowed_domains')} />
      <Field label="Default role" as="select" hint="The role of people whose groups give none." {...f.bind('default_role')}>
        <option value="viewer">Viewer</option>
        <option value="member">Member</option>
      </Field>
      <Field label="Groups claim" hint="The ID token claim listing a person's groups, often groups. Needed for a role map." {...f.bind('groups_claim')} />
      <Field
        label="Role map"
        as="textarea"
        rows={4}
        hint="One group a line: group = viewer, member or admin. The highest role wins, at every sign-in; owners keep theirs."
        {...f.bind('role_map')}
      />
      <Field
        label="Require single sign-on"
        type="checkbox"
        checked={f.values.enforce}
        onChange={(e) => f.set('enforce', (e.target as HTMLInputElement).checked)}
        hint="Password sessions are then refused the team's data, except owners' (so you can repair these settings). API keys keep working."
      />
    </Form>
  );
}
