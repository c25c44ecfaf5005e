// The template editor: name, subject and HTML body; a merge-field picker
// (the built-in fields, the book's custom fields, an optional fallback)
// that inserts at the cursor; image upload into the body; a live preview
// rendered by the server's sending renderer with a chosen contact's data;
// and a test email.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, errorText, inBook, ok, type Contact, type Schemas } from '../api/client';
import { contactName } from '../lib/contact';
import { checkEmail, checkRequired } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useForm } from '../lib/useForm';
import { useDebounced } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Field, FormError } from '../ui/Field';
import { Form } from '../ui/Form';
import { BookMissing, Notice, Page } from '../ui/Page';

type Template = Schemas['Template'];
type MergeField = Schemas['MergeField'];

const noFields: MergeField[] = [];
const noContacts: Contact[] = [];

export default function TemplateEditor({ book: bookId, id }: { book: string; id: string }) {
  const { book, booksLoaded } = useBook(bookId);
  // A template just created here: its editor stays as it is (its notice,
  // its cursor) while the address moves on to the template's own.
  const created = useRef('');
  const fresh = id === 'new' || id === created.current;
  const r = useResource((signal) => ok(api.GET('/api/campaign-templates/{id}', { params: { header: inBook(bookId), path: { id } }, signal })).then((a) => a.data), [bookId, id], {
    enabled: !fresh,
    describe: (e) => (e instanceof ApiError && e.status === 404 ? 'This template does not exist (any more).' : errorText(e)),
  });
  // null: a new template; undefined: still loading.
  const template: Template | null | undefined = fresh ? null : (r.data ?? undefined);
  const error = fresh ? '' : r.error;
  if (!book) return <Page title="Template"><BookMissing loaded={booksLoaded} /></Page>;
  if (error) return <Page title="Template">{<p role="alert">{error}</p>}</Page>;
  if (template === undefined) return <Page title="Template">{<p>Loading…</p>}</Page>;
  return <Editor key={id === created.current ? 'new' : (template?.id ?? 'new')} bookId={bookId} bookName={book.name} template={template} onCreated={(t) => (created.current = t)} />;
}

