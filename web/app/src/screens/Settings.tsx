// A book's email settings: the sender, the company address every campaign
// email's footer shows, the SendGrid key (shown masked; saving the mask
// keeps the stored key), open and click tracking, and the Event Webhook
// (the address to paste into SendGrid, the public key it signs with); a
// setup checklist above. The owner edits; admins and members read; viewers
// see why they cannot.
import { useState } from 'preact/hooks';
import { api, ApiError, errorText, inBook, ok, type Schemas } from '../api/client';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useResource } from '../lib/useResource';
import { useForm } from '../lib/useForm';
import { useWorkspace } from '../lib/workspace';
import { CopyField } from '../ui/CopyField';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { BookMissing, Notice, Page } from '../ui/Page';
import { AddonMissing } from '../ui/AddonMissing';
import { TimeZoneField } from '../ui/TimeZoneField';

type Settings = Schemas['EmailSettings'];
type Input = Required<Omit<Schemas['EmailSettingsInput'], 'track_opens' | 'track_clicks'>> & { track_opens: boolean; track_clicks: boolean };

const empty: Input = {
  sender_name: '',
  sender_email: '',
  reply_to_email: '',
  company_name: '',
  address_line1: '',
  address_line2: '',
  city: '',
  state: '',
  postal_code: '',
  country: '',
  mailer_api_key: '',
  event_webhook_public_key: '',
  track_opens: false,
  track_clicks: false,
  default_time_zone: 'UTC',
};

