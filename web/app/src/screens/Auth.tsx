// Log in and sign up: the two screens a visitor sees.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, ok, type Schemas } from '../api/client';
import { cookieSession, started } from '../api/session';
import { checkEmail, checkPassword, checkRequired } from '../lib/form';
import { useForm } from '../lib/useForm';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { Page } from '../ui/Page';

/**
 * useEnter is called once a call made with cookieSession succeeded: the
 * session has started; go where the visitor was headed.
 */
export function useEnter() {
  const { query, route } = useLocation();
  return () => {
    started();
    route(query.next?.startsWith('/app/') ? query.next : '/app/', true);
  };
}

/** mfaOf is the second step's token when a login answer asks for one. */
export function mfaOf(data: Schemas['Session'] | Schemas['MFAChallenge']): string | null {
  return 'mfa_required' in data && data.mfa_required ? data.mfa_token : null;
}

/** ssoErrors says what went wrong in a single sign-on, by the sso_error the service sends back. */
export const ssoErrors: Record<string, string> = {
  state: 'The sign-in took too long or was started in another browser. Start again.',
  provider: 'Your identity provider did not sign you in (cancelled or refused). Try again, or ask your administrator.',
  exchange: 'Your identity provider did not confirm the sign-in. Try again.',
  token: 'Your identity provider answered with a sign-in this service cannot trust (wrong client, issuer, key or expired). Ask your administrator to check the single sign-on settings.',
  email_unverified: 'Your identity provider has not verified your email address, so it cannot sign you in here.',
  domain: 'Your email address is not on a domain this team signs in with single sign-on.',
  unavailable: 'Single sign-on is not available right now (the provider could not be reached, or it was turned off). Try again in a moment, or log in with your password.',
  account: 'Your account could not be signed in. Try again, or ask your administrator.',
};

export function Login() {
  const enter = useEnter();
  const { query } = useLocation();
  const f = useForm({ email: '', password: '' });
  const [mfa, setMfa] = useState<string | null>(null);
  const [sso, setSso] = useState(false);
  if (mfa) return <SecondStep token={mfa} onDone={enter} onRestart={() => setMfa(null)} />;
  if (sso) return <SingleSignOn onBack={() => setSso(false)} />;
  const ssoError = query.sso_error ? (ssoErrors[query.sso_error] ?? ssoErrors.account) : '';
  return (
    <Page title="Log in" narrow>
      {ssoError && (
        <p role="alert" class="error">
          Single sign-on failed: {ssoError}
        </p>
      )}
      <Form
        form={f}
        submit="Log in"
        checks={() => ({ email: checkEmail(f.values.email), password: f.values.password ? '' : 'Enter your password.' })}
        send={async () => {
          const r = await ok(api.POST('/api/auth/login', { params: cookieSession, body: f.values }));
          const token = mfaOf(r.data);
          if (token) setMfa(token);
          else enter();
        }}
      >
        <Field label="Email" type="email" autocomplete="username" required {...f.bind('email')} />
        <Field label="Password" type="password" autocomplete="current-password" required {...f.bind('password')} />
      </Form>
      <p>
        <button type="button" class="secondary" onClick={() => setSso(true)}>
          Sign in with SSO
        </button>
      </p>
      <p>
        <a href="/app/forgot-password">Forgot your password?</a>
      </p>
      <p>
        New here? <a href="/app/signup">Create an account</a>
      </p>
    </Page>
  );
}

/**
 * SingleSignOn asks for the work address, then sends the browser to the
 * identity provider of the team that signs it in. The start is tried
 * first without following its redirect, so an address no team signs in
 * is said here rather than on a bare error page.
 */