function Editor({ bookId, bookName, template, onCreated }: { bookId: string; bookName: string; template: Template | null; onCreated: (id: string) => void }) {
  const w = useWorkspace();
  const { route } = useLocation();
  const canWrite = atLeast(w.role, 'member');
  const form = useForm({ name: template?.name ?? '', subject: template?.subject ?? '', body_html: template?.body_html ?? '<p>Hello {{first_name | default: "there"}},</p>\n\n<p></p>\n' });
  const [saved, setSaved] = useState(template);
  const [notice, setNotice] = useState('');
  // The subject's and the body's controls, known once focused.
  const subjectRef = useRef<HTMLInputElement | null>(null);
  const bodyRef = useRef<HTMLTextAreaElement | null>(null);
  const lastFocus = useRef<'subject' | 'body_html'>('body_html');
  const dirty = !saved || saved.name !== form.values.name || saved.subject !== form.values.subject || saved.body_html !== form.values.body_html;

  /** insert puts text at the cursor of the subject or the body, whichever had focus last. */
  function insert(text: string) {
    const key = lastFocus.current;
    const el = key === 'subject' ? subjectRef.current : bodyRef.current;
    const value = form.values[key];
    const start = el?.selectionStart ?? value.length;
    const end = el?.selectionEnd ?? value.length;
    form.set(key, value.slice(0, start) + text + value.slice(end));
    requestAnimationFrame(() => {
      el?.focus();
      el?.setSelectionRange(start + text.length, start + text.length);
    });
  }

  const fields = (
    <fieldset disabled={!canWrite} class="plain">
      <Field label="Name" required hint="For you; recipients do not see it." {...form.bind('name')} />
      <Field label="Subject" required onFocus={(e) => ((lastFocus.current = 'subject'), (subjectRef.current = e.target as HTMLInputElement))} {...form.bind('subject')} />
      <Field
        label="Body (HTML)"
        as="textarea"
        rows={16}
        class="code"
        onFocus={(e) => ((lastFocus.current = 'body_html'), (bodyRef.current = e.target as HTMLTextAreaElement))}
        hint="Every email ends with the book's company address and an unsubscribe link, added on sending."
        {...form.bind('body_html')}
      />
    </fieldset>
  );
  return (
    <Page title={saved ? `Template ${saved.name}` : 'New template'}>
      <p>
        <a href={`/app/books/${bookId}/templates`}>Back to the templates of {bookName}</a>
      </p>
      {!canWrite && <p class="hint">Writing templates: {needs('member')}</p>}
      <Notice message={notice} />
      <div class="editor">
        <div class="editor-main">
          {canWrite ? (
            <Form
              submit={saved ? 'Save template' : 'Create template'}
              form={form}
              checks={() => ({ name: checkRequired(form.values.name, 'a name'), subject: checkRequired(form.values.subject, 'a subject') })}
              send={async () => {
                const body = form.values;
                if (saved) {
                  const r = await ok(api.PATCH('/api/campaign-templates/{id}', { params: { header: inBook(bookId), path: { id: saved.id } }, body }));
                  setSaved(r.data);
                } else {
                  const r = await ok(api.POST('/api/campaign-templates', { params: { header: inBook(bookId) }, body }));
                  setSaved(r.data);
                  onCreated(r.data.id);
                  route(`/app/books/${bookId}/templates/${r.data.id}`, true);
                }
                setNotice('Template saved.');
              }}
            >
              {fields}
            </Form>
          ) : (
            <div class="read-only">{fields}</div>
          )}
          {canWrite && <MergeFieldPicker bookId={bookId} onInsert={insert} />}
          {canWrite && <ImageUpload bookId={bookId} onUploaded={(url) => insert(`<img src="${url}" alt="" width="600">`)} />}
          {saved && <SendTest bookId={bookId} template={saved} dirty={dirty} canSend={canWrite} />}
        </div>
        <TemplatePreview bookId={bookId} subject={form.values.subject} body={form.values.body_html} />
      </div>
    </Page>
  );
}

function MergeFieldPicker({ bookId, onInsert }: { bookId: string; onInsert: (text: string) => void }) {
  const [key, setKey] = useState('first_name');
  const [fallback, setFallback] = useState('');
  // Without the list (loading, or refused) the picker offers nothing.
  const fields = useResource((signal) => ok(api.GET('/api/campaign-templates/merge-fields', { params: { header: inBook(bookId) }, signal })).then((r) => r.data), [bookId]).data ?? noFields;
  const builtIn = fields.filter((f) => !f.key.startsWith('custom.'));
  const custom = fields.filter((f) => f.key.startsWith('custom.'));
  return (
    <fieldset class="picker">
      <legend>Merge field</legend>
      <Field label="Field" as="select" value={key} onChange={(e) => setKey((e.target as HTMLSelectElement).value)}>
        <optgroup label="Contact and book">
          {builtIn.map((f) => (
            <option value={f.key}>{f.name}</option>
          ))}
        </optgroup>
        {custom.length > 0 && (
          <optgroup label="Custom fields of the book">
            {custom.map((f) => (
              <option value={f.key}>{f.name}</option>
            ))}
          </optgroup>
        )}
      </Field>
      <Field label="Fallback" value={fallback} hint="Shown when the contact has no value." onInput={(e) => setFallback((e.target as HTMLInputElement).value)} />
      <button type="button" class="secondary" onClick={() => onInsert(fallback.trim() && key !== 'unsubscribe_url' ? `{{${key} | default: ${JSON.stringify(fallback.trim())}}}` : `{{${key}}}`)}>
        Insert field
      </button>
    </fieldset>
  );
}

