// Log in and sign up: the two screens a visitor sees.
import { useLocation } from 'preact-iso/router';
import { api, ok } from '../api/client';
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

export function Login() {
  const enter = useEnter();
  const f = useForm({ email: '', password: '' });
  return (
    <Page title="Log in" narrow>
      <Form
        form={f}
        submit="Log in"
        checks={() => ({ email: checkEmail(f.values.email), password: f.values.password ? '' : 'Enter your password.' })}
        send={async () => {
          await ok(api.POST('/api/auth/login', { params: cookieSession, body: f.values }));
          enter();
        }}
      >
        <Field label="Email" type="email" autocomplete="username" required {...f.bind('email')} />
        <Field label="Password" type="password" autocomplete="current-password" required {...f.bind('password')} />
      </Form>
      <p>
        <a href="/app/forgot-password">Forgot your password?</a>
      </p>
      <p>
        New here? <a href="/app/signup">Create an account</a>
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
