// The app: the public screens (log in, sign up, password reset, accepting
// an invitation) for visitors, the workspace shell with its screens for
// signed-in people. Every screen is its own chunk, loaded when first
// opened, so the first load stays small.
import { useEffect, useRef, useState } from 'preact/hooks';
import { LocationProvider, Router, Route, useLocation } from 'preact-iso/router';
import lazy, { ErrorBoundary } from 'preact-iso/lazy';
import { errorText, logOut } from './api/client';
import { onChange, signedIn } from './api/session';
import { WorkspaceProvider, currentBook, rememberBook, useWorkspace } from './lib/workspace';
import { Notice, markNavigation } from './ui/Page';
import { atLeast, roleNames } from './lib/roles';

const Login = lazy(() => import('./screens/Auth').then((m) => m.Login));
const Signup = lazy(() => import('./screens/Auth').then((m) => m.Signup));
const ForgotPassword = lazy(() => import('./screens/Password').then((m) => m.ForgotPassword));
const ResetPassword = lazy(() => import('./screens/Password').then((m) => m.ResetPassword));
const ChangePassword = lazy(() => import('./screens/Password').then((m) => m.ChangePassword));
const AcceptInvitation = lazy(() => import('./screens/Invitation'));
const TeamSSO = lazy(() => import('./screens/TeamSSO'));
const Books = lazy(() => import('./screens/Books'));
const NoBook = lazy(() => import('./screens/NoBook'));
const Contacts = lazy(() => import('./screens/Contacts'));
const ContactPage = lazy(() => import('./screens/ContactPage'));
const ContactEditor = lazy(() => import('./screens/ContactEditor'));
const BookSettings = lazy(() => import('./screens/BookSettings'));
const Team = lazy(() => import('./screens/Team'));
const Segments = lazy(() => import('./screens/Segments'));
const SegmentEditor = lazy(() => import('./screens/SegmentEditor'));
const Campaigns = lazy(() => import('./screens/Campaigns'));
const Campaign = lazy(() => import('./screens/Campaign'));
const Participants = lazy(() => import('./screens/Participants'));
const CampaignReport = lazy(() => import('./screens/CampaignReport'));
const Templates = lazy(() => import('./screens/Templates'));
const TemplateEditor = lazy(() => import('./screens/TemplateEditor'));
const Suppressions = lazy(() => import('./screens/Suppressions'));
const Transactional = lazy(() => import('./screens/Transactional'));
const Forms = lazy(() => import('./screens/Forms'));
const FormEditor = lazy(() => import('./screens/FormEditor'));
const Imports = lazy(() => import('./screens/Imports'));
const Settings = lazy(() => import('./screens/Settings'));
const Webhooks = lazy(() => import('./screens/Webhooks'));
const Billing = lazy(() => import('./screens/Billing'));
const Security = lazy(() => import('./screens/Security'));
const AppPasswords = lazy(() => import('./screens/AppPasswords'));
const PhoneSync = lazy(() => import('./screens/PhoneSync'));
const AuditLog = lazy(() => import('./screens/AuditLog'));
const NotFound = lazy(() => import('./screens/NotFound'));

// Screens for visitors only: a signed-in person who opens one goes on.
const visitorOnly = ['/app/login', '/app/signup'];
// Screens reached from an emailed link (or on the way to one): they work
// whether or not this browser is signed in.
const anyone = ['/app/forgot-password', '/app/reset-password', '/app/invitations/accept'];

export function App() {
  return (
    <LocationProvider scope="/app/">
      <ErrorBoundary>
        <Root />
      </ErrorBoundary>
    </LocationProvider>
  );
}

function Root() {
  const [authed, setAuthed] = useState(signedIn());
  useEffect(() => onChange(() => setAuthed(signedIn())), []);
  const { path } = useLocation();
  return authed && !anyone.includes(path) ? <Signed /> : <Visitor />;
}

