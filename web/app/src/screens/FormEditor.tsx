// The sign-up form editor: name, the fields asked for (each optional or
// required), the labels every sign-up gets, double opt-in, the consent
// text, the success message or a redirect; a live preview of the hosted
// page; and, once saved, the page's link, the embed snippet and the
// submission and confirmation counts.
import { useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, ApiError, errorText, inBook, ok, type FieldDefinition, type Label } from '../api/client';
import { checkRequired } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { embedSnippet, fieldChoices, type FormField, type SignupForm } from '../lib/signupForm';
import { useBook } from '../lib/useBook';
import { useForm } from '../lib/useForm';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { CopyField } from '../ui/CopyField';
import { Field } from '../ui/Field';
import { Form } from '../ui/Form';
import { BookMissing, Notice, Page } from '../ui/Page';

export default function FormEditor({ book: bookId, id }: { book: string; id: string }) {
  const { book, booksLoaded, labels, fields } = useBook(bookId);
  // A form just created here keeps its editor while the address moves on.
  const created = useRef('');
  const fresh = id === 'new' || id === created.current;
  const r = useResource((signal) => ok(api.GET('/api/forms/{id}', { params: { path: { id } }, signal })).then((a) => a.data), [bookId, id], {
    enabled: !fresh,
    describe: (e) => (e instanceof ApiError && e.status === 404 ? 'This form does not exist (any more).' : errorText(e)),
  });
  // null: a new form; undefined: still loading.
  const saved: SignupForm | null | undefined = fresh ? null : (r.data ?? undefined);
  const error = fresh ? '' : r.error;
  if (!book) return <Page title="Form"><BookMissing loaded={booksLoaded} /></Page>;
  if (error) return <Page title="Form"><p role="alert">{error}</p></Page>;
  if (saved === undefined || !labels || !fields) return <Page title="Form"><p>Loading…</p></Page>;
  return <Editor key={saved?.id ?? 'new'} bookId={bookId} bookName={book.name} initial={saved} labels={labels} custom={fields} onCreated={(f) => (created.current = f)} />;
}

interface EditorProps {
  bookId: string;
  bookName: string;
  initial: SignupForm | null;
  labels: Label[];
  custom: FieldDefinition[];
  onCreated: (id: string) => void;
}

function Editor({ bookId, bookName, initial, labels, custom, onCreated }: EditorProps) {
  const w = useWorkspace();
  const { route } = useLocation();
  const canWrite = atLeast(w.role, 'member');
  const form = useForm({
    name: initial?.name ?? '',
    consent_text: initial?.consent_text ?? '',
    success_message: initial?.success_message ?? '',
    redirect_url: initial?.redirect_url ?? '',
  });
  const [doubleOptIn, setDoubleOptIn] = useState(initial?.double_opt_in ?? true);
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const [asked, setAsked] = useState<FormField[]>(initial?.fields ?? [{ key: 'first_name', required: false }]);
  const [labelIDs, setLabelIDs] = useState<string[]>(initial?.label_ids ?? []);
  const [saved, setSaved] = useState(initial);
  const [notice, setNotice] = useState('');
  const choices = fieldChoices(custom);
  const topics = labels.filter((l) => l.public);

  function toggleField(key: string, on: boolean) {
    setAsked((fs) => (on ? [...fs, { key, required: false }] : fs.filter((f) => f.key !== key)));
  }
  function toggleRequired(key: string, on: boolean) {
    setAsked((fs) => fs.map((f) => (f.key === key ? { ...f, required: on } : f)));
  }
  // The fields in the hosted page's order.
  const ordered = choices.map((c) => asked.find((f) => f.key === c.key)).filter((f): f is FormField => !!f);
  const draft: SignupForm = {
    ...(saved ?? { id: 'new', book_id: bookId, submissions_count: 0, confirmed_count: 0, created_at: '', updated_at: '' }),
    ...form.values,
    fields: ordered,
    label_ids: labelIDs,
    double_opt_in: doubleOptIn,
    enabled,
  };

  return (
    <Page title={saved ? `Form ${saved.name}` : 'New form'}>
      <p>
        <a href={`/app/books/${bookId}/forms`}>Back to the forms of {bookName}</a>
      </p>
      {!canWrite && <p class="hint">Writing forms: {needs('member')}</p>}
      <Notice message={notice} />
      <div class="editor">
        <div class="editor-main">
          <Form
            submit={saved ? 'Save form' : 'Create form'}
            form={form}
            checks={() => ({ name: checkRequired(form.values.name, 'a name') })}
            send={async () => {
              const body = { ...form.values, fields: ordered, label_ids: labelIDs, double_opt_in: doubleOptIn, enabled };
              if (saved) {
                setSaved((await ok(api.PATCH('/api/forms/{id}', { params: { path: { id: saved.id } }, body }))).data);
              } else {
                const r = await ok(api.POST('/api/forms', { params: { header: inBook(bookId) }, body }));
                setSaved(r.data);
                onCreated(r.data.id);
                route(`/app/books/${bookId}/forms/${r.data.id}`, true);
              }
              setNotice('Form saved.');
            }}
          >
            <fieldset disabled={!canWrite} class="plain">
              <Field label="Name" required hint="The heading of the form's page." {...form.bind('name')} />
              <Field label="Form is on" type="checkbox" checked={enabled} onChange={(e) => setEnabled((e.target as HTMLInputElement).checked)} hint="A form that is off answers “not available”." />
              <Field
                label="Double opt-in"
                type="checkbox"
                checked={doubleOptIn}
                onChange={(e) => setDoubleOptIn((e.target as HTMLInputElement).checked)}
                hint="People confirm by a link in an email before they become contacts (needs the book's email settings)."
                error={form.errors.double_opt_in}
              />
              <fieldset>
                <legend>Fields (Email is always asked for and required)</legend>
                {choices.map((c) => {
                  const f = asked.find((x) => x.key === c.key);
                  return (
                    <div class="field-pair">
                      <Field label={`Ask for ${c.label}`} type="checkbox" checked={!!f} onChange={(e) => toggleField(c.key, (e.target as HTMLInputElement).checked)} />
                      {f && <Field label={`${c.label} required`} type="checkbox" checked={f.required} onChange={(e) => toggleRequired(c.key, (e.target as HTMLInputElement).checked)} />}
                    </div>
                  );
                })}
                {form.errors.fields && <p class="error">{form.errors.fields}</p>}
              </fieldset>
              <fieldset>
                <legend>Labels every sign-up gets</legend>
                {labels.length === 0 && <p class="hint">The book has no labels yet.</p>}
                {labels.map((l) => (
                  <Field
                    label={`Add label ${l.name}`}
                    type="checkbox"
                    checked={labelIDs.includes(l.id)}
                    onChange={(e) => setLabelIDs((ids) => ((e.target as HTMLInputElement).checked ? [...ids, l.id] : ids.filter((x) => x !== l.id)))}
                  />
                ))}
              </fieldset>
              <Field label="Consent text" as="textarea" rows={3} hint="Shown beside a checkbox people must tick; recorded with each sign-up. Leave empty for no checkbox." {...form.bind('consent_text')} />
              <Field label="Success message" as="textarea" rows={2} hint="Shown after a submission; empty for the default." {...form.bind('success_message')} />
              <Field label="Redirect URL" type="url" hint="An https:// page to send people to instead of the success message." {...form.bind('redirect_url')} />
            </fieldset>
          </Form>
          {saved && <Published form={saved} custom={custom} topics={topics} />}
        </div>
        <Preview form={draft} custom={custom} topics={topics} />
      </div>
    </Page>
  );
}

