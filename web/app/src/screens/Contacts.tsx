// The contacts of a book: search, label and starred filters, sort, server-side
// paging, a column picker (custom fields too), all kept in the URL; select
// many and change them in bulk.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { api, errorText, inBook, ok, type Contact, type FieldDefinition, type Label } from '../api/client';
import { bulkMax, chunkSize, plural, runChunked } from '../lib/bulk';
import { builtinColumns, exportURL, listQuery, pageCount, pageSizes, parseView, viewToSearch, type ContactsView } from '../lib/contactsView';
import { atLeast } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useList } from '../lib/useList';
import { useResource } from '../lib/useResource';
import { useWorkspace } from '../lib/workspace';
import { Pager } from '../ui/Pager';
import { DataTable, type Column } from '../ui/DataTable';
import { Dialog } from '../ui/Dialog';
import { Field, FormError } from '../ui/Field';
import { BookMissing, Notice, Page } from '../ui/Page';
import { contactName, primaryEmail, primaryPhone } from '../lib/contact';
import { LabelChips } from '../ui/LabelChips';
import { filterRule, type Rule } from '../lib/segmentRule';
import { useSegments } from '../lib/useSegments';

type SegmentRef = { id: string; name: string };

const builtinNames: Record<(typeof builtinColumns)[number], string> = {
  name: 'Name',
  email: 'Email',
  phone: 'Phone',
  company: 'Company',
  job_title: 'Job title',
  labels: 'Labels',
  updated_at: 'Updated',
  created_at: 'Created',
};

const searchDelay = 150;

