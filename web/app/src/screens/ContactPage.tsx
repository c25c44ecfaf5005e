// One contact: everything it holds, its labels and custom fields, the
// campaigns it is or was in, its timeline and consents; star, edit and
// delete for those who may, data export and erasure for admins.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, errorText, ok, type Contact, type Schemas } from '../api/client';
import { useCampaignsEnabled } from '../lib/addon';
import { campaignStates } from '../lib/campaign';
import { contactName, socialNames } from '../lib/contact';
import { atLeast } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { ContactPrivacy } from './ContactPrivacy';
import { ContactEvents, ContactTimeline } from './ContactTimeline';
import { DataTable } from '../ui/DataTable';
import { FormError } from '../ui/Field';
import { LabelChips } from '../ui/LabelChips';
import { Page } from '../ui/Page';
import { AddonMissing } from '../ui/AddonMissing';

export default function ContactPage({ id }: { id: string }) {
  // Moving on to another contact (a link on this page) drops the answer for this one.
  const r = useResource((signal) => ok(api.GET('/api/contacts/{id}', { params: { path: { id } }, signal })).then((a) => a.data), [id], {
    describe: (e) => (e instanceof ApiError && e.status === 404 ? 'This contact does not exist (any more).' : errorText(e)),
  });
  const contact = r.data;
  const error = r.error;
  if (!contact) return <Page title="Contact">{error ? <p role="alert">{error}</p> : <p>Loading…</p>}</Page>;
  return <View contact={contact} onChange={r.set} />;
}

function View({ contact: c, onChange }: { contact: Contact; onChange: (c: Contact) => void }) {
  const w = useWorkspace();
  const { route } = useLocation();
  const { book, fields } = useBook(c.book_id);
  const [deleting, setDeleting] = useState(false);
  const [error, setError] = useState('');
  const campaigns = useContactCampaigns(c.id, useCampaignsEnabled(book?.team_id ?? w.team.id));
  const canWrite = atLeast(w.role, 'member');
  const custom = (c.custom_fields as Record<string, unknown> | null) ?? {};
  async function star() {
    try {
      onChange((await ok(api.PATCH('/api/contacts/{id}', { params: { path: { id: c.id } }, body: { starred: !c.starred } }))).data);
    } catch (e) {
      setError(errorText(e));
    }
  }
  return (
    <Page
      title={contactName(c)}
      actions={
        canWrite && (
          <>
            <button type="button" class="secondary" aria-pressed={c.starred} onClick={star}>
              {c.starred ? '★ Starred' : '☆ Star'}
            </button>
            <a class="button" href={`/app/contacts/${c.id}/edit`}>
              Edit contact
            </a>
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete contact
            </button>
          </>
        )
      }
    >
      <p>
        {book && <a href={`/app/books/${book.id}/contacts`}>Back to {book.name}</a>}
        {!canWrite && c.starred && <span> · Starred</span>}
      </p>
      <FormError message={error} />
      <LabelChips labels={c.labels} />
      <dl class="facts">
        <Fact name="Company" value={c.company} />
        <Fact name="Job title" value={c.job_title} />
        {c.emails.map((e) => (
          <Fact name={`Email (${e.label}${e.primary ? ', primary' : ''})`} value={<a href={`mailto:${e.address}`}>{e.address}</a>} />
        ))}
        {c.phones.map((p) => (
          <Fact name={`Phone (${p.label}${p.primary ? ', primary' : ''})`} value={<a href={`tel:${p.number}`}>{p.number}</a>} />
        ))}
        {c.addresses.map((a) => (
          <Fact name={`Address (${a.label})`} value={[a.street, [a.zip, a.city].filter(Boolean).join(' '), a.state, a.country].filter(Boolean).join(', ')} />
        ))}
        <Fact name="Birthday" value={c.birthday ?? ''} />
        {c.dates.map((d) => (
          <Fact name={d.label || 'Date'} value={d.value} />
        ))}
        <Fact name="Time zone" value={c.time_zone ?? ''} />
        <Fact name="Website" value={c.website && <a href={c.website} rel="noopener noreferrer" target="_blank">{c.website}</a>} />
        {c.socials.map((s) => (
          <Fact name={socialNames[s.label ?? 'other']} value={s.value} />
        ))}
        {c.relationships.map((r) => (
          <Fact name={r.label} value={r.contact_id ? <a href={`/app/contacts/${r.contact_id}`}>{r.name}</a> : r.name} />
        ))}
        {(fields ?? []).map((d) => (
          <Fact name={d.name} value={String(custom[d.key] ?? '')} />
        ))}
      </dl>
      {c.notes && (
        <>
          <h2>Notes</h2>
          <p class="notes">{c.notes}</p>
        </>
      )}
      <Campaigns bookId={c.book_id} campaigns={campaigns} />
      {!campaigns.noAddon && <ContactTimeline id={c.id} bookId={c.book_id} campaignNames={new Map((campaigns.list ?? []).map((p) => [p.campaign_id, p.campaign_name]))} />}
      <ContactEvents id={c.id} />
      <ContactPrivacy
        contact={c}
        onErased={() => {
          void w.reloadBooks();
          route(`/app/books/${c.book_id}/contacts`, true);
        }}
      />
      <p class="meta">
        Created {new Date(c.created_at).toLocaleString()} · updated {new Date(c.updated_at).toLocaleString()}
      </p>
      {deleting && (
        <DeleteContact
          contact={c}
          onClose={() => setDeleting(false)}
          onDeleted={() => {
            void w.reloadBooks();
            route(`/app/books/${c.book_id}/contacts`, true);
          }}
        />
      )}
    </Page>
  );
}

