// Create or edit a contact: every field the API has, its custom fields and
// labels; errors shown at the field, and a warning while typing an email
// address the book already has.
import { useRef } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, inBook, ok, type Contact, type FieldDefinition, type Schemas } from '../api/client';
import { addressLabels, emailLabels, phoneLabels, socialLabels } from '../api/enums';
import { contactName, socialNames } from '../lib/contact';
import { checkDate, checkEmail, checkPhone, checkURL, type FieldErrors } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useForm } from '../lib/useForm';
import { useDebounced } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Field, FormError } from '../ui/Field';
import { Page } from '../ui/Page';
import { Repeat } from '../ui/Repeat';
import { checkTimeZone, TimeZoneField } from '../ui/TimeZoneField';

type Email = Schemas['ContactEmail'];
type Phone = Schemas['ContactPhone'];
type Address = Schemas['ContactAddress'];
type DateItem = Schemas['ContactDate'];
type Social = Schemas['ContactSocial'];
type Relationship = Schemas['ContactRelationship'];

interface Values extends Record<string, unknown> {
  first_name: string;
  last_name: string;
  company: string;
  job_title: string;
  emails: Email[];
  phones: Phone[];
  addresses: Address[];
  dates: DateItem[];
  socials: Social[];
  relationships: Relationship[];
  birthday: string;
  website: string;
  time_zone: string;
  notes: string;
  starred: boolean;
  custom: Record<string, string>;
  labels: string[];
}

function valuesOf(c: Contact | null): Values {
  return {
    first_name: c?.first_name ?? '',
    last_name: c?.last_name ?? '',
    company: c?.company ?? '',
    job_title: c?.job_title ?? '',
    emails: c?.emails ?? [],
    phones: c?.phones ?? [],
    addresses: c?.addresses ?? [],
    dates: c?.dates ?? [],
    socials: c?.socials ?? [],
    relationships: c?.relationships ?? [],
    birthday: c?.birthday ?? '',
    website: c?.website ?? '',
    time_zone: c?.time_zone ?? '',
    notes: c?.notes ?? '',
    starred: c?.starred ?? false,
    custom: Object.fromEntries(Object.entries((c?.custom_fields as Record<string, unknown> | null) ?? {}).map(([k, v]) => [k, String(v ?? '')])),
    labels: c?.labels.map((l) => l.id) ?? [],
  };
}

export default function ContactEditor({ book: bookParam, id }: { book?: string; id?: string }) {
  // Another contact's address drops this one's answer.
  const { data: contact, error } = useResource((signal) => ok(api.GET('/api/contacts/{id}', { params: { path: { id: id! } }, signal })).then((r) => r.data), [id], {
    enabled: !!id,
  });
  if (id && !contact) return <Page title="Edit contact">{error ? <p role="alert">{error}</p> : <p>Loading…</p>}</Page>;
  // Keyed: the form starts over from each contact (or a new one), never from the last one's values.
  return <Editor key={contact?.id ?? `new-${bookParam}`} contact={contact} bookId={contact?.book_id ?? bookParam!} />;
}

