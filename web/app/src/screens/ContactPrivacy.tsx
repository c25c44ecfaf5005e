// A contact's consents (what they agreed to through a sign-up form, when
// and from where), and for admins the person's rights: a download of
// everything held about them, and erasure.
import { useState } from 'preact/hooks';
import { api, errorText, ok, type Contact, type Schemas } from '../api/client';
import { contactName } from '../lib/contact';
import { atLeast, needs } from '../lib/roles';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { FormError } from '../ui/Field';

type Consent = Schemas['Consent'];

export function ContactPrivacy({ contact: c, onErased }: { contact: Contact; onErased: () => void }) {
  const w = useWorkspace();
  const isAdmin = atLeast(w.role, 'admin');
  const [erasing, setErasing] = useState(false);
  const [error, setError] = useState('');
  const consents = useResource<Consent[]>((signal) => ok(api.GET('/api/contacts/{id}/consents', { params: { path: { id: c.id } }, signal })).then((r) => r.data), [c.id]);

  async function download() {
    setError('');
    try {
      const r = await ok(api.GET('/api/contacts/{id}/data-export', { params: { path: { id: c.id } } }));
      const blob = new Blob([JSON.stringify(r.data, null, 2)], { type: 'application/json' });
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `contact-${c.id}.json`;
      a.click();
      URL.revokeObjectURL(a.href);
    } catch (e) {
      setError(errorText(e));
    }
  }

  return (
    <section aria-labelledby="privacy">
      <h2 id="privacy">Consents and personal data</h2>
      <DataTable
        caption="Consents of this contact"
        rows={consents.data}
        rowKey={(k) => k.id}
        loading={consents.loading}
        error={consents.error}
        empty="No consent recorded: this contact did not sign up through a form."
        columns={[
          { key: 'text', header: 'Agreed to', cell: (k) => k.text || '(no consent text)' },
          { key: 'method', header: 'How', cell: (k) => (k.method === 'double' ? 'Confirmed by email' : 'Form submission') },
          { key: 'at', header: 'When', cell: (k) => new Date(k.confirmed_at).toLocaleString() },
          { key: 'from', header: 'From', cell: (k) => [k.ip, k.user_agent].filter(Boolean).join(' · ') },
        ]}
      />
      {isAdmin ? (
        <div class="actions">
          <button type="button" class="secondary" onClick={download}>
            Export personal data
          </button>
          <button type="button" class="danger" onClick={() => setErasing(true)}>
            Erase this person
          </button>
        </div>
      ) : (
        <p class="hint">Exporting and erasing a person's data: {needs('admin')}</p>
      )}
      <FormError message={error} />
      {erasing && (
        <Confirm
          title={`Erase ${contactName(c)}?`}
          button="Erase person"
          run={() => ok(api.POST('/api/contacts/{id}/erase', { params: { path: { id: c.id } } }))}
          onClose={() => setErasing(false)}
          onDone={onErased}
        >
          <p>The contact, its campaign history, activity and consents are deleted for good. Its suppressions keep only a fingerprint of the address, so it is still never emailed or imported again.</p>
        </Confirm>
      )}
    </section>
  );
}
