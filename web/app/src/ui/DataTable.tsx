// The one data table of the app: a real <table> with a caption, sortable
// column headers (aria-sort, a button per header), optional row selection
// with a select-all checkbox, and the loading, empty and error states.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export interface Column<T> {
  key: string;
  header: string;
  cell: (row: T) => ComponentChildren;
  /** The sort value of this column ascending; descending is '-' + it. */
  sort?: string;
  class?: string;
}

interface Props<T> {
  caption: string;
  columns: Column<T>[];
  rows: T[] | null;
  rowKey: (row: T) => string;
  rowLabel?: (row: T) => string;
  loading?: boolean;
  error?: string;
  empty: ComponentChildren;
  sort?: string;
  onSort?: (sort: string) => void;
  selected?: Set<string>;
  onSelect?: (ids: string[], on: boolean) => void;
}

export function DataTable<T>(p: Props<T>) {
  const rows = p.rows ?? [];
  const selectable = !!p.selected && !!p.onSelect;
  const onPage = rows.map(p.rowKey);
  const chosen = selectable ? onPage.filter((id) => p.selected!.has(id)).length : 0;
  const all = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (all.current) all.current.indeterminate = chosen > 0 && chosen < onPage.length;
  });
  const span = p.columns.length + (selectable ? 1 : 0);
  return (
    <div class="table-wrap" aria-busy={p.loading || undefined}>
      <table>
        <caption class="visually-hidden">{p.caption}</caption>
        <thead>
          <tr>
            {selectable && (
              <th scope="col" class="select">
                <input
                  ref={all}
                  type="checkbox"
                  aria-label="Select all on this page"
                  checked={onPage.length > 0 && chosen === onPage.length}
                  disabled={onPage.length === 0}
                  onChange={(e) => p.onSelect!(onPage, (e.target as HTMLInputElement).checked)}
                />
              </th>
            )}
            {p.columns.map((c) => {
              const dir = c.sort && p.sort === c.sort ? 'ascending' : c.sort && p.sort === '-' + c.sort ? 'descending' : undefined;
              return (
                <th scope="col" class={c.class} aria-sort={dir}>
                  {c.sort && p.onSort ? (
                    <button type="button" class="sort" onClick={() => p.onSort!(dir === 'ascending' ? '-' + c.sort : c.sort!)}>
                      {c.header}
                      <span aria-hidden="true">{dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : ''}</span>
                    </button>
                  ) : (
                    c.header
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {p.error ? (
            <tr>
              <td colSpan={span} class="state" role="alert">
                {p.error}
              </td>
            </tr>
          ) : p.rows === null ? (
            <tr>
              <td colSpan={span} class="state">
                Loading…
              </td>
            </tr>
          ) : rows.length === 0 ? (
            <tr>
              <td colSpan={span} class="state">
                {p.empty}
              </td>
            </tr>
          ) : (
            rows.map((r) => {
              const id = p.rowKey(r);
              const on = selectable && p.selected!.has(id);
              return (
                <tr key={id} class={on ? 'selected' : undefined}>
                  {selectable && (
                    <td class="select">
                      <input
                        type="checkbox"
                        aria-label={`Select ${p.rowLabel ? p.rowLabel(r) : id}`}
                        checked={on}
                        onChange={(e) => p.onSelect!([id], (e.target as HTMLInputElement).checked)}
                      />
                    </td>
                  )}
                  {p.columns.map((c) => (
                    <td class={c.class}>{c.cell(r)}</td>
                  ))}
                </tr>
              );
            })
          )}
        </tbody>
      </table>
    </div>
  );
}
