// A book's email settings: the sender, the company address every campaign
// email's footer shows, the sending provider (SendGrid, an SMTP relay or
// Amazon SES) with only its own fields (secrets shown masked; saving the
// mask keeps the stored secret), the feedback each provider sends back
// (SendGrid's Event Webhook, SES's SNS notification URL, an SMTP bounce
// mailbox), a verify button that tries the saved provider, and the
// server's setup checklist above. The owner edits; admins and members
// read and verify; viewers see why they cannot.
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
type Provider = Schemas['EmailProvider'];
type Check = Schemas['ChecklistItem'];

/** The form's values: every provider's fields, as text; only the chosen provider's are sent. */
const empty = {
  provider: 'sendgrid' as Provider,
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
  max_send_rate: '',
  smtp_host: '',
  smtp_port: '587',
  smtp_security: 'starttls',
  smtp_username: '',
  smtp_password: '',
  smtp_max_connections: '4',
  ses_region: '',
  ses_access_key_id: '',
  ses_secret_access_key: '',
  ses_configuration_set: '',
  bounce: false,
  'bounce_mailbox.imap_host': '',
  'bounce_mailbox.imap_port': '993',
  'bounce_mailbox.imap_username': '',
  'bounce_mailbox.imap_password': '',
  'bounce_mailbox.imap_folder': 'INBOX',
};
type Input = typeof empty;

