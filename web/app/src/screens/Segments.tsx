// A book's segments: saved rules whose members are always the contacts that
// match now. Each opens in the rule builder; a new one starts there too.
import { useLocation } from 'preact-iso/router';
import { api, inBook, ok, type Schemas } from '../api/client';
import { atLeast, needs } from '../lib/roles';
import { useBook } from '../lib/useBook';
import { useList } from '../lib/useList';
import { useWorkspace } from '../lib/workspace';
import { DataTable } from '../ui/DataTable';
import { BookMissing, Page } from '../ui/Page';

type Segment = Schemas['Segment'];

export default function Segments({ book: bookId }: { book: string }) {
  const w = useWorkspace();
  const { route } = useLocation();
  const { book, booksLoaded } = useBook(bookId);
  const list = useList<Segment>(async (signal) => {
    const r = await ok(api.GET('/api/segments', { params: { header: inBook(bookId) }, signal }));
    return { data: r.data, meta: { total: r.data.length } };
  }, bookId);
  const canWrite = atLeast(w.role, 'member');
  if (!book) return <Page title="Segments"><BookMissing loaded={booksLoaded} /></Page>;
  return (
    <Page
      title={`Segments of ${book.name}`}
      actions={
        canWrite && (
          <button type="button" onClick={() => route(`/app/books/${bookId}/segments/new`)}>
            New segment
          </button>
        )
      }
    >
      <p class="hint">A segment is a rule over the book's contacts: its members are whoever matches it when it is used, in the contacts table, a bulk change, an enrollment or a campaign's audience.</p>
      {!canWrite && <p class="hint">Creating and changing segments: {needs('member')}</p>}
      <DataTable
        caption="Segments"
        rows={list.rows}
        rowKey={(s) => s.id}
        loading={list.loading}
        error={list.error}
        empty="No segment yet."
        columns={[
          { key: 'name', header: 'Name', cell: (s) => <a href={`/app/books/${bookId}/segments/${s.id}`}>{s.name}</a> },
          { key: 'description', header: 'Description', cell: (s) => s.description },
          { key: 'contacts', header: 'Contacts', cell: (s) => <a href={`/app/books/${bookId}/contacts?segment=${s.id}`}>Show contacts</a> },
          { key: 'updated', header: 'Changed', cell: (s) => new Date(s.updated_at).toLocaleString() },
        ]}
      />
    </Page>
  );
}
