// A book's sign-up forms: the list with submission and confirmation
// counts, a new one, delete; each opens in the editor.
import { useState } from 'preact/hooks';
import { api, inBook, ok, type Schemas } from '../api/client';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useList } from '../lib/useList';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { BookMissing, Notice, Page } from '../ui/Page';

type SignupForm = Schemas['Form'];

export default function Forms({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { book, booksLoaded } = useBook(bookId);
  const [deleting, setDeleting] = useState<SignupForm | null>(null);
  const [notice, setNotice] = useState('');
  const list = useList<SignupForm>(async (signal) => {
    const r = await ok(api.GET('/api/forms', { params: { header: inBook(bookId) }, signal }));
    return { data: r.data, meta: { total: r.data.length } };
  }, bookId);
  const canWrite = atLeast(w.role, 'member');
  if (!book) return <Page title="Forms"><BookMissing loaded={booksLoaded} /></Page>;
  return (
    <Page
      title={`Sign-up forms of ${book.name}`}
      actions={
        canWrite && (
          <a class="button" href={`/app/books/${bookId}/forms/new`}>
            New form
          </a>
        )
      }
    >
      <p class="hint">People sign up through a form's hosted page or a form embedded in your site; with double opt-in they confirm by email first.</p>
      {!canWrite && <p class="hint">Writing forms: {needs('member')}</p>}
      <Notice message={notice} />
      <DataTable
        caption="Sign-up forms"
        rows={list.rows}
        rowKey={(f) => f.id}
        loading={list.loading}
        error={list.error}
        empty={canWrite ? 'No form yet: create the first one.' : 'No form yet.'}
        columns={[
          { key: 'name', header: 'Name', cell: (f) => <a href={`/app/books/${bookId}/forms/${f.id}`}>{f.name}</a> },
          { key: 'state', header: 'State', cell: (f) => (f.enabled ? 'On' : 'Off') + (f.double_opt_in ? ', double opt-in' : ', single opt-in') },
          { key: 'submissions', header: 'Submissions', cell: (f) => f.submissions_count.toLocaleString('en') },
          { key: 'confirmed', header: 'Sign-ups', cell: (f) => f.confirmed_count.toLocaleString('en') },
          ...(canWrite
            ? [
                {
                  key: 'actions',
                  header: 'Actions',
                  cell: (f: SignupForm) => (
                    <button type="button" class="danger" aria-label={`Delete ${f.name}`} onClick={() => setDeleting(f)}>
                      Delete
                    </button>
                  ),
                },
              ]
            : []),
        ]}
      />
      {deleting && (
        <Confirm
          title={`Delete the form “${deleting.name}”?`}
          button="Delete form"
          run={() => ok(api.DELETE('/api/forms/{id}', { params: { path: { id: deleting.id } } }))}
          onClose={() => setDeleting(null)}
          onDone={() => {
            setNotice(`The form “${deleting.name}” was deleted.`);
            setDeleting(null);
            list.reload();
          }}
        >
          <p>Its page and embedded copies stop working, and submissions waiting for confirmation are dropped. The consents it collected stay with their contacts.</p>
        </Confirm>
      )}
    </Page>
  );
}