function SingleSignOn({ onBack }: { onBack: () => void }) {
  const f = useForm({ email: '' });
  return (
    <Page title="Sign in with SSO" narrow>
      <p>Enter your work email address: you continue at your organisation's identity provider.</p>
      <Form
        form={f}
        submit="Continue"
        checks={() => ({ email: checkEmail(f.values.email) })}
        send={async () => {
          const url = `/api/auth/sso/start?email=${encodeURIComponent(f.values.email.trim())}`;
          const r = await fetch(url, { redirect: 'manual', credentials: 'same-origin' });
          if (r.type === 'opaqueredirect' || (r.status >= 300 && r.status < 400)) {
            window.location.assign(url);
            return;
          }
          const body = (await r.json().catch(() => null)) as { error?: { message?: string } } | null;
          const err = new ApiError(r.status, r.status === 404 ? 'NOT_FOUND' : 'SERVER_ERROR', body?.error?.message ?? `The server answered ${r.status}.`);
          err.field = 'email';
          throw err;
        }}
      >
        <Field label="Work email" type="email" autocomplete="username" required {...f.bind('email')} />
      </Form>
      <p>
        <button type="button" class="link" onClick={onBack}>
          Log in with a password instead
        </button>
      </p>
    </Page>
  );
}

export function Signup() {
  const enter = useEnter();
  const f = useForm({ name: '', email: '', password: '', team_name: '' });
  return (
    <Page title="Sign up" narrow>
      <Form
        form={f}
        submit="Sign up"
        checks={() => ({
          name: checkRequired(f.values.name, 'your name'),
          email: checkEmail(f.values.email),
          password: checkPassword(f.values.password),
          team_name: checkRequired(f.values.team_name, 'a name for your team'),
        })}
        send={async () => {
          await ok(api.POST('/api/auth/signup', { params: cookieSession, body: f.values }));
          enter();
        }}
      >
        <Field label="Name" autocomplete="name" required {...f.bind('name')} />
        <Field label="Email" type="email" autocomplete="email" required {...f.bind('email')} />
        <Field label="Password" type="password" autocomplete="new-password" required hint="8 to 72 characters." {...f.bind('password')} />
        <Field label="Team name" autocomplete="organization" required hint="You will be its owner." {...f.bind('team_name')} />
      </Form>
      <p>
        Already have an account? <a href="/app/login">Log in</a>
      </p>
    </Page>
  );
}

/**
 * SecondStep completes a login of an account with two-factor sign-in: a
 * code of the authenticator app, or one of the recovery codes.
 */
export function SecondStep({ token, onDone, onRestart }: { token: string; onDone: () => void; onRestart: () => void }) {
  const [recovery, setRecovery] = useState(false);
  const f = useForm({ code: '', recovery_code: '' });
  return (
    <Page title="Two-factor sign-in" narrow>
      <Form
        form={f}
        submit="Verify"
        checks={(): Record<string, string> =>
          recovery
            ? { recovery_code: f.values.recovery_code.trim() ? '' : 'Enter one of your recovery codes.' }
            : { code: /^\d{6}$/.test(f.values.code.trim()) ? '' : 'Enter the 6-digit code of your authenticator app.' }
        }
        send={async () => {
          const body = recovery ? { mfa_token: token, recovery_code: f.values.recovery_code.trim() } : { mfa_token: token, code: f.values.code.trim() };
          await ok(api.POST('/api/auth/login/2fa', { params: cookieSession, body }));
          onDone();
        }}
      >
        {recovery ? (
          <Field label="Recovery code" autocomplete="off" required hint="Each recovery code works once." {...f.bind('recovery_code')} />
        ) : (
          <Field label="Authentication code" inputMode="numeric" autocomplete="one-time-code" required hint="The 6-digit code your authenticator app shows now." {...f.bind('code')} />
        )}
      </Form>
      <p>
        <button type="button" class="link" onClick={() => setRecovery(!recovery)}>
          {recovery ? 'Use your authenticator app' : 'Use a recovery code'}
        </button>
      </p>
      <p>
        <button type="button" class="link" onClick={onRestart}>
          Start over
        </button>
      </p>
    </Page>
  );
}