function Visitor() {
  const { path, url, route } = useLocation();
  const open = visitorOnly.includes(path) || anyone.includes(path);
  useEffect(() => {
    // Anything else needs a session: log in first, then come back.
    if (!open) route(`/app/login${path === '/app/' || path === '/app' ? '' : '?next=' + encodeURIComponent(url)}`, true);
  }, [open]);
  return (
    <main id="main" class="visitor">
      <Router onRouteChange={markNavigation}>
        <Route path="/app/login" component={Login} />
        <Route path="/app/signup" component={Signup} />
        <Route path="/app/forgot-password" component={ForgotPassword} />
        <Route path="/app/reset-password" component={ResetPassword} />
        <Route path="/app/invitations/accept" component={AcceptInvitation} />
        <Route default component={Blank} />
      </Router>
    </main>
  );
}

function Blank() {
  return null;
}

function Signed() {
  const { path, query, route } = useLocation();
  useEffect(() => {
    // A signed-in person who opens the login page (a bookmark) goes on.
    if (visitorOnly.includes(path)) route(query.next?.startsWith('/app/') ? query.next : '/app/', true);
  }, [path]);
  return (
    <WorkspaceProvider
      loading={<p class="loading-app">Loading…</p>}
      failed={(message, retry) => (
        <main id="main" class="visitor">
          <p role="alert">{message}</p>
          <button type="button" onClick={retry}>
            Try again
          </button>
        </main>
      )}
    >
      <Shell />
    </WorkspaceProvider>
  );
}