export default function Settings({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { book, booksLoaded } = useBook(bookId);
  const canRead = atLeast(w.role, 'member');
  // null: the book has no settings yet; undefined: still loading.
  const loaded = useResource(
    (signal) =>
      ok(api.GET('/api/campaign-settings', { params: { header: inBook(bookId) }, signal })).then((r) => {
        const s = r.data as Settings | Schemas['EmailSettingsUnconfigured'];
        return 'id' in s ? { settings: s, webhookURL: s.event_webhook_url } : { settings: null, webhookURL: `${location.origin}/api/mailer/events/${bookId}` };
      }),
    [bookId],
    { enabled: canRead, describe: (e) => (e instanceof ApiError && e.code === 'ADDON_REQUIRED' ? 'addon' : errorText(e)) },
  );
  const settings = loaded.data?.settings;
  const webhookURL = loaded.data?.webhookURL ?? '';
  const error = loaded.error;
  const setSettings = (saved: Settings) => loaded.set((d) => ({ settings: saved, webhookURL: d?.webhookURL ?? '' }));

  const title = book ? `Email settings of ${book.name}` : 'Email settings';
  if (!book) return <Page title={title}><BookMissing loaded={booksLoaded} /></Page>;
  if (!canRead) {
    return (
      <Page title={title}>
        <p>The email settings hold the book's sender and provider key. {needs('member')}</p>
      </Page>
    );
  }
  if (error === 'addon') {
    return (
      <Page title={title}>
        <AddonMissing>Email settings belong to campaigns, which need the Campaigns add-on.</AddonMissing>
      </Page>
    );
  }
  return (
    <Page title={title}>
      {error && <p role="alert">{error}</p>}
      {settings === undefined && !error ? <p class="state">Loading…</p> : settings !== undefined && <Editor bookId={bookId} settings={settings} webhookURL={webhookURL} canWrite={w.role === 'owner'} onSaved={setSettings} />}
    </Page>
  );
}

function Editor({ bookId, settings, webhookURL, canWrite, onSaved }: { bookId: string; settings: Settings | null; webhookURL: string; canWrite: boolean; onSaved: (s: Settings) => void }) {
  const initial: Input = settings ? { ...empty, ...pick(settings) } : empty;
  const form = useForm<Input>(initial);
  const [notice, setNotice] = useState('');
  const text = (key: keyof Input & string, label: string, more: Record<string, unknown> = {}) => <Field label={label} readOnly={!canWrite} {...form.bind(key)} {...more} />;
  const check = (key: 'track_opens' | 'track_clicks', label: string, hint: string) => (
    <Field label={label} type="checkbox" hint={hint} checked={form.values[key]} disabled={!canWrite} onChange={(e) => form.set(key, (e.target as HTMLInputElement).checked)} />
  );
  const fields = (
    <>
      {!canWrite && <p class="hint">Only the team's owner changes these settings.</p>}
      <fieldset>
        <legend>Sender</legend>
        {text('sender_name', 'Sender name', { hint: 'The name recipients see, e.g. Acme News.' })}
        {text('sender_email', 'Sender email', { type: 'email', hint: 'An address of a domain verified in SendGrid.' })}
        {text('reply_to_email', 'Reply-to email', { type: 'email' })}
      </fieldset>
      <fieldset>
        <legend>Company address</legend>
        <p class="hint">Every campaign email ends with it, as anti-spam laws require.</p>
        {text('company_name', 'Company name')}
        {text('address_line1', 'Address line 1')}
        {text('address_line2', 'Address line 2')}
        {text('city', 'City')}
        {text('state', 'State or region')}
        {text('postal_code', 'Postal code')}
        {text('country', 'Country')}
      </fieldset>
      <fieldset>
        <legend>SendGrid</legend>
        {text('mailer_api_key', 'SendGrid API key', {
          autoComplete: 'off',
          hint: settings?.mailer_api_key ? 'Shown masked. Leave it as it is to keep the saved key; empty it to remove the key.' : 'A SendGrid API key with the Mail Send permission.',
        })}
        {check('track_opens', 'Track opens', 'SendGrid adds an invisible image to each email.')}
        {check('track_clicks', 'Track clicks', 'SendGrid routes links through its own address to count clicks.')}
      </fieldset>
      <fieldset>
        <legend>Time</legend>
        <TimeZoneField
          label="Default time zone"
          readOnly={!canWrite}
          hint="Send windows are read in each contact's own time zone; contacts without one use this zone."
          {...form.bind('default_time_zone')}
        />
      </fieldset>
      <fieldset>
        <legend>Delivery events</legend>
        <p class="hint">In SendGrid, under Settings → Mail Settings → Event Webhook, paste this address, turn on the signed Event Webhook, and paste its verification key below.</p>
        <CopyField label="Event Webhook URL" value={webhookURL} button="Copy URL" />
        {text('event_webhook_public_key', 'Event Webhook verification key', { as: 'textarea', rows: 3, hint: 'The public key SendGrid shows for the signed Event Webhook (base64).' })}
      </fieldset>
    </>
  );
  return (
    <>
      <Checklist settings={settings} />
      <Notice message={notice} />
      {canWrite ? (
        <Form
          submit="Save settings"
          form={form}
          send={async () => {
            const r = await ok(api.PUT('/api/campaign-settings', { params: { header: inBook(bookId) }, body: form.values }));
            form.setValues({ ...empty, ...pick(r.data) });
            onSaved(r.data);
            setNotice('Email settings saved.');
          }}
        >
          {fields}
        </Form>
      ) : (
        <div class="read-only">{fields}</div>
      )}
    </>
  );
}

/** pick is the editable part of saved settings. */
function pick(s: Settings): Input {
  const out = { ...empty };
  for (const k of Object.keys(empty) as (keyof Input)[]) (out as Record<string, unknown>)[k] = s[k] ?? empty[k];
  return out;
}

function Checklist({ settings: s }: { settings: Settings | null }) {
  const items: { done: boolean; name: string; detail: string }[] = [
    { done: !!s?.mailer_api_key, name: 'SendGrid key saved', detail: s?.mailer_api_key ? `Key ${s.mailer_api_key}.` : 'Campaign email cannot be sent without it.' },
    { done: !!s?.sender_email, name: 'Sender email set', detail: s?.sender_email ? `Email comes from ${s.sender_email}.` : 'Campaign email cannot be sent without it.' },
    {
      done: !!(s?.company_name && s.address_line1 && s.city && s.country),
      name: 'Company address present',
      detail: s?.company_name && s.address_line1 && s.city && s.country ? 'Every email ends with it.' : 'Give the company name, a street address, the city and the country.',
    },
    {
      done: !!s?.events_received_at,
      name: 'Delivery events arriving',
      detail: s?.events_received_at
        ? `Last batch ${new Date(s.events_received_at).toLocaleString()}.`
        : s?.event_webhook_public_key
          ? 'No signed batch from SendGrid yet: check the Event Webhook URL in SendGrid.'
          : 'Set up the Event Webhook in SendGrid and save its verification key below.',
    },
  ];
  return (
    <section aria-labelledby="setup" class="checklist">
      <h2 id="setup">Setup checklist</h2>
      <ul>
        {items.map((i) => (
          <li class={i.done ? 'done' : 'todo'}>
            <span aria-hidden="true">{i.done ? '✓' : '○'}</span> <strong>{i.name}</strong>
            <span class="visually-hidden">{i.done ? ': done.' : ': to do.'}</span> {i.detail}
          </li>
        ))}
      </ul>
    </section>
  );
}
