// Books of the team: the list with contact counts, create and edit (name,
// colour, icon, unique emails), delete with confirmation.
import { useState } from 'preact/hooks';
import { api, ok, type Book } from '../api/client';
import { bookIcons, checkColor, iconGlyph } from '../lib/books';
import { checkRequired } from '../lib/form';
import { atLeast, needs } from '../lib/roles';
import { useForm } from '../lib/useForm';
import { useWorkspace } from '../lib/workspace';
import { plural } from '../lib/bulk';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { Notice, Page } from '../ui/Page';

export default function Books() {
  const w = useWorkspace();
  const [editing, setEditing] = useState<Book | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Book | null>(null);
  const [notice, setNotice] = useState('');
  const canWrite = atLeast(w.role, 'member');
  const canDelete = atLeast(w.role, 'admin');
  return (
    <Page
      title="Books"
      actions={
        canWrite && (
          <button type="button" onClick={() => setEditing('new')}>
            New book
          </button>
        )
      }
    >
      <Notice message={notice} />
      <DataTable<Book>
        caption="Books of the team"
        rows={w.books}
        error={w.booksError}
        rowKey={(b) => b.id}
        empty={canWrite ? 'No books yet. Create the first one to start adding contacts.' : 'This team has no books yet.'}
        columns={[
          {
            key: 'name',
            header: 'Name',
            cell: (b) => (
              <span class="book-name">
                <span class="swatch" style={{ backgroundColor: b.color }} aria-hidden="true" />
                <span aria-hidden="true">{iconGlyph(b.icon)}</span> <a href={`/app/books/${b.id}/contacts`}>{b.name}</a>
              </span>
            ),
          },
          { key: 'count', header: 'Contacts', class: 'num', cell: (b) => b.contact_count.toLocaleString() },
          { key: 'unique', header: 'Unique emails', cell: (b) => (b.enforce_unique_emails ? 'Enforced' : 'Not enforced') },
          {
            key: 'actions',
            header: 'Actions',
            cell: (b) => (
              <span class="row-actions">
                <a href={`/app/books/${b.id}/labels`}>Labels and fields<span class="visually-hidden"> of {b.name}</span></a>
                {canWrite && (
                  <button type="button" class="link" onClick={() => setEditing(b)}>
                    Edit<span class="visually-hidden"> {b.name}</span>
                  </button>
                )}
                {canWrite && (
                  <button type="button" class="link danger" disabled={!canDelete} title={canDelete ? undefined : needs('admin')} onClick={() => setDeleting(b)}>
                    Delete<span class="visually-hidden"> {b.name}</span>
                  </button>
                )}
              </span>
            ),
          },
        ]}
      />
      {editing && (
        <BookDialog
          book={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(b, created) => {
            setEditing(null);
            setNotice(created ? `Book “${b.name}” created.` : `Book “${b.name}” saved.`);
            void w.reloadBooks();
          }}
        />
      )}
      {deleting && (
        <DeleteBook
          book={deleting}
          onClose={() => setDeleting(null)}
          onDeleted={() => {
            setNotice(`Book “${deleting.name}” deleted.`);
            setDeleting(null);
            void w.reloadBooks();
          }}
        />
      )}
    </Page>
  );
}

function BookDialog({ book, onClose, onSaved }: { book: Book | null; onClose: () => void; onSaved: (b: Book, created: boolean) => void }) {
  const w = useWorkspace();
  const f = useForm({
    name: book?.name ?? '',
    color: book?.color ?? '#4F46E5',
    icon: book?.icon ?? 'book',
    enforce_unique_emails: book?.enforce_unique_emails ?? false,
  });
  return (
    <FormDialog
      title={book ? `Edit ${book.name}` : 'New book'}
      submit={book ? 'Save book' : 'Create book'}
      form={f}
      checks={() => ({ name: checkRequired(f.values.name, 'a name'), color: checkColor(f.values.color) })}
      send={async () => {
        const r = book
          ? await ok(api.PATCH('/api/books/{id}', { params: { path: { id: book.id } }, body: f.values }))
          : await ok(api.POST('/api/books', { body: { ...f.values, team_id: w.team.id } }));
        onSaved(r.data, !book);
      }}
      onClose={onClose}
    >
      <Field label="Name" required {...f.bind('name')} />
      <div class="row">
        <Field label="Colour" type="color" {...f.bind('color')} onInput={(e) => f.set('color', (e.target as HTMLInputElement).value.toUpperCase())} />
        <Field label="Icon" as="select" value={f.values.icon} onChange={(e) => f.set('icon', (e.target as HTMLSelectElement).value)}>
          {Object.entries(bookIcons).map(([id, i]) => (
            <option value={id}>
              {i.glyph} {i.name}
            </option>
          ))}
        </Field>
      </div>
      <Field
        label="Each email address only once in this book"
        type="checkbox"
        checked={f.values.enforce_unique_emails}
        onChange={(e) => f.set('enforce_unique_emails', (e.target as HTMLInputElement).checked)}
        hint="A second contact with an address already in the book is refused."
      />
    </FormDialog>
  );
}

function DeleteBook({ book, onClose, onDeleted }: { book: Book; onClose: () => void; onDeleted: () => void }) {
  const contacts = plural(book.contact_count, 'contact');
  return (
    <Confirm
      title={`Delete ${book.name}?`}
      button={`Delete book and ${contacts}`}
      run={() => ok(api.DELETE('/api/books/{id}', { params: { path: { id: book.id } } }))}
      onClose={onClose}
      onDone={onDeleted}
    >
      <p>This deletes the book, its {contacts}, labels and custom fields. It cannot be undone.</p>
    </Confirm>
  );
}