function Editor({ contact, bookId }: { contact: Contact | null; bookId: string }) {
  const w = useWorkspace();
  const { route } = useLocation();
  const { book, booksLoaded, labels, fields } = useBook(bookId);
  const f = useForm<Values>(valuesOf(contact));
  const created = useRef<Contact | null>(null);
  const v = f.values;
  const title = contact ? `Edit ${contactName(contact)}` : 'New contact';
  if (booksLoaded && !book) {
    return (
      <Page title={title}>
        <p>This book does not exist or belongs to another team.</p>
      </Page>
    );
  }
  if (!atLeast(w.role, 'member')) {
    return (
      <Page title={title}>
        <p>{needs('member')} You can view contacts but not change them.</p>
      </Page>
    );
  }

  const fieldPaths = [
    'first_name',
    'last_name',
    'company',
    'job_title',
    'birthday',
    'website',
    'time_zone',
    'notes',
    ...v.emails.map((_, i) => `emails[${i}].address`),
    ...v.phones.map((_, i) => `phones[${i}].number`),
    ...v.addresses.map((_, i) => `addresses[${i}]`),
    ...v.dates.map((_, i) => `dates[${i}].value`),
    ...v.socials.map((_, i) => `socials[${i}].value`),
    ...v.relationships.map((_, i) => `relationships[${i}].name`),
    ...(fields ?? []).map((d) => `custom.${d.key}`),
  ];

  function checks(): Record<string, string> {
    const c: FieldErrors = {};
    if (!v.first_name.trim() && !v.last_name.trim() && !v.company.trim()) c.first_name = 'Give a first name, a last name or a company.';
    c.birthday = checkDate(v.birthday);
    c.website = checkURL(v.website);
    c.time_zone = checkTimeZone(v.time_zone);
    v.emails.forEach((e, i) => (c[`emails[${i}].address`] = checkEmail(e.address)));
    v.emails.forEach((e, i) => {
      if (v.emails.findIndex((x) => x.address.trim().toLowerCase() === e.address.trim().toLowerCase()) < i) c[`emails[${i}].address`] = 'This address is already listed above.';
    });
    v.phones.forEach((p, i) => (c[`phones[${i}].number`] = p.number.trim() ? checkPhone(p.number) : 'Enter a phone number or remove this one.'));
    v.addresses.forEach((a, i) => {
      if (![a.street, a.city, a.state, a.zip, a.country].some((x) => x?.trim())) c[`addresses[${i}]`] = 'Fill in at least one line or remove this address.';
    });
    v.dates.forEach((d, i) => (c[`dates[${i}].value`] = d.value ? checkDate(d.value) : 'Enter a date or remove this one.'));
    v.socials.forEach((s, i) => (c[`socials[${i}].value`] = s.value.trim() ? '' : 'Enter a handle or link, or remove this one.'));
    v.relationships.forEach((r, i) => (c[`relationships[${i}].name`] = r.name.trim() && r.label.trim() ? '' : 'Enter both the relation and the name, or remove this one.'));
    for (const d of fields ?? []) {
      const x = v.custom[d.key] ?? '';
      if (!x) continue;
      if (d.type === 'number' && Number.isNaN(Number(x))) c[`custom.${d.key}`] = 'Enter a number.';
      if (d.type === 'date') c[`custom.${d.key}`] = checkDate(x);
      if (d.type === 'url') c[`custom.${d.key}`] = checkURL(x);
    }
    return c;
  }

  async function save() {
    const body = {
      first_name: v.first_name,
      last_name: v.last_name,
      company: v.company,
      job_title: v.job_title,
      emails: v.emails.map((e) => ({ ...e, address: e.address.trim() })),
      phones: v.phones,
      addresses: v.addresses,
      dates: v.dates,
      socials: v.socials,
      relationships: v.relationships.map((r) => (r.contact_id ? r : { label: r.label, name: r.name })),
      birthday: v.birthday,
      website: v.website.trim(),
      time_zone: v.time_zone.trim() || null,
      notes: v.notes,
      starred: v.starred,
    };
    // A new contact whose labels or custom fields failed is saved already:
    // the next attempt changes it instead of creating another.
    const existing = contact ?? created.current;
    let saved: Contact;
    try {
      saved = existing
        ? (await ok(api.PATCH('/api/contacts/{id}', { params: { path: { id: existing.id } }, body }))).data
        : (await ok(api.POST('/api/contacts', { params: { header: inBook(bookId) }, body }))).data;
    } catch (e) {
      // The duplicate answer names no field: it is about the addresses.
      if (e instanceof ApiError && e.code === 'DUPLICATE_EMAIL' && v.emails.length) throw new ApiError(e.status, e.code, '`emails[0].address`: ' + e.message);
      throw e;
    }
    if (!contact) created.current ??= saved;
    await applyExtras(saved, existing, v, fields ?? [], bookId);
    route(`/app/contacts/${saved.id}`);
  }

  return (
    <Page title={title}>
      <form
        class="editor"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void f.submit(checks(), save, fieldPaths);
        }}
      >
        <fieldset>
          <legend>Name and work</legend>
          <div class="row">
            <Field label="First name" autocomplete="off" {...f.bind('first_name')} />
            <Field label="Last name" autocomplete="off" {...f.bind('last_name')} />
          </div>
          <div class="row">
            <Field label="Company" autocomplete="off" {...f.bind('company')} />
            <Field label="Job title" autocomplete="off" {...f.bind('job_title')} />
          </div>
          <Field label="Starred" type="checkbox" checked={v.starred} onChange={(e) => f.set('starred', (e.target as HTMLInputElement).checked)} />
        </fieldset>

        <Repeat<Email>
          legend="Email addresses"
          item="email"
          items={v.emails}
          max={20}
          blank={() => ({ address: '', label: 'work', primary: v.emails.length === 0 })}
          onChange={(x) => f.set('emails', x)}
          render={(e, i, up) => (
            <div class="row">
              <EmailField bookId={bookId} exclude={contact?.id} index={i} value={e.address} error={f.errors[`emails[${i}].address`]} onInput={(address) => up({ address })} />
              <Kind label={`Kind of email ${i + 1}`} value={e.label ?? 'other'} options={emailLabels} onChange={(label) => up({ label: label as Email['label'] })} />
              <Primary name="primary-email" label={`Email ${i + 1} is primary`} checked={!!e.primary} onChange={() => f.set('emails', v.emails.map((x, j) => ({ ...x, primary: j === i })))} />
            </div>
          )}
        />

        <Repeat<Phone>
          legend="Phone numbers"
          item="phone"
          items={v.phones}
          max={20}
          blank={() => ({ number: '', label: 'mobile', primary: v.phones.length === 0 })}
          onChange={(x) => f.set('phones', x)}
          render={(p, i, up) => (
            <div class="row">
              <Field label={`Phone ${i + 1}`} type="tel" value={p.number} error={f.errors[`phones[${i}].number`]} onInput={(e) => up({ number: (e.target as HTMLInputElement).value })} />
              <Kind label={`Kind of phone ${i + 1}`} value={p.label ?? 'other'} options={phoneLabels} onChange={(label) => up({ label: label as Phone['label'] })} />
              <Primary name="primary-phone" label={`Phone ${i + 1} is primary`} checked={!!p.primary} onChange={() => f.set('phones', v.phones.map((x, j) => ({ ...x, primary: j === i })))} />
            </div>
          )}
        />

        <Repeat<Address>
          legend="Addresses"
          item="address"
          items={v.addresses}
          max={10}
          blank={() => ({ label: 'home', street: '', city: '', state: '', zip: '', country: '' })}
          onChange={(x) => f.set('addresses', x)}
          render={(a, i, up) => (
            <>
              <Kind label={`Kind of address ${i + 1}`} value={a.label ?? 'other'} options={addressLabels} onChange={(label) => up({ label: label as Address['label'] })} />
              <Field label={`Street, address ${i + 1}`} value={a.street ?? ''} error={f.errors[`addresses[${i}]`]} onInput={(e) => up({ street: (e.target as HTMLInputElement).value })} />
              <div class="row">
                <Field label={`City, address ${i + 1}`} value={a.city ?? ''} onInput={(e) => up({ city: (e.target as HTMLInputElement).value })} />
                <Field label={`State, address ${i + 1}`} value={a.state ?? ''} onInput={(e) => up({ state: (e.target as HTMLInputElement).value })} />
                <Field label={`Postal code, address ${i + 1}`} value={a.zip ?? ''} onInput={(e) => up({ zip: (e.target as HTMLInputElement).value })} />
                <Field label={`Country, address ${i + 1}`} value={a.country ?? ''} onInput={(e) => up({ country: (e.target as HTMLInputElement).value })} />
              </div>
            </>
          )}
        />

        <fieldset>
          <legend>More</legend>
          <div class="row">
            <Field label="Birthday" type="date" {...f.bind('birthday')} />
            <Field label="Website" type="url" placeholder="https://" {...f.bind('website')} />
          </div>
          <TimeZoneField label="Time zone" hint="Campaign send windows are read in it; empty: the book's default time zone." {...f.bind('time_zone')} />
          <Field label="Notes" as="textarea" rows={4} {...f.bind('notes')} />
        </fieldset>

        <Repeat<DateItem>
          legend="Dates"
          item="date"
          items={v.dates}
          max={20}
          blank={() => ({ label: '', value: '' })}
          onChange={(x) => f.set('dates', x)}
          render={(d, i, up) => (
            <div class="row">
              <Field label={`What, date ${i + 1}`} value={d.label} placeholder="anniversary" onInput={(e) => up({ label: (e.target as HTMLInputElement).value })} />
              <Field label={`Date ${i + 1}`} type="date" value={d.value} error={f.errors[`dates[${i}].value`]} onInput={(e) => up({ value: (e.target as HTMLInputElement).value })} />
            </div>
          )}
        />

        <Repeat<Social>
          legend="Social profiles"
          item="profile"
          items={v.socials}
          max={20}
          blank={() => ({ label: 'linkedin', value: '' })}
          onChange={(x) => f.set('socials', x)}
          render={(s, i, up) => (
            <div class="row">
              <Kind label={`Network, profile ${i + 1}`} value={s.label ?? 'other'} options={socialLabels} names={socialNames} onChange={(label) => up({ label: label as Social['label'] })} />
              <Field label={`Handle or link, profile ${i + 1}`} value={s.value} error={f.errors[`socials[${i}].value`]} onInput={(e) => up({ value: (e.target as HTMLInputElement).value })} />
            </div>
          )}
        />

        <Repeat<Relationship>
          legend="Relationships"
          item="relationship"
          items={v.relationships}
          max={50}
          blank={() => ({ label: '', name: '' })}
          onChange={(x) => f.set('relationships', x)}
          render={(r, i, up) => (
            <div class="row">
              <Field label={`Relation ${i + 1}`} value={r.label} placeholder="assistant" onInput={(e) => up({ label: (e.target as HTMLInputElement).value })} />
              <Field label={`Name, relation ${i + 1}`} value={r.name} error={f.errors[`relationships[${i}].name`]} onInput={(e) => up({ name: (e.target as HTMLInputElement).value, contact_id: undefined })} />
            </div>
          )}
        />

        {fields && fields.length > 0 && (
          <fieldset>
            <legend>Custom fields</legend>
            {fields.map((d) => (
              <Field
                label={d.name}
                type={d.type === 'number' ? 'text' : d.type}
                inputMode={d.type === 'number' ? 'decimal' : undefined}
                value={v.custom[d.key] ?? ''}
                error={f.errors[`custom.${d.key}`]}
                onInput={(e) => f.set('custom', { ...v.custom, [d.key]: (e.target as HTMLInputElement).value })}
              />
            ))}
          </fieldset>
        )}

        {labels && labels.length > 0 && (
          <fieldset>
            <legend>Labels</legend>
            <div class="checks">
              {labels.map((l) => (
                <Field
                  label={l.name}
                  type="checkbox"
                  checked={v.labels.includes(l.id)}
                  onChange={(e) => f.set('labels', (e.target as HTMLInputElement).checked ? [...v.labels, l.id] : v.labels.filter((x) => x !== l.id))}
                />
              ))}
            </div>
          </fieldset>
        )}

        <FormError message={f.formError} />
        <div class="form-actions">
          <button type="submit" disabled={f.busy || !book}>
            {contact ? 'Save contact' : 'Create contact'}
          </button>
          <a class="button secondary" href={contact ? `/app/contacts/${contact.id}` : `/app/books/${bookId}/contacts`}>
            Cancel
          </a>
        </div>
      </form>
    </Page>
  );
}

