// App passwords of the signed-in account: what phones and desktop address
// books sign in to CardDAV with (never the account password). Each is
// named for its device, shown once when created, listed with its last
// use, and revoked here (refused everywhere within a second).
import { useState } from 'preact/hooks';
import { api, ok, type Schemas } from '../api/client';
import { checkRequired } from '../lib/form';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { Confirm } from '../ui/Confirm';
import { CopyField } from '../ui/CopyField';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { Notice, Page } from '../ui/Page';

type AppPassword = Schemas['AppPassword'];

export default function AppPasswords() {
  const [notice, setNotice] = useState('');
  const [revoking, setRevoking] = useState<AppPassword | null>(null);
  const { data: list, error, reload } = useResource((signal) => ok(api.GET('/api/auth/app-passwords', { signal })).then((r) => r.data), []);
  return (
    <Page title="App passwords">
      <Notice message={notice} />
      <p>
        Phones and desktop address books sign in with your email and an app password, one per device, so your account password never sits in
        a device and revoking one device leaves the others syncing. A password change revokes them all.
      </p>
      <NewAppPassword onCreated={() => void reload()} />
      <h2>Your app passwords</h2>
      <DataTable<AppPassword>
        caption="Your app passwords"
        rows={list}
        error={error}
        rowKey={(p) => p.id}
        empty="No app passwords yet."
        columns={[
          { key: 'name', header: 'Name', cell: (p) => p.name },
          { key: 'created', header: 'Created', cell: (p) => new Date(p.created_at).toLocaleString() },
          { key: 'used', header: 'Last used', cell: (p) => (p.last_used_at ? new Date(p.last_used_at).toLocaleString() : 'Never') },
          {
            key: 'actions',
            header: 'Actions',
            cell: (p) => (
              <button type="button" class="link danger" onClick={() => setRevoking(p)}>
                Revoke<span class="visually-hidden"> {p.name}</span>
              </button>
            ),
          },
        ]}
      />
      {revoking && (
        <Confirm
          title={`Revoke “${revoking.name}”?`}
          button="Revoke"
          run={() => ok(api.DELETE('/api/auth/app-passwords/{id}', { params: { path: { id: revoking.id } } }))}
          onClose={() => setRevoking(null)}
          onDone={() => {
            setNotice(`“${revoking.name}” is revoked; that device can no longer sync.`);
            setRevoking(null);
            void reload();
          }}
        >
          <p>The device using it stops syncing within a second. Its contacts stay in the book.</p>
        </Confirm>
      )}
    </Page>
  );
}

/** NewAppPassword creates an app password and shows it, once. */
export function NewAppPassword({ onCreated, defaultName = '' }: { onCreated?: () => void; defaultName?: string }) {
  const f = useForm({ name: defaultName });
  const [created, setCreated] = useState<Schemas['AppPassword'] & { password: string } | null>(null);
  if (created) {
    return (
      <section aria-labelledby="new-app-password">
        <h3 id="new-app-password">App password for {created.name}</h3>
        <CopyField label="App password" value={created.password} button="Copy password" hint="Shown only now: enter it in the device's account settings." />
        <button type="button" class="secondary" onClick={() => setCreated(null)}>
          Done
        </button>
      </section>
    );
  }
  return (
    <Form
      form={f}
      submit="Create app password"
      checks={() => ({ name: checkRequired(f.values.name, 'a name for the device, for example “iPhone”') })}
      send={async () => {
        const r = await ok(api.POST('/api/auth/app-passwords', { body: { name: f.values.name.trim() } }));
        setCreated({ ...r.data, last_used_at: null });
        f.set('name', '');
        onCreated?.();
      }}
    >
      <Field label="Device name" required placeholder="iPhone" {...f.bind('name')} />
    </Form>
  );
}
