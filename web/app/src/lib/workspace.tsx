// The signed-in user's workspace: who they are, the team they work in (and
// their role there), and that team's books. Screens read it with
// useWorkspace(); the team choice is remembered per browser.
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useMemo, useState } from 'preact/hooks';
import { api, ApiError, ok, type Book, type Role, type TeamMembership, type User } from '../api/client';
import { useResource } from './useResource';

export interface Workspace {
  user: User;
  teams: TeamMembership[];
  team: TeamMembership;
  role: Role;
  books: Book[] | null;
  booksError: string;
  /** The team requires two-factor sign-in, which the user has not turned on. */
  twoFactorRequired: boolean;
  setTeam: (id: string) => void;
  reloadBooks: () => Promise<void>;
  reloadMe: () => Promise<void>;
}

const Ctx = createContext<Workspace | null>(null);

export function useWorkspace(): Workspace {
  const w = useContext(Ctx);
  if (!w) throw new Error('useWorkspace outside WorkspaceProvider');
  return w;
}

const teamKey = 'contactbook.team';
const bookKey = (team: string) => `contactbook.book.${team}`;

/** chooseTeam makes a team the one the workspace opens next (a team just joined). */
export function chooseTeam(teamId: string): void {
  localStorage.setItem(teamKey, teamId);
}

/** lastBook is the book last opened in a team, to come back to it. */
export function lastBook(teamId: string): string | null {
  return localStorage.getItem(bookKey(teamId));
}

export function rememberBook(teamId: string, bookId: string): void {
  localStorage.setItem(bookKey(teamId), bookId);
}

/** currentBook is the book in the address, else the one last opened, else the first ('' without books). */
export function currentBook(path: string, team: string, books: string[]): string {
  const m = /^\/app\/books\/([^/]+)/.exec(path);
  if (m && books.includes(m[1])) return m[1];
  const last = lastBook(team);
  if (last && books.includes(last)) return last;
  return books[0] ?? '';
}

interface ProviderProps {
  children: ComponentChildren;
  loading: ComponentChildren;
  failed: (message: string, retry: () => void) => ComponentChildren;
}

export function WorkspaceProvider({ children, loading, failed }: ProviderProps) {
  const [teamId, setTeamId] = useState(localStorage.getItem(teamKey) ?? '');
  const who = useResource((signal) => ok(api.GET('/api/me', { signal })).then((r) => r.data), []);
  const me = who.data;
  const team = me?.teams.find((t) => t.id === teamId) ?? me?.teams[0];

  // Books are kept with their team, so a switch never shows the old team's
  // books; the answer for a team switched away from while its request was on
  // the way is dropped (useResource's generation check; the request is left
  // to answer, as the browser suite watches that answer arrive), or it would
  // replace the newer team's books and leave the screen loading. Turning
  // two-factor sign-in on (reloadMe) may open the team's books.
  const teamBooks = useResource(
    () => ok(api.GET('/api/books', { params: { query: { team_id: team!.id } } })).then((r) => ({ team: team!.id, list: r.data })),
    [team?.id, me?.user.two_factor_enabled],
    { enabled: !!team, keep: true },
  );
  const books = team && teamBooks.data?.team === team.id ? teamBooks.data.list : null;
  const booksError = teamBooks.error;
  const twoFactorRequired = teamBooks.failure instanceof ApiError && teamBooks.failure.code === 'TWO_FACTOR_REQUIRED';
  const reloadMe = who.reload;
  const reloadBooks = teamBooks.reload;

  const setTeam = useCallback((id: string) => {
    chooseTeam(id);
    setTeamId(id);
  }, []);

  const value = useMemo<Workspace | null>(
    () =>
      me && team
        ? { user: me.user, teams: me.teams, team, role: team.role, books, booksError, twoFactorRequired, setTeam, reloadBooks, reloadMe }
        : null,
    [me, team, books, booksError, twoFactorRequired, setTeam, reloadBooks, reloadMe],
  );
  if (who.error) return <>{failed(who.error, reloadMe)}</>;
  if (!value) return <>{loading}</>;
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
