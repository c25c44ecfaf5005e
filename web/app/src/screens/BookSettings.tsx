// A book's labels (create, rename, colour, delete, reorder by drag or by the
// Move buttons) and its custom field definitions (create, delete).
import { useState } from 'preact/hooks';
import { api, errorText, ok, type FieldDefinition, type Label } from '../api/client';
import { checkColor } from '../lib/books';
import { dragProps, moved } from '../lib/reorder';
import { checkRequired, keyFromName } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useForm } from '../lib/useForm';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { LabelChips } from '../ui/LabelChips';
import { BookMissing, Notice, Page } from '../ui/Page';

const fieldTypes: Record<FieldDefinition['type'], string> = { text: 'Text', url: 'Web address', number: 'Number', date: 'Date' };

export default function BookSettings({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { book, booksLoaded, labels, fields, error, reload, setLabels } = useBook(bookId);
  const [editing, setEditing] = useState<Label | 'new' | null>(null);
  const [removing, setRemoving] = useState<{ kind: 'label'; item: Label } | { kind: 'field'; item: FieldDefinition } | null>(null);
  const [addingField, setAddingField] = useState(false);
  const [notice, setNotice] = useState('');
  const canWrite = atLeast(w.role, 'member');
  if (!book) return <Page title="Labels and fields"><BookMissing loaded={booksLoaded} /></Page>;

  async function move(from: number, to: number) {
    if (!labels || to < 0 || to >= labels.length || from === to) return;
    const order = moved(labels, from, to);
    const l = order[to];
    setLabels(order.map((x, i) => ({ ...x, sort_order: i })));
    try {
      for (const [i, x] of order.entries()) {
        if (x.sort_order !== i) await ok(api.PATCH('/api/books/{id}/labels/{lid}', { params: { path: { id: bookId, lid: x.id } }, body: { sort_order: i } }));
      }
      setNotice(`“${l.name}” moved to position ${to + 1} of ${order.length}.`);
    } catch (e) {
      setNotice(errorText(e));
    }
    await reload();
  }

  return (
    <Page title={`Labels and fields of ${book.name}`}>
      <p>
        <a href={`/app/books/${bookId}/contacts`}>Back to the contacts of {book.name}</a>
      </p>
      <Notice message={notice} />
      {error && <p role="alert">{error}</p>}

      <div class="section-head">
        <h2>Labels</h2>
        {canWrite && (
          <button type="button" onClick={() => setEditing('new')}>
            New label
          </button>
        )}
      </div>
      <DataTable<Label>
        caption="Labels, in their order"
        rows={labels}
        rowKey={(l) => l.id}
        empty="No labels yet."
        columns={[
          {
            key: 'name',
            header: 'Label',
            cell: (l) => (
              <span class={canWrite ? 'draggable' : undefined} {...(canWrite ? dragProps(l.id, labels!.map((x) => x.id), (from, to) => void move(from, to)) : {})}>
                <LabelChips labels={[l]} />
                {l.public && <span class="hint"> Public topic{l.description ? `: ${l.description}` : ''}</span>}
              </span>
            ),
          },
          {
            key: 'actions',
            header: 'Actions',
            cell: (l) => {
              const i = labels!.indexOf(l);
              return canWrite ? (
                <span class="row-actions">
                  <button type="button" class="link" disabled={i === 0} onClick={() => move(i, i - 1)}>
                    Move up<span class="visually-hidden"> {l.name}</span>
                  </button>
                  <button type="button" class="link" disabled={i === labels!.length - 1} onClick={() => move(i, i + 1)}>
                    Move down<span class="visually-hidden"> {l.name}</span>
                  </button>
                  <button type="button" class="link" onClick={() => setEditing(l)}>
                    Edit<span class="visually-hidden"> {l.name}</span>
                  </button>
                  <button type="button" class="link danger" onClick={() => setRemoving({ kind: 'label', item: l })}>
                    Delete<span class="visually-hidden"> {l.name}</span>
                  </button>
                </span>
              ) : (
                <span class="muted">{needs('member')}</span>
              );
            },
          },
        ]}
      />

      <div class="section-head">
        <h2>Custom fields</h2>
        {canWrite && (
          <button type="button" onClick={() => setAddingField(true)}>
            New field
          </button>
        )}
      </div>
      <DataTable<FieldDefinition>
        caption="Custom fields"
        rows={fields}
        rowKey={(f) => f.id}
        empty="No custom fields yet."
        columns={[
          { key: 'name', header: 'Name', cell: (f) => f.name },
          { key: 'key', header: 'Key', cell: (f) => <code>{f.key}</code> },
          { key: 'type', header: 'Type', cell: (f) => fieldTypes[f.type] },
          ...(canWrite
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  cell: (f: FieldDefinition) => (
                    <button type="button" class="link danger" onClick={() => setRemoving({ kind: 'field', item: f })}>
                      Delete<span class="visually-hidden"> {f.name}</span>
                    </button>
                  ),
                },
              ]
            : []),
        ]}
      />

      {editing && (
        <LabelDialog
          bookId={bookId}
          label={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(l) => {
            setEditing(null);
            setNotice(`Label “${l.name}” saved.`);
            void reload();
          }}
        />
      )}
      {addingField && (
        <FieldDialog
          bookId={bookId}
          onClose={() => setAddingField(false)}
          onSaved={(f) => {
            setAddingField(false);
            setNotice(`Field “${f.name}” created.`);
            void reload();
          }}
        />
      )}
      {removing && (
        <Confirm
          title={`Delete the ${removing.kind} “${removing.item.name}”?`}
          button={`Delete ${removing.kind}`}
          run={() =>
            removing.kind === 'label'
              ? ok(api.DELETE('/api/books/{id}/labels/{lid}', { params: { path: { id: bookId, lid: removing.item.id } } }))
              : ok(api.DELETE('/api/books/{id}/fields/{fid}', { params: { path: { id: bookId, fid: removing.item.id } } }))
          }
          onClose={() => setRemoving(null)}
          onDone={() => {
            setNotice(`The ${removing.kind} “${removing.item.name}” was deleted.`);
            setRemoving(null);
            void reload();
          }}
        >
          <p>{removing.kind === 'label' ? 'The label is taken off every contact that has it.' : 'Every contact loses its value of this field.'} This cannot be undone.</p>
        </Confirm>
      )}
    </Page>
  );
}

