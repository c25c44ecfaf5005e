// Passwords: asking for a reset link, setting a new password from that
// link, and changing the password of the signed-in account.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, ok } from '../api/client';
import { cookieSession } from '../api/session';
import { checkEmail, checkPassword } from '../lib/form';
import { useForm } from '../lib/useForm';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { FormDialog } from '../ui/FormDialog';
import { Page } from '../ui/Page';
import { SecondStep, mfaOf, useEnter } from './Auth';

export function ForgotPassword() {
  const f = useForm({ email: '' });
  const [sent, setSent] = useState('');
  return (
    <Page title="Reset your password" narrow>
      {sent ? (
        <p role="status">{sent}</p>
      ) : (
        <Form
          form={f}
          submit="Send the link"
          checks={() => ({ email: checkEmail(f.values.email) })}
          send={async () => {
            await ok(api.POST('/api/auth/password-reset', { body: f.values }));
            // The API answers the same whether or not the account exists, and so does the app.
            setSent(`If an account uses ${f.values.email.trim()}, a link to set a new password is on its way. It works for an hour.`);
          }}
        >
          <p>Enter the address you log in with; we email you a link to set a new password.</p>
          <Field label="Email" type="email" autocomplete="username" required {...f.bind('email')} />
        </Form>
      )}
      <p>
        <a href="/app/login">Back to log in</a>
      </p>
    </Page>
  );
}

export function ResetPassword() {
  const { query } = useLocation();
  const enter = useEnter();
  const f = useForm({ password: '' });
  const [gone, setGone] = useState(!query.token);
  const [mfa, setMfa] = useState<string | null>(null);
  // Two-factor sign-in stays on after a reset: the new password is set,
  // and signing in takes the second step.
  if (mfa) return <SecondStep token={mfa} onDone={enter} onRestart={() => (location.href = '/app/login')} />;
  if (gone) {
    return (
      <Page title="This link no longer works" narrow>
        <p role="alert">The reset link is unknown, already used, replaced by a newer one, or more than an hour old.</p>
        <p>
          <a href="/app/forgot-password">Ask for a new link</a>
        </p>
      </Page>
    );
  }
  return (
    <Page title="Set a new password" narrow>
      <Form
        form={f}
        submit="Set password"
        checks={() => ({ password: checkPassword(f.values.password) })}
        send={async () => {
          let token: string | null;
          try {
            const r = await ok(api.POST('/api/auth/password-reset/confirm', { params: cookieSession, body: { token: query.token, password: f.values.password } }));
            token = mfaOf(r.data);
          } catch (err) {
            if (err instanceof ApiError && err.status === 404) {
              setGone(true);
              return;
            }
            throw err;
          }
          if (token) setMfa(token);
          else enter();
        }}
      >
        <p>Every session of your account ends, on every device; you stay logged in here.</p>
        <Field label="New password" type="password" autocomplete="new-password" required hint="8 to 72 characters." {...f.bind('password')} />
      </Form>
    </Page>
  );
}

/** ChangePassword is the user menu's dialog; the session goes on with new cookies. */
export function ChangePassword({ onClose, onChanged }: { onClose: () => void; onChanged: () => void }) {
  const f = useForm({ current_password: '', new_password: '' });
  return (
    <FormDialog
      title="Change password"
      submit="Change password"
      form={f}
      checks={() => ({
        current_password: f.values.current_password ? '' : 'Enter your current password.',
        new_password: checkPassword(f.values.new_password),
      })}
      send={async () => {
        try {
          // Called with the cookie session, the answer renews it by itself.
          await ok(api.POST('/api/auth/password', { params: cookieSession, body: f.values }));
        } catch (err) {
          // A wrong current password is the one 403 here.
          if (err instanceof ApiError && err.status === 403) err.field = 'current_password';
          throw err;
        }
        onChanged();
      }}
      onClose={onClose}
    >
      <Field label="Current password" type="password" autocomplete="current-password" required {...f.bind('current_password')} />
      <Field label="New password" type="password" autocomplete="new-password" required hint="8 to 72 characters. Your other sessions end." {...f.bind('new_password')} />
    </FormDialog>
  );
}