function Shell() {
  const w = useWorkspace();
  const { path } = useLocation();
  const book = currentBook(path, w.team.id, w.books?.map((b) => b.id) ?? []);
  const navReady = w.books !== null || w.booksError !== '';
  // A book's section: in the current book, or without one the section's
  // page that says so and offers to create the first book.
  const at = (section: string) => (book ? `/app/books/${book}/${section}` : `/app/${section}`);
  useEffect(() => {
    if (book) rememberBook(w.team.id, book);
  }, [book, w.team.id]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/app/">
          contactbook
        </a>
        <TeamSwitcher />
        <BookSwitcher current={book} />
        <UserMenu />
      </header>
      {/* The links wait for the team's books, so that each is drawn once,
          where it stays and pointing where it leads: a link drawn or changed
          under a pointer already on its way to another would take its click
          (a click on Webhooks once landed on Segments, when the book's links
          came in late above it). */}
      <nav class="side" aria-label="Main" aria-busy={navReady ? undefined : 'true'}>
        {navReady && (
        <ul>
          <NavLink href={at('contacts')} match={/^\/app\/(books\/[^/]+\/)?contacts/}>Contacts</NavLink>
          <NavLink href={at('segments')} match={/^\/app\/(books\/[^/]+\/)?segments/}>Segments</NavLink>
          <NavLink href={at('campaigns')} match={/^\/app\/(books\/[^/]+\/)?campaigns/}>Campaigns</NavLink>
          <NavLink href={at('templates')} match={/^\/app\/(books\/[^/]+\/)?templates/}>Templates</NavLink>
          <NavLink href={at('suppressions')} match={/^\/app\/(books\/[^/]+\/)?suppressions/}>Suppressions</NavLink>
          <NavLink href={at('transactional')} match={/^\/app\/(books\/[^/]+\/)?transactional/}>Transactional</NavLink>
          <NavLink href={at('imports')} match={/^\/app\/(books\/[^/]+\/)?imports/}>Imports</NavLink>
          <NavLink href={at('forms')} match={/^\/app\/(books\/[^/]+\/)?forms/}>Forms</NavLink>
          <NavLink href="/app/books" match={/^\/app\/books(\/[^/]+\/labels)?$/}>
            Books
          </NavLink>
          {atLeast(w.role, 'admin') && (
            <NavLink href="/app/webhooks" match={/^\/app\/webhooks/}>
              Webhooks
            </NavLink>
          )}
          {atLeast(w.role, 'admin') && (
            <NavLink href="/app/audit-log" match={/^\/app\/audit-log/}>
              Audit log
            </NavLink>
          )}
          <NavLink href="/app/team" match={/^\/app\/team/}>
            Team
          </NavLink>
          <NavLink href="/app/billing" match={/^\/app\/billing/}>
            Billing
          </NavLink>
          <NavLink href={at('settings')} match={/^\/app\/(books\/[^/]+\/)?settings/}>Settings</NavLink>
        </ul>
        )}
      </nav>
      <main id="main" tabIndex={-1}>
        {w.twoFactorRequired && path !== '/app/security' && (
          <p class="banner" role="alert">
            {w.team.name} requires two-factor sign-in. <a href="/app/security">Turn it on</a> to reach the team's books.
          </p>
        )}
        <Router onRouteChange={markNavigation}>
          <Route path="/app/" component={Home} />
          <Route path="/app/books" component={Books} />
          <Route path="/app/books/:book/contacts" component={Contacts} />
          <Route path="/app/books/:book/contacts/new" component={ContactEditor} />
          <Route path="/app/books/:book/labels" component={BookSettings} />
          <Route path="/app/contacts/:id" component={ContactPage} />
          <Route path="/app/contacts/:id/edit" component={ContactEditor} />
          <Route path="/app/books/:book/segments" component={Segments} />
          <Route path="/app/books/:book/segments/new" component={SegmentEditor} />
          <Route path="/app/books/:book/segments/:id" component={SegmentEditor} />
          <Route path="/app/books/:book/campaigns" component={Campaigns} />
          <Route path="/app/books/:book/campaigns/:id" component={Campaign} />
          <Route path="/app/books/:book/campaigns/:id/participants" component={Participants} />
          <Route path="/app/books/:book/campaigns/:id/report" component={CampaignReport} />
          <Route path="/app/books/:book/templates" component={Templates} />
          <Route path="/app/books/:book/templates/:id" component={TemplateEditor} />
          <Route path="/app/books/:book/suppressions" component={Suppressions} />
          <Route path="/app/books/:book/transactional" component={Transactional} />
          <Route path="/app/books/:book/imports" component={Imports} />
          <Route path="/app/books/:book/forms" component={Forms} />
          <Route path="/app/books/:book/forms/:id" component={FormEditor} />
          <Route path="/app/books/:book/settings" component={Settings} />
          {/* A book's sections without a book: the current book's, or the offer to create the first. */}
          <Route path="/app/contacts" component={NoBook} />
          <Route path="/app/segments" component={NoBook} />
          <Route path="/app/campaigns" component={NoBook} />
          <Route path="/app/templates" component={NoBook} />
          <Route path="/app/suppressions" component={NoBook} />
          <Route path="/app/transactional" component={NoBook} />
          <Route path="/app/imports" component={NoBook} />
          <Route path="/app/forms" component={NoBook} />
          <Route path="/app/settings" component={NoBook} />
          <Route path="/app/team" component={Team} />
          <Route path="/app/team/sso" component={TeamSSO} />
          <Route path="/app/webhooks" component={Webhooks} />
          <Route path="/app/billing" component={Billing} />
          <Route path="/app/security" component={Security} />
          <Route path="/app/app-passwords" component={AppPasswords} />
          <Route path="/app/books/:book/sync" component={PhoneSync} />
          <Route path="/app/audit-log" component={AuditLog} />
          <Route default component={NotFound} />
        </Router>
      </main>
    </div>
  );
}

function Home() {
  const w = useWorkspace();
  const { route } = useLocation();
  useEffect(() => {
    if (w.books === null) return;
    const b = currentBook('', w.team.id, w.books.map((b) => b.id));
    route(b ? `/app/books/${b}/contacts` : '/app/books', true);
  }, [w.books]);
  return <p class="state">{w.booksError || 'Loading…'}</p>;
}

function NavLink({ href, match, children }: { href: string; match: RegExp; children: string }) {
  const { path } = useLocation();
  const here = match.test(path);
  return (
    <li>
      <a href={href} aria-current={here ? 'page' : undefined}>
        {children}
      </a>
    </li>
  );
}