function Fact({ name, value }: { name: string; value: ComponentChildren }) {
  if (value === '' || value === null || value === undefined || value === false) return null;
  return (
    <div>
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

const participationStates: Record<Schemas['ContactCampaign']['participant_status'], string> = { active: 'In progress', completed: 'Completed', removed: 'Removed' };
const day = (t: string | null) => (t ? new Date(t).toLocaleDateString() : '—');

/**
 * useContactCampaigns loads the campaigns the contact is or was in, once
 * the team's add-on is known to allow it (enabled; null while unknown):
 * without the add-on the request would only be refused.
 */
function useContactCampaigns(id: string, enabled: boolean | null) {
  const r = useResource((signal) => ok(api.GET('/api/contacts/{id}/campaigns', { params: { path: { id } }, signal })).then((a) => a.data), [id], {
    enabled: !!enabled,
  });
  const noAddon = enabled === false || (r.failure instanceof ApiError && r.failure.code === 'ADDON_REQUIRED');
  const list = enabled ? r.data : null;
  const error = enabled && !noAddon ? r.error : '';
  return { list, error, noAddon };
}

/** Campaigns lists the campaigns the contact is or was in, with how far it got. */
function Campaigns({ bookId, campaigns: { list, error, noAddon } }: { bookId: string; campaigns: ReturnType<typeof useContactCampaigns> }) {
  return (
    <>
      <h2>Campaigns</h2>
      {noAddon ? (
        <AddonMissing>Campaigns need the Campaigns add-on.</AddonMissing>
      ) : (
        <DataTable<Schemas['ContactCampaign']>
          caption="Campaigns of this contact"
          rows={list}
          loading={list === null && !error}
          error={error}
          rowKey={(p) => p.id}
          empty="Not in any campaign."
          columns={[
            { key: 'name', header: 'Campaign', cell: (p) => <a href={`/app/books/${bookId}/campaigns/${p.campaign_id}`}>{p.campaign_name}</a> },
            { key: 'status', header: 'Campaign status', cell: (p) => campaignStates[p.campaign_status] },
            { key: 'participation', header: 'This contact', cell: (p) => participationStates[p.participant_status] },
            { key: 'enrolled', header: 'Enrolled', cell: (p) => day(p.enrolled_at) },
            { key: 'completed', header: 'Completed', cell: (p) => day(p.completed_at) },
          ]}
        />
      )}
    </>
  );
}

function DeleteContact({ contact, onClose, onDeleted }: { contact: Contact; onClose: () => void; onDeleted: () => void }) {
  return (
    <Confirm
      title={`Delete ${contactName(contact)}?`}
      button="Delete contact"
      run={() => ok(api.DELETE('/api/contacts/{id}', { params: { path: { id: contact.id } } }))}
      onClose={onClose}
      onDone={onDeleted}
    >
      <p>The contact and its campaign history are deleted. This cannot be undone.</p>
    </Confirm>
  );
}
