// useResource is how a screen loads what it shows: it loads when what the
// load depends on changes (a team, a book, a page, a filter), keeps the
// loading and error states, and lets only the newest load land. A load that
// a newer one replaced (or that the screen left) is aborted through the
// signal handed to the loader, so openapi-fetch cancels its request, and a
// generation check drops its answer should it arrive all the same: a slow
// answer never paints another book's or page's data over the current one.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorText, isAbort } from '../api/client';

export interface Resource<T> {
  /** What the newest load answered; null until it has. */
  data: T | null;
  /** The sentence for a failed load (describe's, errorText by default); empty when none. */
  error: string;
  /** What the failed load threw (an ApiError with its status and code), for screens that branch on it. */
  failure: unknown;
  loading: boolean;
  /** reload loads again with the same dependencies, keeping the data shown until the answer; it settles when that load has landed or been replaced. */
  reload: () => Promise<void>;
  /** set replaces the data in place, after a write the screen need not reload for. */
  set: (update: T | null | ((data: T | null) => T | null)) => void;
}

export interface ResourceOptions {
  /** Nothing is loaded while false (what the load needs is not known yet). */
  enabled?: boolean;
  /** Keep the data of the previous dependencies while the new ones load (a list turning its page) instead of clearing it. */
  keep?: boolean;
  /** describe turns a failure into the sentence shown; errorText by default. */
  describe?: (e: unknown) => string;
}

export function useResource<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[], options: ResourceOptions = {}): Resource<T> {
  const { enabled = true, keep = false, describe = errorText } = options;
  const [data, setData] = useState<T | null>(null);
  const [failure, setFailure] = useState<{ error: string; cause: unknown } | null>(null);
  const [loading, setLoading] = useState(true);
  // The latest closures: reload runs the loader of the latest render.
  const latest = useRef({ load, describe, enabled });
  latest.current = { load, describe, enabled };
  // The generation of the newest load and its controller; an answer of any
  // other generation is dropped.
  const generation = useRef(0);
  const running = useRef<AbortController | null>(null);

  const run = useCallback(async (): Promise<void> => {
    running.current?.abort();
    const abort = new AbortController();
    running.current = abort;
    const mine = ++generation.current;
    setLoading(true);
    setFailure(null);
    try {
      const answer = await latest.current.load(abort.signal);
      if (mine !== generation.current) return;
      setData(() => answer);
      setLoading(false);
    } catch (e) {
      if (mine !== generation.current || isAbort(e)) return;
      setFailure({ error: latest.current.describe(e), cause: e });
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    if (!keep) {
      setData(null);
      setFailure(null);
    }
    if (!enabled) return;
    void run();
    return () => {
      // Left or replaced: the answer of this load no longer belongs here.
      generation.current++;
      running.current?.abort();
      running.current = null;
    };
  }, [...deps, enabled]);

  // Nothing is loaded again while disabled, as nothing is loaded at all.
  const reload = useCallback(() => (latest.current.enabled ? run() : Promise.resolve()), []);
  const set = useCallback((update: T | null | ((data: T | null) => T | null)) => setData(update as T | null), []);
  return { data, error: failure?.error ?? '', failure: failure?.cause, loading, reload, set };
}
