// Books of the team: the list with contact counts, create and edit (name,
// colour, icon, unique emails), delete with confirmation.
import { useState } from 'preact/hooks';
import { api, ok, type Book } from '../api/client';
import { iconGlyph } from '../lib/books';
import { atLeast, needs } from '../lib/roles';
import { useWorkspace } from '../lib/workspace';
import { plural } from '../lib/bulk';
import { BookDialog } from '../ui/BookDialog';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
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
