// The signed-in user's workspace: who they are, the team they work in (and
// their role there), and that team's books. Screens read it with
// useWorkspace(); the team choice is remembered per browser.
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, ok, type Book, type Role, type TeamMembership, type User } from '../api/client';

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

interface ProviderProps {
  children: ComponentChildren;
  loading: ComponentChildren;
  failed: (message: string, retry: () => void) => ComponentChildren;
}

export function WorkspaceProvider({ children, loading, failed }: ProviderProps) {
  const [me, setMe] = useState<{ user: User; teams: TeamMembership[] } | null>(null);
  const [error, setError] = useState('');
  const [teamId, setTeamId] = useState(localStorage.getItem(teamKey) ?? '');
  // Books are kept with their team, so a switch never shows the old team's books.
  const [loaded, setLoaded] = useState<{ team: string; list: Book[] } | null>(null);
  const [booksError, setBooksError] = useState('');
  const [twoFactorRequired, setTwoFactorRequired] = useState(false);

  const reloadMe = useCallback(async () => {
    setError('');
    try {
      const r = await ok(api.GET('/api/me'));
      setMe(r.data);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, []);
  useEffect(() => void reloadMe(), [reloadMe]);

  const team = me?.teams.find((t) => t.id === teamId) ?? me?.teams[0];

  // The team whose books were asked for last: an answer for an earlier team
  // (switched away from while its request was on the way) is dropped, or it
  // would replace the newer team's books and leave the screen loading.
  const booksFor = useRef('');
  const reloadBooks = useCallback(async () => {
    if (!team) return;
    booksFor.current = team.id;
    setBooksError('');
    setTwoFactorRequired(false);
    try {
      const r = await ok(api.GET('/api/books', { params: { query: { team_id: team.id } } }));
      if (booksFor.current === team.id) setLoaded({ team: team.id, list: r.data });
    } catch (e) {
      if (booksFor.current !== team.id) return;
      setBooksError(e instanceof Error ? e.message : String(e));
      setTwoFactorRequired(e instanceof ApiError && e.code === 'TWO_FACTOR_REQUIRED');
    }
  }, [team?.id]);
  // Turning two-factor sign-in on (reloadMe) may open the team's books.
  useEffect(() => void reloadBooks(), [reloadBooks, me?.user.two_factor_enabled]);
  const books = team && loaded?.team === team.id ? loaded.list : null;

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
  if (error) return <>{failed(error, reloadMe)}</>;
  if (!value) return <>{loading}</>;
  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