/** Published shows a saved form's link, embed snippet and counts. */
function Published({ form, custom, topics }: { form: SignupForm; custom: FieldDefinition[]; topics: Label[] }) {
  const origin = location.origin;
  return (
    <section aria-labelledby="published">
      <h2 id="published">Publishing</h2>
      <dl class="figures">
        <div>
          <dt>Submissions</dt>
          <dd>{form.submissions_count.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Sign-ups</dt>
          <dd>{form.confirmed_count.toLocaleString('en')}</dd>
        </div>
      </dl>
      <p>
        <a href={`/f/${form.id}`} target="_blank" rel="noopener">
          Open the hosted page
        </a>
      </p>
      <CopyField label="Link to the hosted page" value={`${origin}/f/${form.id}`} button="Copy link" />
      <CopyField label="Embed snippet" value={embedSnippet(origin, form, custom, topics)} button="Copy snippet" rows={10} hint="Paste into any page: a plain HTML form, no script needed." />
    </section>
  );
}

/** Preview draws the hosted page as the form stands, before it is saved. */
function Preview({ form, custom, topics }: { form: SignupForm; custom: FieldDefinition[]; topics: Label[] }) {
  const choices = fieldChoices(custom);
  return (
    <aside class="editor-side" aria-labelledby="preview">
      <h2 id="preview">Preview of the hosted page</h2>
      <div class="form-preview" inert>
        <h3>{form.name || 'Untitled form'}</h3>
        <p>
          Email <span aria-hidden="true">*</span>
        </p>
        {form.fields.map((f) => {
          const c = choices.find((x) => x.key === f.key);
          if (!c) return null;
          if (f.key === 'topics') {
            return (
              <div>
                <p>Topics</p>
                {topics.length === 0 && <p class="hint">No public label: mark labels public in the book's labels.</p>}
                <ul>
                  {topics.map((t) => (
                    <li>☐ {t.name}{t.description ? ` — ${t.description}` : ''}</li>
                  ))}
                </ul>
              </div>
            );
          }
          return (
            <p>
              {c.label}
              {f.required && <span aria-hidden="true"> *</span>}
            </p>
          );
        })}
        {form.consent_text && <p>☐ {form.consent_text}</p>}
        <p>
          <span class="button">Subscribe</span>
        </p>
      </div>
    </aside>
  );
}
