// A book's section opened without a book in the address (/app/contacts,
// /app/campaigns...: where the navigation's book links lead while the team
// has no book). Once the team has a book it opens that section of the
// current one; until then the section's page says the team has no book yet
// and offers to create the first (the books screen's dialog), then opens the
// section in the new book.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { atLeast, needs } from '../lib/roles';
import { currentBook, rememberBook, useWorkspace } from '../lib/workspace';
import { BookDialog } from '../ui/BookDialog';
import { Page } from '../ui/Page';

// Each section's name, as its screen calls it (without the book's name).
const titles: Record<string, string> = {
  contacts: 'Contacts',
  segments: 'Segments',
  campaigns: 'Campaigns',
  templates: 'Email templates',
  suppressions: 'Deliverability and suppressions',
  transactional: 'Transactional email',
  imports: 'Imports and exports',
  forms: 'Sign-up forms',
  settings: 'Email settings',
};

export default function NoBook() {
  const w = useWorkspace();
  const { path, route } = useLocation();
  // The section of the address; the screen stays drawn while the next one
  // loads, when the address is already the next screen's.
  const here = /^\/app\/([a-z]+)$/.exec(path)?.[1];
  const shown = useRef('contacts');
  if (here && here in titles) shown.current = here;
  const section = shown.current;
  const [creating, setCreating] = useState(false);
  const book = w.books?.length ? currentBook('', w.team.id, w.books.map((b) => b.id)) : '';
  useEffect(() => {
    if (book && here === section) route(`/app/books/${book}/${section}`, true);
  }, [book, here, section]);
  const canCreate = atLeast(w.role, 'member');
  return (
    <Page title={titles[section] ?? 'Books'}>
      {w.books === null || book ? (
        <p>{w.booksError || 'Loading…'}</p>
      ) : (
        <div class="empty-state">
          <h2>Your team has no book yet</h2>
          <p>
            A book holds contacts and everything made for them: segments, campaigns, email templates, suppressions, imports, sign-up forms and email
            settings. {canCreate ? 'Create the first one to start; this page opens in it.' : `Creating one ${needs('member').replace(/^Needs/, 'needs')}`}
          </p>
          {canCreate && (
            <button type="button" onClick={() => setCreating(true)}>
              Create your first book
            </button>
          )}
        </div>
      )}
      {creating && (
        <BookDialog
          book={null}
          onClose={() => setCreating(false)}
          onSaved={(b) => {
            // The team's books reloaded, the effect above opens the section in the new book.
            setCreating(false);
            rememberBook(w.team.id, b.id);
            void w.reloadBooks();
          }}
        />
      )}
    </Page>
  );
}