function LabelDialog({ bookId, label, onClose, onSaved }: { bookId: string; label: Label | null; onClose: () => void; onSaved: (l: Label) => void }) {
  const f = useForm({ name: label?.name ?? '', color: label?.color ?? '#0EA5E9', public: label?.public ?? false, description: label?.description ?? '' });
  return (
    <FormDialog
      title={label ? `Edit label ${label.name}` : 'New label'}
      submit={label ? 'Save label' : 'Create label'}
      form={f}
      checks={() => ({ name: checkRequired(f.values.name, 'a name'), color: checkColor(f.values.color) })}
      send={async () => {
        const r = label
          ? await ok(api.PATCH('/api/books/{id}/labels/{lid}', { params: { path: { id: bookId, lid: label.id } }, body: f.values }))
          : await ok(api.POST('/api/books/{id}/labels', { params: { path: { id: bookId } }, body: f.values }));
        onSaved(r.data);
      }}
      onClose={onClose}
    >
      <Field label="Name" required {...f.bind('name')} />
      <Field label="Colour" type="color" {...f.bind('color')} onInput={(e) => f.set('color', (e.target as HTMLInputElement).value.toUpperCase())} />
      <Field
        label="Public topic"
        type="checkbox"
        checked={f.values.public}
        onChange={(e) => f.set('public', (e.target as HTMLInputElement).checked)}
        hint="Sign-up forms and the email preference page offer public labels to people."
      />
      <Field label="Description" as="textarea" rows={2} hint="Shown beside a public label on those pages." {...f.bind('description')} />
    </FormDialog>
  );
}

function FieldDialog({ bookId, onClose, onSaved }: { bookId: string; onClose: () => void; onSaved: (f: FieldDefinition) => void }) {
  const f = useForm({ name: '', key: '', type: 'text' as FieldDefinition['type'] });
  const [keyEdited, setKeyEdited] = useState(false);
  return (
    <FormDialog
      title="New custom field"
      submit="Create field"
      form={f}
      checks={() => ({
        name: checkRequired(f.values.name, 'a name'),
        key: /^[a-z][a-z0-9_]{0,63}$/.test(f.values.key) ? '' : 'Start with a letter; use lower-case letters, digits and _ (at most 64).',
      })}
      send={async () => onSaved((await ok(api.POST('/api/books/{id}/fields', { params: { path: { id: bookId } }, body: f.values }))).data)}
      onClose={onClose}
    >
      <Field
        label="Name"
        required
        {...f.bind('name')}
        onInput={(e) => {
          const name = (e.target as HTMLInputElement).value;
          f.set('name', name);
          if (!keyEdited) f.set('key', keyFromName(name));
        }}
      />
      <Field
        label="Key"
        required
        hint="How the API and imports name the field; cannot be changed later."
        {...f.bind('key')}
        onInput={(e) => {
          setKeyEdited(true);
          f.set('key', (e.target as HTMLInputElement).value);
        }}
      />
      <Field label="Type" as="select" value={f.values.type} onChange={(e) => f.set('type', (e.target as HTMLSelectElement).value as FieldDefinition['type'])}>
        {Object.entries(fieldTypes).map(([k, n]) => (
          <option value={k}>{n}</option>
        ))}
      </Field>
    </FormDialog>
  );
}

