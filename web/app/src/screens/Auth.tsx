// Log in and sign up: the two screens a visitor sees.
import { useLocation } from 'preact-iso/router';
import { api, ok } from '../api/client';
import { remember } from '../api/session';
import { checkEmail, checkPassword, checkRequired } from '../lib/form';
import { useForm } from '../lib/useForm';
import { Field, FormError } from '../ui/Field';
import { Page } from '../ui/Page';

function next(query: Record<string, string>) {
  return query.next?.startsWith('/app/') ? query.next : '/app/';
}

export function Login() {
  const { query, route } = useLocation();
  const f = useForm({ email: '', password: '' });
  return (
    <Page title="Log in" narrow>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void f.submit({ email: checkEmail(f.values.email), password: f.values.password ? '' : 'Enter your password.' }, async () => {
            const r = await ok(api.POST('/api/auth/login', { body: f.values }));
            remember(r.data.token, r.data.expires_at);
            route(next(query), true);
          });
        }}
      >
        <Field label="Email" type="email" autocomplete="username" required {...f.bind('email')} />
        <Field label="Password" type="password" autocomplete="current-password" required {...f.bind('password')} />
        <FormError message={f.formError} />
        <button type="submit" disabled={f.busy}>
          Log in
        </button>
      </form>
      <p>
        New here? <a href="/app/signup">Create an account</a>
      </p>
    </Page>
  );
}

export function Signup() {
  const { query, route } = useLocation();
  const f = useForm({ name: '', email: '', password: '', team_name: '' });
  return (
    <Page title="Sign up" narrow>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void f.submit(
            {
              name: checkRequired(f.values.name, 'your name'),
              email: checkEmail(f.values.email),
              password: checkPassword(f.values.password),
              team_name: checkRequired(f.values.team_name, 'a name for your team'),
            },
            async () => {
              const r = await ok(api.POST('/api/auth/signup', { body: f.values }));
              remember(r.data.token, r.data.expires_at);
              route(next(query), true);
            },
          );
        }}
      >
        <Field label="Name" autocomplete="name" required {...f.bind('name')} />
        <Field label="Email" type="email" autocomplete="email" required {...f.bind('email')} />
        <Field label="Password" type="password" autocomplete="new-password" required hint="8 to 72 characters." {...f.bind('password')} />
        <Field label="Team name" autocomplete="organization" required hint="You will be its owner." {...f.bind('team_name')} />
        <FormError message={f.formError} />
        <button type="submit" disabled={f.busy}>
          Sign up
        </button>
      </form>
      <p>
        Already have an account? <a href="/app/login">Log in</a>
      </p>
    </Page>
  );
}
