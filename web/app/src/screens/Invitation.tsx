// Accepting an invitation from its emailed link: who invites whom to which
// team with which role, then joining with the invited address's account
// (logging in as it, or creating it from the invitation).
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, errorText, logOut, ok, type Schemas } from '../api/client';
import { cookieSession, signedIn, started } from '../api/session';
import { checkPassword, checkRequired } from '../lib/form';
import { roleNames } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { chooseTeam } from '../lib/workspace';
import { Field, FormError } from '../ui/Field';
import { Form } from '../ui/Form';
import { Page } from '../ui/Page';

type Invite = Schemas['InvitationView'];

export default function AcceptInvitation() {
  const { query } = useLocation();
  const token = query.token ?? '';
  // Read by POST: the token stays out of every logged URL.
  const found = useResource<Invite>((signal) => ok(api.POST('/api/invitations/lookup', { body: { token }, signal })).then((r) => r.data), [token], {
    enabled: !!token,
  });
  const invite = found.data;
  const gone = !token || (found.failure instanceof ApiError && found.failure.status === 404);
  const error = gone ? '' : found.error;
  // The address of the account this browser is logged in as, if any.
  const who = useResource((signal) => (signedIn() ? ok(api.GET('/api/me', { signal })).then((r) => r.data.user.email) : Promise.resolve(null)), [token]);
  const me = who.error ? null : who.data;

  if (gone) {
    return (
      <Page title="This invitation no longer works" narrow>
        <p role="alert">
          The link is unknown, already used, revoked, replaced by a newer invitation, or more than 7 days old. Ask the person who invited you to send a
          new one.
        </p>
        <p>
          <a href="/app/login">Log in</a> or <a href="/app/signup">create an account</a>
        </p>
      </Page>
    );
  }
  if (error) {
    return (
      <Page title="Join a team" narrow>
        <p role="alert">{error}</p>
      </Page>
    );
  }
  if (!invite) {
    return (
      <Page title="Join a team" narrow>
        <p>Loading…</p>
      </Page>
    );
  }
  const mine = me !== null && me.toLowerCase() === invite.email.toLowerCase();
  return (
    <Page title={`Join ${invite.team.name}`} narrow>
      <dl class="facts">
        <div>
          <dt>Team</dt>
          <dd>{invite.team.name}</dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>{roleNames[invite.role]}</dd>
        </div>
        <div>
          <dt>Invited address</dt>
          <dd>{invite.email}</dd>
        </div>
        <div>
          <dt>Valid until</dt>
          <dd>{new Date(invite.expires_at).toLocaleString()}</dd>
        </div>
      </dl>
      {mine ? (
        <JoinAsMe token={token} invite={invite} />
      ) : me !== null ? (
        <OtherAccount me={me} invite={invite} onLoggedOut={() => who.set(null)} />
      ) : invite.account_exists ? (
        <LogInAndJoin token={token} invite={invite} />
      ) : (
        <CreateAndJoin token={token} invite={invite} />
      )}
    </Page>
  );
}

/** useJoined opens the team just joined. */
function useJoined() {
  const { route } = useLocation();
  return (team: string) => {
    chooseTeam(team);
    started();
    route('/app/', true);
  };
}

function accept(body: { token: string; name?: string; password?: string }) {
  return ok(api.POST('/api/invitations/accept', { params: cookieSession, body }));
}

function JoinAsMe({ token, invite }: { token: string; invite: Invite }) {
  const joined = useJoined();
  const f = useForm({});
  return (
    <Form form={f} submit={<>Join {invite.team.name}</>} send={async () => joined((await accept({ token })).data.team.id)}>
      <p>You are logged in as {invite.email}.</p>
    </Form>
  );
}

function OtherAccount({ me, invite, onLoggedOut }: { me: string; invite: Invite; onLoggedOut: () => void }) {
  const [error, setError] = useState('');
  return (
    <>
      <p>
        You are logged in as {me}, but the invitation is for {invite.email}. Log out, then accept it as {invite.email}.
      </p>
      <FormError message={error} />
      <button
        type="button"
        onClick={async () => {
          try {
            await logOut();
            onLoggedOut();
          } catch (e) {
            setError(errorText(e));
          }
        }}
      >
        Log out
      </button>
    </>
  );
}

function LogInAndJoin({ token, invite }: { token: string; invite: Invite }) {
  const joined = useJoined();
  const f = useForm({ password: '' });
  return (
    <>
      <Form
        form={f}
        submit="Log in and join"
        checks={() => ({ password: f.values.password ? '' : 'Enter your password.' })}
        send={async () => {
          try {
            await ok(api.POST('/api/auth/login', { params: cookieSession, body: { email: invite.email, password: f.values.password } }));
          } catch (err) {
            if (err instanceof ApiError && err.status === 401) err.field = 'password';
            throw err;
          }
          joined((await accept({ token })).data.team.id);
        }}
      >
        <p>{invite.email} already has an account: log in as it to join.</p>
        <Field label="Email" type="email" autocomplete="username" value={invite.email} readOnly />
        <Field label="Password" type="password" autocomplete="current-password" required {...f.bind('password')} />
      </Form>
      <p>
        <a href="/app/forgot-password">Forgot your password?</a>
      </p>
    </>
  );
}

function CreateAndJoin({ token, invite }: { token: string; invite: Invite }) {
  const joined = useJoined();
  const f = useForm({ name: '', password: '' });
  return (
    <Form
      form={f}
      submit="Create account and join"
      checks={() => ({ name: checkRequired(f.values.name, 'your name'), password: checkPassword(f.values.password) })}
      send={async () => joined((await accept({ token, ...f.values })).data.team.id)}
    >
      <p>Create the account of {invite.email} to join.</p>
      <Field label="Email" type="email" autocomplete="username" value={invite.email} readOnly />
      <Field label="Name" autocomplete="name" required {...f.bind('name')} />
      <Field label="Password" type="password" autocomplete="new-password" required hint="8 to 72 characters." {...f.bind('password')} />
    </Form>
  );
}
