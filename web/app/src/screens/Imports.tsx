// Imports and exports of a book: upload a CSV or vCard file, see what the
// import would read (the detected columns over the first rows) and change
// where each column goes, choose what duplicates do, try a dry run, follow
// the import's progress and read its row errors; the past imports; the
// book exported as CSV or vCard (the contacts table exports its filter).
import { useEffect, useState } from 'preact/hooks';
import { api, errorText, ok, type Schemas } from '../api/client';
import { emailLabels, phoneLabels, type AddressLabel, type SocialLabel } from '../api/enums';
import { plural } from '../lib/bulk';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { DataTable } from '../ui/DataTable';
import { Field, FormError } from '../ui/Field';
import { BookMissing, Notice, Page } from '../ui/Page';

type Import = Schemas['Import'];
type Preview = Schemas['ImportPreview'];
type Mode = Import['mode'];

// Where a CSV column can go, as the import names it.
const targets: [string, string][] = [
  ['ignore', 'Nothing (ignore the column)'],
  ['full_name', 'Full name (split into first and last)'],
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['company', 'Company'],
  ['job_title', 'Job title'],
  ['notes', 'Notes'],
  ['website', 'Website'],
  ['birthday', 'Birthday'],
  ['starred', 'Starred'],
  ['labels', 'Labels'],
  ...emailLabels.map((l): [string, string] => [`emails.${l}`, `Email (${l})`]),
  ...phoneLabels.map((l): [string, string] => [`phones.${l}`, `Phone (${l})`]),
  ...(['home', 'work'] as const satisfies readonly AddressLabel[]).flatMap((l) => ['street', 'city', 'state', 'zip', 'country'].map((p): [string, string] => [`addresses.${l}.${p}`, `Address (${l}): ${p}`])),
  ...(['linkedin', 'x', 'github', 'other'] as const satisfies readonly SocialLabel[]).map((l): [string, string] => [`socials.${l}`, `Profile: ${l}`]),
];
const modes: Record<Mode, string> = {
  skip: 'Skip the row (keep the contact as it is)',
  update: 'Update the contact with the row’s values',
  create: 'Create another contact anyway',
};
const states: Record<Import['status'], string> = { queued: 'Waiting', running: 'Running', succeeded: 'Done', failed: 'Failed', canceled: 'Canceled' };
const finished = (i: Import) => i.status === 'succeeded' || i.status === 'failed' || i.status === 'canceled';

// The API's limit on an import file. A larger file is refused here, before
// it is sent: a browser still uploading does not read the API's early 413,
// so the upload would end as a network error instead of this sentence.
const maxImportMB = 50;
const tooLarge = `The file is larger than ${maxImportMB} MB; split it into several imports.`;