const providerNames: Record<Provider, string> = { sendgrid: 'SendGrid', smtp: 'SMTP relay', ses: 'Amazon SES' };

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
  const initial: Input = settings ? pick(settings) : empty;
  const form = useForm<Input>(initial);
  const [notice, setNotice] = useState('');
  const v = form.values;
  const text = (key: keyof Input & string, label: string, more: Record<string, unknown> = {}) => <Field label={label} readOnly={!canWrite} {...form.bind(key)} {...more} />;
  const check = (key: 'track_opens' | 'track_clicks' | 'bounce', label: string, hint: string) => (
    <Field label={label} type="checkbox" hint={hint} checked={form.values[key]} disabled={!canWrite} onChange={(e) => form.set(key, (e.target as HTMLInputElement).checked)} />
  );
  const masked = (saved: string | undefined | null) => (saved ? 'Shown masked. Leave it as it is to keep the saved secret (for the same host and user); empty it to remove it.' : undefined);
  const sesURL = settings?.ses_notification_url ?? `${location.origin}/api/mailer/ses/${bookId}`;
  const fields = (
    <>
      {!canWrite && <p class="hint">Only the team's owner changes these settings.</p>}
      <fieldset>
        <legend>Sender</legend>
        {text('sender_name', 'Sender name', { hint: 'The name recipients see, e.g. Acme News.' })}
        {text('sender_email', 'Sender email', { type: 'email', hint: 'An address of a domain your provider lets you send from.' })}
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
        <legend>Sending provider</legend>
        <Field label="Provider" as="select" disabled={!canWrite} value={v.provider} error={form.errors.provider} onChange={(e) => form.set('provider', (e.target as HTMLSelectElement).value as Provider)}>
          {(Object.keys(providerNames) as Provider[]).map((p) => (
            <option value={p}>{providerNames[p]}</option>
          ))}
        </Field>
        {text('max_send_rate', 'Most emails a second', { type: 'number', min: 1, max: 1000, hint: 'Optional, 1 to 1000; held across every instance of the service. Empty: as fast as the provider takes them.' })}
      </fieldset>
      {v.provider === 'sendgrid' && (
        <>
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
            <legend>Delivery events</legend>
            <p class="hint">In SendGrid, under Settings → Mail Settings → Event Webhook, paste this address, turn on the signed Event Webhook, and paste its verification key below.</p>
            <CopyField label="Event Webhook URL" value={webhookURL} button="Copy URL" />
            {text('event_webhook_public_key', 'Event Webhook verification key', { as: 'textarea', rows: 3, hint: 'The public key SendGrid shows for the signed Event Webhook (base64).' })}
          </fieldset>
        </>
      )}
      {v.provider === 'smtp' && (
        <>
          <fieldset>
            <legend>SMTP relay</legend>
            {text('smtp_host', 'SMTP host', { required: true, hint: 'e.g. smtp.postmarkapp.com, without port or scheme.' })}
            {text('smtp_port', 'SMTP port', { type: 'number', min: 1, max: 65535, hint: '587 for STARTTLS, 465 for TLS.' })}
            <Field label="Security" as="select" disabled={!canWrite} value={v.smtp_security} error={form.errors.smtp_security} onChange={(e) => form.set('smtp_security', (e.target as HTMLSelectElement).value)}>
              <option value="starttls">STARTTLS (port 587)</option>
              <option value="tls">TLS from the start (port 465)</option>
              <option value="none">None (development only)</option>
            </Field>
            {text('smtp_username', 'SMTP user', { autoComplete: 'off', hint: 'Empty sends without logging in.' })}
            {text('smtp_password', 'SMTP password', { type: 'password', autoComplete: 'new-password', hint: masked(settings?.smtp_password) })}
            {text('smtp_max_connections', 'Connections at once', { type: 'number', min: 1, max: 20, hint: 'Per instance of the service, 1 to 20.' })}
          </fieldset>
          <fieldset>
            <legend>Bounce mailbox</legend>
            {check('bounce', 'Read bounces from a mailbox', 'Bounces that arrive later, as emails to this mailbox, are read every 5 minutes over IMAP with TLS.')}
            {v.bounce && (
              <>
                {text('bounce_mailbox.imap_host', 'IMAP host', { required: true })}
                {text('bounce_mailbox.imap_port', 'IMAP port', { type: 'number', min: 1, max: 65535 })}
                {text('bounce_mailbox.imap_username', 'IMAP user', { required: true, autoComplete: 'off' })}
                {text('bounce_mailbox.imap_password', 'IMAP password', { type: 'password', autoComplete: 'new-password', hint: masked(settings?.bounce_mailbox?.imap_password) })}
                {text('bounce_mailbox.imap_folder', 'IMAP folder')}
              </>
            )}
          </fieldset>
        </>
      )}
      {v.provider === 'ses' && (
        <>
          <fieldset>
            <legend>Amazon SES</legend>
            {text('ses_region', 'AWS region', { required: true, hint: 'The region of your SES identity, e.g. eu-west-1.' })}
            {text('ses_access_key_id', 'Access key id', { autoComplete: 'off' })}
            {text('ses_secret_access_key', 'Secret access key', { type: 'password', autoComplete: 'new-password', hint: masked(settings?.ses_secret_access_key) })}
            {text('ses_configuration_set', 'Configuration set', { hint: 'Optional; needed for open and click events.' })}
          </fieldset>
          <fieldset>
            <legend>SES notifications</legend>
            <p class="hint">In Amazon SNS, subscribe this address (HTTPS) to the topic your SES identity sends its bounce, complaint and delivery notifications to; the subscription confirms itself.</p>
            <CopyField label="SES notification URL" value={sesURL} button="Copy notification URL" />
          </fieldset>
        </>
      )}
      <fieldset>
        <legend>Time</legend>
        <TimeZoneField
          label="Default time zone"
          readOnly={!canWrite}
          hint="Send windows are read in each contact's own time zone; contacts without one use this zone."
          {...form.bind('default_time_zone')}
        />
      </fieldset>
    </>
  );
  return (
    <>
      <Checklist settings={settings} />
      {/* A new save clears the outcome of verifying the old settings. */}
      <Verify key={settings?.updated_at ?? ''} bookId={bookId} saved={!!settings} />
      <Notice message={notice} />
      {canWrite ? (
        <Form
          submit="Save settings"
          form={form}
          send={async () => {
            const r = await ok(api.PUT('/api/campaign-settings', { params: { header: inBook(bookId) }, body: body(form.values) }));
            form.setValues(pick(r.data));
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
  const str = (x: unknown, def: string) => (x === null || x === undefined ? def : String(x));
  const bm = s.bounce_mailbox;
  return {
    ...empty,
    provider: s.provider,
    sender_name: s.sender_name,
    sender_email: s.sender_email,
    reply_to_email: s.reply_to_email,
    company_name: s.company_name,
    address_line1: s.address_line1,
    address_line2: s.address_line2,
    city: s.city,
    state: s.state,
    postal_code: s.postal_code,
    country: s.country,
    mailer_api_key: s.mailer_api_key,
    event_webhook_public_key: s.event_webhook_public_key,
    track_opens: s.track_opens,
    track_clicks: s.track_clicks,
    default_time_zone: s.default_time_zone || 'UTC',
    max_send_rate: str(s.max_send_rate, ''),
    smtp_host: str(s.smtp_host, ''),
    smtp_port: str(s.smtp_port, '587'),
    smtp_security: str(s.smtp_security, 'starttls'),
    smtp_username: str(s.smtp_username, ''),
    smtp_password: str(s.smtp_password, ''),
    smtp_max_connections: str(s.smtp_max_connections, '4'),
    ses_region: str(s.ses_region, ''),
    ses_access_key_id: str(s.ses_access_key_id, ''),
    ses_secret_access_key: str(s.ses_secret_access_key, ''),
    ses_configuration_set: str(s.ses_configuration_set, ''),
    bounce: !!bm,
    'bounce_mailbox.imap_host': bm?.imap_host ?? '',
    'bounce_mailbox.imap_port': str(bm?.imap_port, '993'),
    'bounce_mailbox.imap_username': bm?.imap_username ?? '',
    'bounce_mailbox.imap_password': bm?.imap_password ?? '',
    'bounce_mailbox.imap_folder': bm?.imap_folder ?? 'INBOX',
  };
}

/** body is the PUT of the form: the common fields and the chosen provider's. */
function body(v: Input): Schemas['EmailSettingsInput'] {
  const num = (x: string) => (x.trim() === '' ? null : Number(x));
  const out: Schemas['EmailSettingsInput'] = {
    provider: v.provider,
    sender_name: v.sender_name,
    sender_email: v.sender_email,
    reply_to_email: v.reply_to_email,
    company_name: v.company_name,
    address_line1: v.address_line1,
    address_line2: v.address_line2,
    city: v.city,
    state: v.state,
    postal_code: v.postal_code,
    country: v.country,
    track_opens: v.track_opens,
    track_clicks: v.track_clicks,
    default_time_zone: v.default_time_zone,
    max_send_rate: num(v.max_send_rate),
  };
  if (v.provider === 'sendgrid') {
    out.mailer_api_key = v.mailer_api_key;
    out.event_webhook_public_key = v.event_webhook_public_key;
  } else if (v.provider === 'smtp') {
    Object.assign(out, {
      smtp_host: v.smtp_host,
      smtp_port: num(v.smtp_port),
      smtp_security: v.smtp_security as Schemas['SMTPSecurity'],
      smtp_username: v.smtp_username,
      smtp_password: v.smtp_password,
      smtp_max_connections: num(v.smtp_max_connections),
    });
    if (v.bounce) {
      out.bounce_mailbox = {
        imap_host: v['bounce_mailbox.imap_host'],
        imap_port: num(v['bounce_mailbox.imap_port']) ?? undefined,
        imap_username: v['bounce_mailbox.imap_username'],
        imap_password: v['bounce_mailbox.imap_password'],
        imap_folder: v['bounce_mailbox.imap_folder'],
      };
    }
  } else {
    Object.assign(out, {
      ses_region: v.ses_region,
      ses_access_key_id: v.ses_access_key_id,
      ses_secret_access_key: v.ses_secret_access_key,
      ses_configuration_set: v.ses_configuration_set,
    });
  }
  return out;
}

/** Verify tries the saved provider for real and says what it answered. */
function Verify({ bookId, saved }: { bookId: string; saved: boolean }) {
  const [state, setState] = useState<{ busy: boolean; result?: Schemas['VerifyResult']; error?: string }>({ busy: false });
  return (
    <section aria-labelledby="verify" class="verify">
      <h2 id="verify">Connection</h2>
      <p class="hint">Tries the saved provider without sending an email: save your changes first.</p>
      <button
        type="button"
        class="secondary"
        disabled={state.busy || !saved}
        onClick={async () => {
          setState({ busy: true });
          try {
            const r = await ok(api.POST('/api/campaign-settings/verify', { params: { header: inBook(bookId) } }));
            setState({ busy: false, result: r.data });
          } catch (e) {
            setState({ busy: false, error: errorText(e) });
          }
        }}
      >
        {state.busy ? 'Verifying…' : 'Verify connection'}
      </button>
      <p role="status" class={state.result ? (state.result.ok ? 'ok' : 'error') : undefined}>
        {state.result ? `${state.result.ok ? 'Connection works' : 'Connection failed'}: ${state.result.detail}` : state.error ?? ''}
      </p>
    </section>
  );
}

/** defaultChecklist is what a book without settings still needs. */
const defaultChecklist: Check[] = [
  { key: 'provider', required: true, done: false, title: 'SendGrid key saved', detail: 'Campaign email cannot be sent without it.' },
  { key: 'sender_email', required: true, done: false, title: 'Sender email set', detail: 'Campaign email cannot be sent without it.' },
  { key: 'company_address', required: false, done: false, title: 'Company address present', detail: 'Give the company name, a street address, the city and the country.' },
  { key: 'feedback', required: false, done: false, title: 'Delivery events arriving', detail: 'Set up the Event Webhook in SendGrid and save its verification key below.' },
];

export function Checklist({ settings: s }: { settings: Settings | null }) {
  const items = s?.checklist ?? defaultChecklist;
  return (
    <section aria-labelledby="setup" class="checklist">
      <h2 id="setup">Setup checklist</h2>
      <ul>
        {items.map((i) => (
          <li class={i.done ? 'done' : 'todo'}>
            <span aria-hidden="true">{i.done ? '✓' : '○'}</span> <strong>{i.title}</strong>
            <span class="visually-hidden">{i.done ? ': done.' : ': to do.'}</span> {i.detail}
          </li>
        ))}
      </ul>
    </section>
  );
}
