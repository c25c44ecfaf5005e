// A book's email templates: the list, a new one, delete; each opens in the
// editor.
import { useState } from 'preact/hooks';
import { api, ApiError, inBook, ok, type Schemas } from '../api/client';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useList } from '../lib/useList';
import { useWorkspace } from '../lib/workspace';
import { Confirm } from '../ui/Confirm';
import { DataTable } from '../ui/DataTable';
import { BookMissing, Notice, Page } from '../ui/Page';
import { AddonMissing } from '../ui/AddonMissing';

type Template = Schemas['Template'];

export default function Templates({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { book, booksLoaded } = useBook(bookId);
  const [deleting, setDeleting] = useState<Template | null>(null);
  const [notice, setNotice] = useState('');
  const list = useList<Template>(async (signal) => {
    const r = await ok(api.GET('/api/campaign-templates', { params: { header: inBook(bookId) }, signal }));
    return { data: r.data, meta: { total: r.data.length } };
  }, bookId);
  const canWrite = atLeast(w.role, 'member');
  if (!book) return <Page title="Templates"><BookMissing loaded={booksLoaded} /></Page>;
  const addonMissing = list.errorCode === 'ADDON_REQUIRED';
  return (
    <Page
      title={`Email templates of ${book.name}`}
      actions={
        canWrite && (
          <a class="button" href={`/app/books/${bookId}/templates/new`}>
            New template
          </a>
        )
      }
    >
      {!canWrite && <p class="hint">Writing templates: {needs('member')}</p>}
      <Notice message={notice} />
      {addonMissing ? (
        <AddonMissing>{list.error}</AddonMissing>
      ) : (
        <DataTable
          caption="Email templates"
          rows={list.rows}
          rowKey={(t) => t.id}
          loading={list.loading}
          error={list.error}
          empty={canWrite ? 'No template yet: write the first one.' : 'No template yet.'}
          columns={[
            { key: 'name', header: 'Name', cell: (t) => <a href={`/app/books/${bookId}/templates/${t.id}`}>{t.name}</a> },
            { key: 'subject', header: 'Subject', cell: (t) => t.subject },
            { key: 'updated', header: 'Changed', cell: (t) => new Date(t.updated_at).toLocaleString() },
            ...(canWrite
              ? [
                  {
                    key: 'actions',
                    header: 'Actions',
                    cell: (t: Template) => (
                      <button type="button" class="danger" aria-label={`Delete ${t.name}`} onClick={() => setDeleting(t)}>
                        Delete
                      </button>
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
      {deleting && (
        <Confirm
          title={`Delete the template “${deleting.name}”?`}
          button="Delete template"
          run={() =>
            ok(api.DELETE('/api/campaign-templates/{id}', { params: { header: inBook(bookId), path: { id: deleting.id } } })).catch((e) => {
              if (e instanceof ApiError && e.status === 409) throw new Error(`${e.message} Change those steps first.`);
              throw e;
            })
          }
          onClose={() => setDeleting(null)}
          onDone={() => {
            setNotice(`The template “${deleting.name}” was deleted.`);
            setDeleting(null);
            list.reload();
          }}
        >
          <p>The template is deleted. Campaign steps cannot use a deleted template.</p>
        </Confirm>
      )}
    </Page>
  );
}
