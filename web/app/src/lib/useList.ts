// useList loads one page of a list whenever what it depends on changes (a
// filter, the page, a reload), dropping the answer of a request that a
// newer one replaced, and keeps the loading and error states.
import { useEffect, useState } from 'preact/hooks';
import { isAbort } from '../api/client';

export interface ListPage<T> {
  data: T[];
  meta: { total: number };
}

export function useList<T>(load: (signal: AbortSignal) => Promise<ListPage<T>>, key: string) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [total, setTotal] = useState(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState('');
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setLoading(true);
    setError('');
    load(abort.signal)
      .then((r) => {
        setRows(r.data);
        setTotal(r.meta.total);
        setLoading(false);
      })
      .catch((e) => {
        if (isAbort(e)) return;
        setError(e instanceof Error ? e.message : String(e));
        setLoading(false);
      });
    return () => abort.abort();
  }, [key, reloads]);
  return { rows, total, loading, error, reload: () => setReloads((n) => n + 1) };
}

/** useDebounced is value once it has stopped changing for ms. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}