export default function Imports({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { book, booksLoaded, fields } = useBook(bookId);
  const [current, setCurrent] = useState<Import | null>(null);
  const past = useList<Import>(async (signal) => {
    const r = await ok(api.GET('/api/books/{id}/imports', { params: { path: { id: bookId } }, signal }));
    return { data: r.data, meta: { total: r.data.length } };
  }, `${bookId}/${current?.id ?? ''}/${current && finished(current) ? 'done' : ''}`);
  const canWrite = atLeast(w.role, 'member');
  if (!book) return <Page title="Imports"><BookMissing loaded={booksLoaded} /></Page>;
  return (
    <Page title={`Imports and exports of ${book.name}`}>
      <section aria-labelledby="import">
        <h2 id="import">Import contacts</h2>
        {canWrite ? (
          <ImportWizard bookId={bookId} customFields={fields ?? []} onStarted={setCurrent} />
        ) : (
          <p class="hint">Importing: {needs('member')}</p>
        )}
        {current && <Progress bookId={bookId} started={current} onChange={setCurrent} />}
      </section>
      <section aria-labelledby="past">
        <h2 id="past">Past imports</h2>
        <DataTable
          caption="Past imports, newest first"
          rows={past.rows}
          rowKey={(i) => i.id}
          loading={past.loading}
          error={past.error}
          empty="No import yet."
          columns={[
            { key: 'at', header: 'Started', cell: (i) => new Date(i.created_at).toLocaleString() },
            { key: 'format', header: 'File', cell: (i) => `${i.format === 'vcard' ? 'vCard' : 'CSV'}${i.dry_run ? ', dry run' : ''}` },
            { key: 'status', header: 'Status', cell: (i) => states[i.status] },
            { key: 'rows', header: 'Rows', cell: (i) => `${i.processed_rows.toLocaleString('en')} of ${i.total_rows.toLocaleString('en')}` },
            { key: 'result', header: 'Result', cell: (i) => `${i.created} created, ${i.updated} updated, ${i.skipped} skipped, ${i.failed} failed` },
          ]}
        />
      </section>
      <section aria-labelledby="export">
        <h2 id="export">Export</h2>
        {canWrite ? (
          <p>
            The whole book as{' '}
            <a href={`/api/books/${bookId}/export?format=csv`} download>
              CSV
            </a>{' '}
            or{' '}
            <a href={`/api/books/${bookId}/export?format=vcard`} download>
              vCard
            </a>
            ; a CSV export imports back as it is. To export some contacts, filter the <a href={`/app/books/${bookId}/contacts`}>contacts table</a> and use its Export.
          </p>
        ) : (
          <p class="hint">Exporting: {needs('member')}</p>
        )}
      </section>
    </Page>
  );
}

function ImportWizard({ bookId, customFields, onStarted }: { bookId: string; customFields: Schemas['FieldDefinition'][]; onStarted: (i: Import) => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [changed, setChanged] = useState(false);
  const [mode, setMode] = useState<Mode>('skip');
  const [dryRun, setDryRun] = useState(false);
  const [createLabels, setCreateLabels] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const options = [...targets, ...customFields.map((f): [string, string] => [`custom.${f.key}`, `Custom field: ${f.name}`])];

  function form(extra: Record<string, string>): FormData {
    const data = new FormData();
    data.append('file', file!);
    if (changed) data.append('mapping', JSON.stringify(mapping));
    for (const [k, v] of Object.entries(extra)) data.append(k, v);
    return data;
  }
  async function send<T>(path: string, data: FormData, signal?: AbortSignal): Promise<T> {
    // The typed client has no multipart encoder: the form goes as it is.
    const r = await api.POST(path as '/api/books/{id}/imports', {
      params: { path: { id: bookId } },
      body: data as unknown as Schemas['ImportUpload'],
      bodySerializer: (b) => b as unknown as FormData,
      signal,
    });
    return (await ok(Promise.resolve(r))).data as T;
  }

  // A chosen file is read at once (nothing is queued): its format, count,
  // columns with their detected fields, and first records. Another file
  // drops the answer for this one.
  const tooBig = !!file && file.size > maxImportMB << 20;
  const read = useResource((signal) => send<Preview>(`/api/books/{id}/imports/preview`, form({}), signal), [file], { enabled: !!file && !tooBig });
  const preview = read.data;
  useEffect(() => {
    if (preview && !changed) setMapping(Object.fromEntries(preview.columns.map((c) => [c.header, c.target])));
  }, [preview]);
  const reading = !!file && !tooBig && read.loading;

  return (
    <div class="wizard">
      <Field
        label="File (CSV or vCard)"
        type="file"
        accept=".csv,.vcf,.vcard,text/csv,text/vcard"
        hint={`Up to ${maxImportMB} MB and 200,000 contacts. CSV from this service, Google Contacts, Outlook or Mailchimp is read by its column names.`}
        onChange={(e) => {
          setChanged(false);
          setError('');
          setFile((e.target as HTMLInputElement).files?.[0] ?? null);
        }}
      />
      <FormError message={error || (tooBig ? tooLarge : read.error)} />
      {(busy || reading) && !preview && <p class="state">Reading the file…</p>}
      {preview && (
        <>
          <p>
            {plural(preview.total_rows, preview.format === 'vcard' ? 'contact' : 'row')} in a {preview.format === 'vcard' ? 'vCard' : 'CSV'} file.
          </p>
          {preview.format === 'csv' ? (
            <div class="table-wrap">
              <table>
                <caption>Where each column goes, over the first rows</caption>
                <thead>
                  <tr>
                    <th scope="col">Column</th>
                    <th scope="col">Goes to</th>
                    {preview.rows.map((_, i) => (
                      <th scope="col">Row {i + 2}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {preview.columns.map((c, j) => (
                    <tr>
                      <th scope="row">{c.header}</th>
                      <td>
                        <select
                          aria-label={`Field for ${c.header}`}
                          value={mapping[c.header] ?? 'ignore'}
                          onChange={(e) => {
                            setMapping({ ...mapping, [c.header]: (e.target as HTMLSelectElement).value });
                            setChanged(true);
                          }}
                        >
                          {!options.some(([k]) => k === mapping[c.header]) && <option value={mapping[c.header]}>{mapping[c.header]}</option>}
                          {options.map(([k, name]) => (
                            <option value={k}>{name}</option>
                          ))}
                        </select>
                      </td>
                      {preview.rows.map((r) => (
                        <td>{r[j] ?? ''}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <ul>
              {preview.rows.map((r) => (
                <li>{r.filter(Boolean).join(' · ')}</li>
              ))}
            </ul>
          )}
          <Field label="When an address is already in the book" as="select" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as Mode)}>
            {(Object.keys(modes) as Mode[]).map((m) => (
              <option value={m}>{modes[m]}</option>
            ))}
          </Field>
          <Field label="Create the labels and custom fields the file names that the book lacks" type="checkbox" checked={createLabels} onChange={(e) => setCreateLabels((e.target as HTMLInputElement).checked)} />
          <Field label="Dry run: write nothing, report what would happen" type="checkbox" checked={dryRun} onChange={(e) => setDryRun((e.target as HTMLInputElement).checked)} />
          <button
            type="button"
            disabled={busy || reading}
            onClick={async () => {
              setBusy(true);
              setError('');
              try {
                onStarted(await send<Import>('/api/books/{id}/imports', form({ mode, dry_run: String(dryRun), create_labels: String(createLabels) })));
              } catch (e) {
                setError(errorText(e));
              } finally {
                setBusy(false);
              }
            }}
          >
            {dryRun ? 'Start the dry run' : 'Start import'}
          </button>
        </>
      )}
    </div>
  );
}

function Progress({ bookId, started, onChange }: { bookId: string; started: Import; onChange: (i: Import) => void }) {
  const [notice, setNotice] = useState('');
  // The import is looked at again 250 ms after each answer until it has
  // finished; a failed look stops looking and says why.
  const poll = useResource(
    (signal) => ok(api.GET('/api/books/{id}/imports/{import_id}', { params: { path: { id: bookId, import_id: started.id } }, signal })).then((r) => r.data),
    [bookId, started.id],
    { enabled: !finished(started) },
  );
  const i = poll.data ?? started;
  const setI = poll.set;
  useEffect(() => {
    if (finished(i)) {
      onChange(i);
      return;
    }
    if (!poll.data) return;
    const t = setTimeout(() => void poll.reload(), 250);
    return () => clearTimeout(t);
  }, [i]);
  return (
    <section aria-labelledby="progress" class="import-progress">
      <h3 id="progress">{i.dry_run ? 'Dry run' : 'Import'}: {states[i.status].toLowerCase()}</h3>
      <p>
        <label>
          Import progress <progress max={Math.max(1, i.total_rows)} value={i.processed_rows} />{' '}
        </label>
        {i.processed_rows.toLocaleString('en')} of {i.total_rows.toLocaleString('en')} rows
      </p>
      <p role="status">
        {finished(i) &&
          `${i.dry_run ? 'Would have: ' : ''}${i.created} created, ${i.updated} updated, ${i.skipped} skipped, ${i.failed} failed.${i.failure_reason ? ' ' + i.failure_reason : ''}`}
      </p>
      {!finished(i) && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            try {
              setI((await ok(api.DELETE('/api/books/{id}/imports/{import_id}', { params: { path: { id: bookId, import_id: i.id } } }))).data);
            } catch (e) {
              setNotice(errorText(e));
            }
          }}
        >
          Cancel import
        </button>
      )}
      <Notice message={notice || poll.error} />
      {i.errors.length > 0 && (
        <DataTable
          caption="Rows that failed"
          rows={i.errors}
          rowKey={(e) => `${e.row}/${e.column}/${e.message}`}
          empty=""
          columns={[
            { key: 'row', header: 'Row', cell: (e) => e.row },
            { key: 'column', header: 'Column', cell: (e) => e.column },
            { key: 'message', header: 'Problem', cell: (e) => e.message },
          ]}
        />
      )}
    </section>
  );
}