/**
 * applyExtras sets what the contact endpoints do not take in the body:
 * custom field values (the bulk endpoint, for this one contact) and labels.
 */
async function applyExtras(saved: Contact, before: Contact | null, v: Values, fields: FieldDefinition[], bookId: string) {
  const old = valuesOf(before);
  for (const d of fields) {
    const next = v.custom[d.key] ?? '';
    if (next === (old.custom[d.key] ?? '')) continue;
    await ok(api.POST('/api/contacts/bulk-update-field', { params: { header: inBook(bookId) }, body: { contact_ids: [saved.id], field_definition_id: d.id, value: next } }));
  }
  for (const id of v.labels.filter((l) => !old.labels.includes(l))) {
    await ok(api.POST('/api/contacts/{id}/labels', { params: { path: { id: saved.id } }, body: { label_id: id } }));
  }
  for (const id of old.labels.filter((l) => !v.labels.includes(l))) {
    await ok(api.DELETE('/api/contacts/{id}/labels/{lid}', { params: { path: { id: saved.id, lid: id } } }));
  }
}

function Kind({ label, value, options, names, onChange }: { label: string; value: string; options: readonly string[]; names?: Record<string, string>; onChange: (v: string) => void }) {
  return (
    <Field label={label} as="select" class="kind" value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
      {options.map((o) => (
        <option value={o}>{names?.[o] ?? o[0].toUpperCase() + o.slice(1)}</option>
      ))}
    </Field>
  );
}