export default function Contacts({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { url, route } = useLocation();
  const search = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const view = useMemo(() => parseView(search), [search]);
  const { book, booksLoaded, labels, fields } = useBook(bookId);
  const canWrite = atLeast(w.role, 'member');

  // The search the shown rows answer (the box may already hold a newer one).
  const [answered, setAnswered] = useState<string | null>(null);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [notice, setNotice] = useState('');
  const [picking, setPicking] = useState(false);
  const [bulk, setBulk] = useState<BulkKind | null>(null);
  const [q, setQ] = useState(view.q);
  const segments = useSegments(bookId);

  const go = (next: Partial<ContactsView>, replace = false) => {
    const s = viewToSearch({ ...view, ...next });
    route(`/app/books/${bookId}/contacts${s ? '?' + s : ''}`, replace);
  };

  // Typing waits a moment, then replaces the view; a newer query cancels the older request.
  useEffect(() => setQ(view.q), [view.q]);
  useEffect(() => {
    if (q === view.q) return;
    const t = setTimeout(() => go({ q, page: 1 }, true), searchDelay);
    return () => clearTimeout(t);
  }, [q]);

  const { rows, setRows, total, loading, error, reload } = useList<Contact>(
    (signal) =>
      ok(api.GET('/api/contacts', { params: { header: inBook(bookId), query: listQuery(view) }, signal })).then((r) => {
        setAnswered(view.q);
        return r;
      }),
    `${bookId}?${viewToSearch({ ...view, columns: [] })}`,
    !!book,
  );

  // Another book or another filter starts with nothing selected, so a bulk
  // change never reaches contacts the view no longer shows.
  useEffect(() => setSelected(new Set()), [bookId, view.q, view.label, view.starred, view.segment]);

  // A page past the end (after a deletion, or an old link) moves to the last page.
  useEffect(() => {
    if (!loading && rows?.length === 0 && total > 0 && view.page > 1) go({ page: pageCount(total, view.size) }, true);
  }, [loading, rows, total]);

  if (!book) return <Page title="Contacts"><BookMissing loaded={booksLoaded} /></Page>;

  const columns = buildColumns(view.columns, fields ?? [], canWrite, (c) => toggleStar(c));
  async function toggleStar(c: Contact) {
    try {
      const r = await ok(api.PATCH('/api/contacts/{id}', { params: { path: { id: c.id } }, body: { starred: !c.starred } }));
      setRows((rs) => rs?.map((x) => (x.id === c.id ? r.data : x)) ?? null);
    } catch (e) {
      setNotice(errorText(e));
    }
  }

  const pages = pageCount(total, view.size);
  const onPage = rows?.map((r) => r.id) ?? [];
  const wholePage = onPage.length > 0 && onPage.every((id) => selected.has(id));
  const filtered = !!(view.q || view.label || view.starred || view.segment);
  // The whole segment can be acted on when it is the only filter: the API
  // takes the segment, and then acts on exactly what the table shows.
  const segment = view.segment && !view.q && !view.label && !view.starred ? segments.find((x) => x.id === view.segment) : undefined;

  /** saveAsSegment opens the rule builder on the rule of the current filters. */
  async function saveAsSegment() {
    try {
      const parts: Rule[] = [];
      if (view.segment) {
        const r = await ok(api.GET('/api/segments/{id}', { params: { header: inBook(bookId), path: { id: view.segment } } }));
        parts.push(r.data.rule as Rule);
      }
      const f = filterRule(view) as { all: Rule[] };
      const rule: Rule = { all: [...parts, ...f.all] };
      route(`/app/books/${bookId}/segments/new?${new URLSearchParams({ rule: JSON.stringify(rule) })}`);
    } catch (e) {
      setNotice(errorText(e));
    }
  }

  return (
    <Page
      title={book.name}
      actions={
        <>
          <a class="button secondary" href={`/app/books/${bookId}/labels`}>
            Labels and fields
          </a>
          <a class="button secondary" href={`/app/books/${bookId}/sync`}>
            Sync with your phone
          </a>
          {canWrite && filtered && (
            <button type="button" class="secondary" onClick={() => void saveAsSegment()}>
              Save as segment
            </button>
          )}
          {canWrite && (
            <a class="button secondary" href={exportURL(bookId, view)} download>
              {filtered ? 'Export these contacts' : 'Export'}
            </a>
          )}
          {canWrite && (
            <button type="button" onClick={() => route(`/app/books/${bookId}/contacts/new`)}>
              New contact
            </button>
          )}
        </>
      }
    >
      <div class="toolbar" role="search">
        <Field label="Search contacts" type="search" value={q} onInput={(e) => setQ((e.target as HTMLInputElement).value)} placeholder="Name, company or email" />
        <Field label="Label" as="select" value={view.label} onChange={(e) => go({ label: (e.target as HTMLSelectElement).value, page: 1 })}>
          <option value="">Any label</option>
          {labels?.map((l) => (
            <option value={l.id}>{l.name}</option>
          ))}
        </Field>
        <Field label="Segment" as="select" value={view.segment} onChange={(e) => go({ segment: (e.target as HTMLSelectElement).value, page: 1 })}>
          <option value="">No segment</option>
          {segments.map((x) => (
            <option value={x.id}>{x.name}</option>
          ))}
        </Field>
        <Field label="Starred" as="select" value={view.starred} onChange={(e) => go({ starred: (e.target as HTMLSelectElement).value as ContactsView['starred'], page: 1 })}>
          <option value="">All contacts</option>
          <option value="true">Starred only</option>
          <option value="false">Not starred</option>
        </Field>
        <button type="button" class="secondary" onClick={() => setPicking(true)}>
          Columns
        </button>
      </div>

      <p class="summary" role="status" aria-live="polite" data-answered={loading ? undefined : (answered ?? undefined)}>
        {loading ? 'Loading…' : error ? '' : plural(total, filtered ? 'matching contact' : 'contact')}
      </p>
      <Notice message={notice} />

      {canWrite && segment && selected.size === 0 && !loading && total > 0 && (
        <div class="bulk-bar" role="region" aria-label="Whole segment">
          <strong>All {plural(total, 'contact')} of “{segment.name}”</strong>
          <button type="button" class="secondary" onClick={() => setBulk('add-label')} disabled={!labels?.length}>
            Add label
          </button>
          <button type="button" class="secondary" onClick={() => setBulk('remove-label')} disabled={!labels?.length}>
            Remove label
          </button>
          <button type="button" class="secondary" onClick={() => setBulk('set-field')} disabled={!fields?.length}>
            Set field
          </button>
          <button type="button" class="secondary" onClick={() => setBulk('enroll')}>
            Enroll in campaign
          </button>
          <button type="button" class="danger" onClick={() => setBulk('delete')}>
            Delete
          </button>
        </div>
      )}

      {canWrite && selected.size > 0 && (
        <div class="bulk-bar" role="region" aria-label="Selected contacts">
          <strong>{plural(selected.size, 'contact')} selected</strong>
          {wholePage && total > onPage.length && selected.size < Math.min(total, bulkMax) && (
            <SelectAllMatching bookId={bookId} view={view} total={total} onSelected={(ids) => setSelected(new Set(ids))} />
          )}
          <button type="button" class="secondary" onClick={() => setBulk('add-label')} disabled={!labels?.length} title={labels?.length ? undefined : 'This book has no labels yet.'}>
            Add label
          </button>
          <button type="button" class="secondary" onClick={() => setBulk('remove-label')} disabled={!labels?.length} title={labels?.length ? undefined : 'This book has no labels yet.'}>
            Remove label
          </button>
          <button type="button" class="secondary" onClick={() => setBulk('set-field')} disabled={!fields?.length} title={fields?.length ? undefined : 'This book has no custom fields yet.'}>
            Set field
          </button>
          <button type="button" class="secondary" onClick={() => setBulk('enroll')}>
            Enroll in campaign
          </button>
          <button type="button" class="danger" onClick={() => setBulk('delete')}>
            Delete
          </button>
          <button type="button" class="link" onClick={() => setSelected(new Set())}>
            Clear selection
          </button>
        </div>
      )}

      <DataTable<Contact>
        caption={`Contacts of ${book.name}`}
        columns={columns}
        rows={rows}
        loading={loading}
        error={error}
        rowKey={(c) => c.id}
        rowLabel={contactName}
        sort={view.sort}
        onSort={(s) => go({ sort: s as ContactsView['sort'], page: 1 })}
        selected={canWrite ? selected : undefined}
        onSelect={(ids, on) =>
          setSelected((s) => {
            const n = new Set(s);
            ids.forEach((id) => (on ? n.add(id) : n.delete(id)));
            return n;
          })
        }
        empty={
          filtered ? (
            <>
              No contacts match. <button type="button" class="link" onClick={() => go({ q: '', label: '', starred: '', segment: '', page: 1 })}>Clear the filters</button>
            </>
          ) : canWrite ? (
            <>
              This book has no contacts yet. <a href={`/app/books/${bookId}/contacts/new`}>Add the first one</a>.
            </>
          ) : (
            'This book has no contacts yet.'
          )
        }
      />

      <Pager page={view.page} pages={pages} onPage={(page) => go({ page })} size={view.size} sizes={pageSizes} onSize={(size) => go({ size, page: 1 })} />

      {picking && <ColumnPicker columns={view.columns} fields={fields ?? []} onClose={() => setPicking(false)} onApply={(columns) => (setPicking(false), go({ columns }, true))} />}
      {bulk && (
        <BulkDialog
          kind={bulk}
          bookId={bookId}
          ids={[...selected]}
          segment={selected.size === 0 && segment ? { ...segment, total } : undefined}
          labels={labels ?? []}
          fields={fields ?? []}
          onClose={() => setBulk(null)}
          onDone={(message) => {
            setBulk(null);
            setNotice(message);
            setSelected(new Set());
            reload();
            void w.reloadBooks();
          }}
        />
      )}
    </Page>
  );
}

function buildColumns(names: string[], fields: FieldDefinition[], canWrite: boolean, star: (c: Contact) => void): Column<Contact>[] {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const out: Column<Contact>[] = [];
  for (const n of names) {
    if (n.startsWith('field:')) {
      const def = byKey.get(n.slice(6));
      if (def) out.push({ key: n, header: def.name, cell: (c) => String((c.custom_fields as Record<string, unknown> | null)?.[def.key] ?? '') });
      continue;
    }
    switch (n) {
      case 'name':
        out.push({
          key: n,
          header: 'Name',
          sort: 'name',
          cell: (c) => (
            <span class="contact-name">
              {canWrite ? (
                <button type="button" class="star" aria-pressed={c.starred} aria-label={`Star ${contactName(c)}`} onClick={() => star(c)}>
                  {c.starred ? '★' : '☆'}
                </button>
              ) : (
                c.starred && <span aria-label="Starred">★</span>
              )}
              <a href={`/app/contacts/${c.id}`}>{contactName(c)}</a>
            </span>
          ),
        });
        break;
      case 'email':
        out.push({ key: n, header: 'Email', cell: primaryEmail });
        break;
      case 'phone':
        out.push({ key: n, header: 'Phone', cell: primaryPhone });
        break;
      case 'company':
        out.push({ key: n, header: 'Company', cell: (c) => c.company });
        break;
      case 'job_title':
        out.push({ key: n, header: 'Job title', cell: (c) => c.job_title });
        break;
      case 'labels':
        out.push({ key: n, header: 'Labels', cell: (c) => <LabelChips labels={c.labels} /> });
        break;
      case 'created_at':
      case 'updated_at':
        out.push({ key: n, header: builtinNames[n], sort: n, cell: (c) => new Date(c[n]).toLocaleDateString() });
        break;
    }
  }
  return out;
}

function ColumnPicker({ columns, fields, onClose, onApply }: { columns: string[]; fields: FieldDefinition[]; onClose: () => void; onApply: (c: string[]) => void }) {
  const [on, setOn] = useState(new Set(columns));
  const all: [string, string][] = [...builtinColumns.map((c) => [c, builtinNames[c]] as [string, string]), ...fields.map((f) => [`field:${f.key}`, f.name] as [string, string])];
  return (
    <Dialog
      title="Columns"
      open
      onClose={onClose}
      onSubmit={() => onApply(all.map(([k]) => k).filter((k) => on.has(k)))}
      actions={<button type="submit">Show these columns</button>}
    >
      <fieldset>
        <legend>Show</legend>
        {all.map(([key, name]) => (
          <Field
            label={name}
            type="checkbox"
            checked={on.has(key)}
            disabled={key === 'name'}
            onChange={(e) =>
              setOn((s) => {
                const n = new Set(s);
                (e.target as HTMLInputElement).checked ? n.add(key) : n.delete(key);
                return n;
              })
            }
          />
        ))}
      </fieldset>
    </Dialog>
  );
}

/** SelectAllMatching widens a whole-page selection to every contact the view matches. */
function SelectAllMatching({ bookId, view, total, onSelected }: { bookId: string; view: ContactsView; total: number; onSelected: (ids: string[]) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const n = Math.min(total, bulkMax);
  return (
    <>
      <button
        type="button"
        class="link"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError('');
          try {
            const ids: string[] = [];
            const size = 200;
            for (let offset = 0; offset < n; offset += size) {
              const r = await ok(api.GET('/api/contacts', { params: { header: inBook(bookId), query: { ...listQuery(view), limit: size, offset } } }));
              ids.push(...r.data.map((c) => c.id));
              if (r.data.length < size) break;
            }
            onSelected(ids.slice(0, n));
          } catch (e) {
            setError(errorText(e));
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? 'Selecting…' : total > bulkMax ? `Select the first ${plural(n, 'matching contact')}` : `Select all ${plural(n, 'matching contact')}`}
      </button>
      {error && <span role="alert">{error}</span>}
    </>
  );
}

type BulkKind = 'add-label' | 'remove-label' | 'set-field' | 'enroll' | 'delete';

function BulkDialog(p: { kind: BulkKind; bookId: string; ids: string[]; segment?: SegmentRef & { total: number }; labels: Label[]; fields: FieldDefinition[]; onClose: () => void; onDone: (message: string) => void }) {
  const [label, setLabel] = useState(p.labels[0]?.id ?? '');
  const [field, setField] = useState(p.fields[0]?.id ?? '');
  const [value, setValue] = useState('');
  const [chosen, setCampaign] = useState('');
  const [done, setDone] = useState(-1);
  const [error, setError] = useState('');
  const busy = done >= 0;
  const count = p.segment ? plural(p.segment.total, 'contact') : plural(p.ids.length, 'contact');
  // The whole segment goes in one call, whatever its size; a selection in chunks.
  const seg = p.segment;
  const send = (call: (target: { contact_ids: string[] } | { segment_id: string }) => Promise<number>) =>
    seg ? call({ segment_id: seg.id }).then((n) => (setDone(seg.total), n)) : runChunked(p.ids, (c) => call({ contact_ids: c }), setDone);
  const header = { header: inBook(p.bookId) };
  const def = p.fields.find((f) => f.id === field);
  // The campaigns open to enrollment; the first is chosen until another is.
  const open = useResource(
    (signal) => ok(api.GET('/api/campaigns', { params: header, signal })).then((r) => r.data.filter((c) => c.status !== 'archived')),
    [p.kind],
    { enabled: p.kind === 'enroll' },
  );
  const campaigns = p.kind === 'enroll' ? open.data : null;
  const campaign = chosen || (campaigns?.[0]?.id ?? '');
  const text = {
    'add-label': { title: 'Add a label', button: `Add label to ${count}` },
    'remove-label': { title: 'Remove a label', button: `Remove label from ${count}` },
    'set-field': { title: 'Set a custom field', button: `Set field on ${count}` },
    enroll: { title: 'Enroll in a campaign', button: `Enroll ${count}` },
    delete: { title: `Delete ${count}?`, button: `Delete ${count}` },
  }[p.kind];

  async function run() {
    setError('');
    setDone(0);
    try {
      let counted = 0;
      const name = p.labels.find((l) => l.id === label)?.name ?? '';
      switch (p.kind) {
        case 'add-label':
          counted = await send(async (t) => (await ok(api.POST('/api/contacts/bulk-add-label', { params: header, body: { ...t, label_id: label } }))).data.added);
          p.onDone(`Label “${name}” added to ${plural(counted, 'contact')}.`);
          break;
        case 'remove-label':
          counted = await send(async (t) => (await ok(api.POST('/api/contacts/bulk-remove-label', { params: header, body: { ...t, label_id: label } }))).data.removed);
          p.onDone(`Label “${name}” removed from ${plural(counted, 'contact')}.`);
          break;
        case 'set-field':
          counted = await send(async (t) => (await ok(api.POST('/api/contacts/bulk-update-field', { params: header, body: { ...t, field_definition_id: field, value } }))).data.updated);
          p.onDone(`“${def?.name}” set on ${plural(counted, 'contact')}.`);
          break;
        case 'enroll': {
          const into = campaigns?.find((c) => c.id === campaign)?.name ?? '';
          counted = await send(async (t) => (await ok(api.POST('/api/campaigns/{id}/participants', { params: { ...header, path: { id: campaign } }, body: t }))).data.enrolled);
          p.onDone(`${plural(counted, 'contact')} enrolled in “${into}” (those already in it are not counted).`);
          break;
        }
        case 'delete':
          counted = await send(async (t) => (await ok(api.POST('/api/contacts/bulk-delete', { params: header, body: t }))).data.deleted);
          p.onDone(`${plural(counted, 'contact')} deleted.`);
          break;
      }
    } catch (e) {
      setError(errorText(e));
      setDone(-1);
    }
  }

  return (
    <Dialog
      title={text.title}
      open
      onClose={p.onClose}
      busy={busy}
      onSubmit={run}
      actions={
        <button type="submit" class={p.kind === 'delete' ? 'danger' : undefined} disabled={busy || (p.kind === 'enroll' && !campaign)}>
          {text.button}
        </button>
      }
    >
      {(p.kind === 'add-label' || p.kind === 'remove-label') && (
        <Field label="Label" as="select" value={label} onChange={(e) => setLabel((e.target as HTMLSelectElement).value)}>
          {p.labels.map((l) => (
            <option value={l.id}>{l.name}</option>
          ))}
        </Field>
      )}
      {p.kind === 'set-field' && (
        <>
          <Field label="Field" as="select" value={field} onChange={(e) => setField((e.target as HTMLSelectElement).value)}>
            {p.fields.map((f) => (
              <option value={f.id}>{f.name}</option>
            ))}
          </Field>
          <Field
            label="Value"
            type={def?.type === 'number' ? 'number' : def?.type === 'date' ? 'date' : def?.type === 'url' ? 'url' : 'text'}
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
            hint="Leave empty to remove the value."
          />
        </>
      )}
      {p.kind === 'enroll' &&
        (campaigns?.length === 0 ? (
          <p>This book has no campaign to enroll in yet.</p>
        ) : (
          <Field label="Campaign" as="select" value={campaign} onChange={(e) => setCampaign((e.target as HTMLSelectElement).value)}>
            {(campaigns ?? []).map((c) => (
              <option value={c.id}>{c.name}</option>
            ))}
          </Field>
        ))}
      {p.kind === 'delete' && <p>The {count} and their campaign history are deleted. This cannot be undone.</p>}
      {busy && !seg && p.ids.length > chunkSize(p.ids.length) && (
        <p>
          <label>
            Progress <progress max={p.ids.length} value={done} /> {done.toLocaleString('en')} of {p.ids.length.toLocaleString('en')}
          </label>
        </p>
      )}
      <FormError message={error || open.error} />
    </Dialog>
  );
}
