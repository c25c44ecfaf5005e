// Security of the signed-in account: two-factor sign-in (set up with a QR
// code the API renders, turned on with a code, ten recovery codes shown
// once, turned off with the password and a code) and the open sessions,
// each of which can be ended.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, errorText, logOut, ok, type Schemas } from '../api/client';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { CopyField } from '../ui/CopyField';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { Notice, Page } from '../ui/Page';

export default function Security() {
  const w = useWorkspace();
  const [notice, setNotice] = useState('');
  return (
    <Page title="Security">
      <Notice message={notice} />
      <h2>Two-factor sign-in</h2>
      {w.user.two_factor_enabled ? <TurnOff onDone={(m) => setNotice(m)} /> : <TurnOn onNotice={setNotice} />}
      <h2>Sessions</h2>
      <Sessions onNotice={setNotice} />
    </Page>
  );
}

function TurnOn({ onNotice }: { onNotice: (m: string) => void }) {
  const w = useWorkspace();
  const [setup, setSetup] = useState<Schemas['TwoFactorSetup'] | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [error, setError] = useState('');
  const f = useForm({ code: '' });
  if (codes) return <RecoveryCodes codes={codes} onDone={() => void w.reloadMe()} />;
  if (!setup) {
    return (
      <>
        <p>Signing in then takes a code from an authenticator app on your phone besides your password.</p>
        {error && <p role="alert">{error}</p>}
        <button
          type="button"
          onClick={async () => {
            setError('');
            try {
              setSetup((await ok(api.POST('/api/auth/2fa/setup'))).data);
            } catch (e) {
              setError(errorText(e));
            }
          }}
        >
          Set up two-factor sign-in
        </button>
      </>
    );
  }
  return (
    <Form
      form={f}
      submit="Turn on two-factor sign-in"
      checks={() => ({ code: /^\d{6}$/.test(f.values.code.trim()) ? '' : 'Enter the 6-digit code your app shows.' })}
      send={async () => {
        const r = await ok(api.POST('/api/auth/2fa/enable', { body: { code: f.values.code.trim() } }));
        setCodes(r.data.recovery_codes);
        onNotice('Two-factor sign-in is on.');
      }}
    >
      <p>Scan this QR code with your authenticator app, or type the key into it, then enter the code it shows.</p>
      <img class="qr" src={setup.qr_code} width={240} height={240} alt="QR code for your authenticator app" />
      <CopyField label="Setup key" value={setup.secret} button="Copy key" />
      <Field label="Code from the app" inputMode="numeric" autocomplete="one-time-code" required {...f.bind('code')} />
    </Form>
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <section aria-labelledby="recovery-title">
      <h3 id="recovery-title">Recovery codes</h3>
      <p>Keep these codes somewhere safe: each one signs you in once without your phone. They are shown only now.</p>
      <ul class="recovery-codes" aria-label="Recovery codes">
        {codes.map((c) => (
          <li>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <CopyField label="All recovery codes" value={codes.join(' ')} button="Copy codes" />
      <button type="button" onClick={onDone}>
        I have saved them
      </button>
    </section>
  );
}

function TurnOff({ onDone }: { onDone: (m: string) => void }) {
  const w = useWorkspace();
  const f = useForm({ password: '', code: '' });
  return (
    <Form
      form={f}
      submit="Turn off two-factor sign-in"
      checks={() => ({
        password: f.values.password ? '' : 'Enter your password.',
        code: f.values.code.trim() ? '' : 'Enter a code of your app or a recovery code.',
      })}
      send={async () => {
        const code = f.values.code.trim();
        const body = /^\d{6}$/.test(code) ? { password: f.values.password, code } : { password: f.values.password, recovery_code: code };
        try {
          await ok(api.POST('/api/auth/2fa/disable', { body }));
        } catch (err) {
          if (err instanceof ApiError && err.status === 403) err.field = 'code';
          throw err;
        }
        onDone('Two-factor sign-in is off.');
        await w.reloadMe();
      }}
    >
      <p>Two-factor sign-in is on. To turn it off, confirm with your password and a code.</p>
      <Field label="Password" type="password" autocomplete="current-password" required {...f.bind('password')} />
      <Field label="Code or recovery code" autocomplete="one-time-code" required {...f.bind('code')} />
    </Form>
  );
}

type SessionInfo = Schemas['SessionInfo'];

function Sessions({ onNotice }: { onNotice: (m: string) => void }) {
  const { route } = useLocation();
  const [ending, setEnding] = useState<SessionInfo | null>(null);
  const { data: list, error, reload: load } = useResource((signal) => ok(api.GET('/api/auth/sessions', { signal })).then((r) => r.data), []);
  return (
    <>
      <DataTable<SessionInfo>
        caption="Your sessions"
        rows={list}
        error={error}
        rowKey={(s) => s.id}
        empty="No open sessions."
        columns={[
          { key: 'browser', header: 'Browser', cell: (s) => (s.current ? `${s.user_agent || 'Unknown'} (this session)` : s.user_agent || 'Unknown') },
          { key: 'ip', header: 'Address', cell: (s) => s.ip || '—' },
          { key: 'created', header: 'Signed in', cell: (s) => new Date(s.created_at).toLocaleString() },
          { key: 'seen', header: 'Last seen', cell: (s) => new Date(s.last_seen_at).toLocaleString() },
          {
            key: 'actions',
            header: 'Actions',
            cell: (s) => (
              <button type="button" class="link danger" onClick={() => setEnding(s)}>
                End session<span class="visually-hidden"> from {s.ip || 'an unknown address'}</span>
              </button>
            ),
          },
        ]}
      />
      {ending && (
        <Confirm
          title="End this session?"
          button="End session"
          run={() => ok(api.DELETE('/api/auth/sessions/{id}', { params: { path: { id: ending.id } } }))}
          onClose={() => setEnding(null)}
          onDone={async () => {
            const current = ending.current;
            setEnding(null);
            if (current) {
              await logOut();
              route('/app/login', true);
              return;
            }
            onNotice('The session was ended; its browser is signed out.');
            void load();
          }}
        >
          <p>{ending.current ? 'You will be signed out here.' : 'That browser is signed out within a second.'}</p>
        </Confirm>
      )}
    </>
  );
}