function Primary({ name, label, checked, onChange }: { name: string; label: string; checked: boolean; onChange: () => void }) {
  return <Field name={name} label={label} type="radio" class="primary" checked={checked} onChange={onChange} />;
}

/** EmailField warns, while typing, when the book already has the address. */
function EmailField(p: { bookId: string; exclude?: string; index: number; value: string; error?: string; onInput: (v: string) => void }) {
  // Asked 300 ms after the last key; a key pressed meanwhile cancels the
  // question. A failed check shows nothing: the warning is a courtesy, and
  // saving reports real conflicts.
  const address = p.value.trim();
  const settled = useDebounced(address, 300);
  const check = useResource(
    (signal) => ok(api.GET('/api/contacts/check-email', { params: { header: inBook(p.bookId), query: { email: settled, exclude: p.exclude } }, signal })).then((r) => r.data),
    [settled, p.bookId],
    { enabled: settled === address && !checkEmail(settled) },
  );
  const found = settled === address && !check.error ? check.data : null;
  const warning =
    found?.exists && found.contact_id
      ? {
          text: found.enforced ? `${found.name} already has this address, and this book allows each address once.` : `${found.name} already has this address.`,
          href: `/app/contacts/${found.contact_id}`,
        }
      : null;
  return (
    <Field
      label={`Email ${p.index + 1}`}
      type="email"
      autocomplete="off"
      value={p.value}
      error={p.error}
      onInput={(e) => p.onInput((e.target as HTMLInputElement).value)}
      hint={
        warning && (
          <span class="warning" role="status">
            {warning.text} <a href={warning.href}>Open that contact</a>
          </span>
        )
      }
    />
  );
}
