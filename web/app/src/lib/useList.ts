// useList loads one page of a list whenever what it depends on changes (a
// filter, the page, a reload): useResource with the page's rows and total,
// the previous page kept on screen while the next one loads. Nothing is
// loaded while enabled is false (what the list needs is not known yet).
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client';
import { useResource } from './useResource';

export interface ListPage<T> {
  data: T[];
  meta: { total: number };
}

export function useList<T>(load: (signal: AbortSignal) => Promise<ListPage<T>>, key: string, enabled = true) {
  const page = useResource(load, [key], { enabled, keep: true });
  // setRows replaces rows in place after a change the list does not need to reload for.
  const setRows = (update: T[] | null | ((rows: T[] | null) => T[] | null)) =>
    page.set((p) => {
      const rows = typeof update === 'function' ? update(p?.data ?? null) : update;
      return rows === null ? null : { data: rows, meta: p?.meta ?? { total: rows.length } };
    });
  return {
    rows: page.data?.data ?? null,
    setRows,
    total: page.data?.meta.total ?? 0,
    loading: page.loading,
    error: page.error,
    // The API's error code (ADDON_REQUIRED, …) when the error is an API answer.
    errorCode: page.failure instanceof ApiError ? page.failure.code : '',
    reload: () => void page.reload(),
  };
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