function TeamSwitcher() {
  const w = useWorkspace();
  const { route } = useLocation();
  if (w.teams.length < 2) {
    return <span class="team-name">{w.team.name}</span>;
  }
  return (
    <label class="switcher">
      <span>Team</span>
      <select
        value={w.team.id}
        onChange={(e) => {
          w.setTeam((e.target as HTMLSelectElement).value);
          route('/app/', false);
        }}
      >
        {w.teams.map((t) => (
          <option value={t.id}>{t.name}</option>
        ))}
      </select>
    </label>
  );
}

// The sections of a book, each a link of the navigation.
const sections = ['contacts', 'labels', 'segments', 'campaigns', 'templates', 'suppressions', 'imports', 'forms', 'settings'];

function BookSwitcher({ current }: { current: string }) {
  const w = useWorkspace();
  const { path, route } = useLocation();
  const books = w.books ?? [];
  // Always there, so the header does not shift as the books arrive and the
  // switcher is found in a team without books too: then its one option,
  // which cannot be chosen, says why there is nothing to switch to.
  const none = books.length > 0 ? '' : w.books !== null ? 'No book yet' : w.booksError ? 'Books unavailable' : 'Loading…';
  return (
    <label class="switcher">
      <span>Book</span>
      <select
        value={current}
        onChange={(e) => {
          const id = (e.target as HTMLSelectElement).value;
          // The same section of the other book; a campaign or a template
          // belongs to one book, so from one of those the book's list.
          const m = /^\/app\/books\/[^/]+\/([a-z]+)/.exec(path);
          const sub = m && sections.includes(m[1]) ? m[1] : 'contacts';
          route(`/app/books/${id}/${sub}`);
        }}
      >
        {none ? (
          <option value="" disabled selected>
            {none}
          </option>
        ) : (
          books.map((b) => <option value={b.id}>{b.name}</option>)
        )}
      </select>
    </label>
  );
}

function UserMenu() {
  const w = useWorkspace();
  const { route } = useLocation();
  const [open, setOpen] = useState(false);
  const [changing, setChanging] = useState(false);
  const [notice, setNotice] = useState('');
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const away = (e: Event) => {
      if (!box.current?.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', away);
    document.addEventListener('focusin', away);
    return () => {
      document.removeEventListener('pointerdown', away);
      document.removeEventListener('focusin', away);
    };
  }, [open]);
  return (
    <div
      class="user-menu"
      ref={box}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open) {
          setOpen(false);
          (box.current?.querySelector('button') as HTMLButtonElement | null)?.focus();
        }
      }}
    >
      <button type="button" class="secondary" aria-expanded={open} aria-controls="user-menu" onClick={() => setOpen(!open)}>
        {w.user.name || w.user.email}
        <span class="visually-hidden"> — account menu</span>
      </button>
      <div id="user-menu" class="menu" hidden={!open}>
        <p>
          <strong>{w.user.name}</strong>
          <br />
          {w.user.email}
          <br />
          {roleNames[w.role]} of {w.team.name}
        </p>
        <a class="button secondary" href="/app/security" onClick={() => setOpen(false)}>
          Security
        </a>
        <a class="button secondary" href="/app/app-passwords" onClick={() => setOpen(false)}>
          App passwords
        </a>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            setOpen(false);
            setNotice('');
            setChanging(true);
          }}
        >
          Change password
        </button>
        <button
          type="button"
          onClick={async () => {
            try {
              await logOut();
              route('/app/login', true);
            } catch (e) {
              setNotice(`You are still logged in: ${errorText(e)}`);
            }
          }}
        >
          Log out
        </button>
      </div>
      <Notice message={notice} />
      {changing && (
        <ChangePassword
          onClose={() => setChanging(false)}
          onChanged={() => {
            setChanging(false);
            setNotice('Password changed. Your other sessions have ended.');
          }}
        />
      )}
    </div>
  );
}
