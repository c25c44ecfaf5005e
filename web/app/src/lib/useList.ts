// useList loads one page of a list whenever what it depends on changes (a
// filter, the page, a reload), dropping the answer of a request that a
// newer one replaced, and keeps the loading and error states. Nothing is
// loaded while enabled is false (what the list needs is not known yet).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, isAbort } from '../api/client';

export interface ListPage<T> {
  data: T[];
  meta: { total: number };
}

export function useList<T>(load: (signal: AbortSignal) => Promise<ListPage<T>>, key: string, enabled = true) {
  const [rows, setRows] = useState<T[] | null>(null);
  const [total, setTotal] = useState(0);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState('');
  // The API's error code (ADDON_REQUIRED, …) when the error is an API answer.
  const [errorCode, setErrorCode] = useState('');
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    setLoading(true);
    setError('');
    setErrorCode('');
    load(abort.signal)
      .then((r) => {
        setRows(r.data);
        setTotal(r.meta.total);
        setLoading(false);
      })
      .catch((e) => {
        if (isAbort(e)) return;
        setError(e instanceof Error ? e.message : String(e));
        setErrorCode(e instanceof ApiError ? e.code : '');
        setLoading(false);
      });
    return () => abort.abort();
  }, [key, reloads, enabled]);
  // setRows replaces rows in place after a change the list does not need to reload for.
  return { rows, setRows, total, loading, error, errorCode, reload: () => setReloads((n) => n + 1) };
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