function ImageUpload({ bookId, onUploaded }: { bookId: string; onUploaded: (url: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  return (
    <div class="picker">
      <Field
        label="Insert image"
        type="file"
        accept="image/png,image/jpeg,image/gif,image/webp"
        disabled={busy}
        hint="PNG, JPEG, GIF or WebP; it goes in at the cursor of the body."
        onChange={async (e) => {
          const input = e.target as HTMLInputElement;
          const file = input.files?.[0];
          if (!file) return;
          setBusy(true);
          setError('');
          try {
            const data = new FormData();
            data.append('image', file);
            const r = await ok(
              api.POST('/api/campaign-images', {
                params: { header: inBook(bookId) },
                body: data as unknown as Schemas['ImageUpload'],
                bodySerializer: (b) => b as unknown as FormData,
              }),
            );
            onUploaded(r.data.url);
          } catch (err) {
            setError(errorText(err));
          } finally {
            setBusy(false);
            input.value = '';
          }
        }}
      />
      <FormError message={error} />
    </div>
  );
}

function SendTest({ bookId, template, dirty, canSend }: { bookId: string; template: Template; dirty: boolean; canSend: boolean }) {
  const w = useWorkspace();
  const form = useForm({ email: w.user.email });
  const [sent, setSent] = useState('');
  if (!canSend) return null;
  return (
    <section aria-labelledby="send-test" class="picker">
      <h2 id="send-test">Test email</h2>
      {dirty ? (
        <p class="hint">Save the template first: the test email is the saved version.</p>
      ) : (
        <Form
          submit="Send test email"
          form={form}
          checks={() => ({ email: checkRequired(form.values.email, 'an address') || checkEmail(form.values.email) })}
          send={async () => {
            setSent('');
            const r = await ok(api.POST('/api/campaign-templates/{id}/send-test', { params: { header: inBook(bookId), path: { id: template.id } }, body: form.values }));
            setSent(r.data.message);
          }}
        >
          <Field label="Send a test to" type="email" hint="Filled with the book's oldest contact; the subject starts with [TEST]." {...form.bind('email')} />
        </Form>
      )}
      <p role="status">{sent}</p>
    </section>
  );
}

/**
 * TemplatePreview renders the subject and body for a chosen contact on the
 * server (the sending renderer) and shows the email in the preview frame
 * (public/preview.html), which may show inline styles and outside images.
 */
function TemplatePreview({ bookId, subject, body }: { bookId: string; subject: string; body: string }) {
  const [contact, setContact] = useState('');
  const frame = useRef<HTMLIFrameElement>(null);
  const ready = useRef(false);
  const input = useDebounced(JSON.stringify([subject, body, contact]), 300);
  const contacts =
    useResource((signal) => ok(api.GET('/api/contacts', { params: { header: inBook(bookId), query: { limit: 50, sort: 'name' } }, signal })).then((r) => r.data), [bookId]).data ??
    noContacts;
  // The email of the previous input stays shown while the new one renders.
  const preview = useResource(
    (signal) => {
      const [s, b, c] = JSON.parse(input) as [string, string, string];
      return ok(api.POST('/api/campaign-templates/preview', { params: { header: inBook(bookId) }, body: { subject: s, body_html: b, contact_id: c || undefined }, signal })).then(
        (r) => r.data,
      );
    },
    [input, bookId],
    { keep: true },
  );
  const { data: rendered, error } = preview;
  const show = () => rendered && ready.current && frame.current?.contentWindow?.postMessage({ html: rendered.html }, location.origin);
  useEffect(() => {
    const onMessage = (e: MessageEvent) => {
      if (e.origin === location.origin && e.source === frame.current?.contentWindow && e.data?.previewReady) {
        ready.current = true;
        show();
      }
    };
    addEventListener('message', onMessage);
    return () => removeEventListener('message', onMessage);
  });
  useEffect(() => void show(), [rendered]);
  return (
    <section aria-labelledby="preview" class="preview">
      <h2 id="preview">Preview</h2>
      <Field label="Preview with" as="select" value={contact} onChange={(e) => setContact((e.target as HTMLSelectElement).value)}>
        <option value="">The oldest contact</option>
        {contacts.map((c) => (
          <option value={c.id}>{contactName(c)}</option>
        ))}
      </Field>
      {error && <p role="alert">{error}</p>}
      <p class="preview-subject">
        <span class="hint">Subject:</span> <output aria-label="Subject as sent">{rendered?.subject ?? ''}</output>
      </p>
      <iframe ref={frame} src="/app/preview.html" title="Preview of the email" />
    </section>
  );
}
