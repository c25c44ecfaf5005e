// The contacts table's view (search, filters, order, page, columns) lives in
// the URL, so a reload or a shared link shows the same view. Defaults are
// left out of the URL to keep links short.

import { contactSorts, type ExportFormat } from '../api/enums';

export const sorts = contactSorts;
export type Sort = (typeof sorts)[number];

export const pageSizes = [25, 50, 100, 200] as const;

/** The built-in columns; custom fields are columns named `field:<key>`. */
export const builtinColumns = ['name', 'email', 'phone', 'company', 'job_title', 'labels', 'updated_at', 'created_at'] as const;
export const defaultColumns = ['name', 'email', 'company', 'labels'];

export interface ContactsView {
  q: string;
  label: string; // label id, '' for any
  starred: '' | 'true' | 'false';
  segment: string; // segment id, '' for none
  sort: Sort;
  page: number; // 1-based
  size: number;
  columns: string[];
}

export const defaultView: ContactsView = {
  q: '',
  label: '',
  starred: '',
  segment: '',
  sort: '-created_at',
  page: 1,
  size: 50,
  columns: defaultColumns,
};

const columnPattern = /^(?:name|email|phone|company|job_title|labels|updated_at|created_at|field:[a-z][a-z0-9_]{0,63})$/;

/** parseView reads a view from a query string, ignoring anything malformed. */
export function parseView(search: string | URLSearchParams): ContactsView {
  const p = typeof search === 'string' ? new URLSearchParams(search) : search;
  const v: ContactsView = { ...defaultView };
  v.q = (p.get('q') ?? '').slice(0, 200);
  const label = p.get('label') ?? '';
  if (/^[0-9a-f-]{36}$/i.test(label)) v.label = label;
  const segment = p.get('segment') ?? '';
  if (/^[0-9a-f-]{36}$/i.test(segment)) v.segment = segment;
  const starred = p.get('starred');
  if (starred === 'true' || starred === 'false') v.starred = starred;
  const sort = p.get('sort');
  if (sort && (sorts as readonly string[]).includes(sort)) v.sort = sort as Sort;
  const page = Number(p.get('page'));
  if (Number.isInteger(page) && page >= 1) v.page = page;
  const size = Number(p.get('size'));
  if ((pageSizes as readonly number[]).includes(size)) v.size = size;
  const cols = p.get('cols');
  if (cols !== null) {
    const list = [...new Set(cols.split(',').filter((c) => columnPattern.test(c)))];
    if (!list.includes('name')) list.unshift('name');
    v.columns = list;
  }
  return v;
}

/** viewToSearch writes a view as a query string (without '?'), defaults left out. */
export function viewToSearch(v: ContactsView): string {
  const p = new URLSearchParams();
  if (v.q) p.set('q', v.q);
  if (v.label) p.set('label', v.label);
  if (v.starred) p.set('starred', v.starred);
  if (v.segment) p.set('segment', v.segment);
  if (v.sort !== defaultView.sort) p.set('sort', v.sort);
  if (v.page !== 1) p.set('page', String(v.page));
  if (v.size !== defaultView.size) p.set('size', String(v.size));
  if (v.columns.join(',') !== defaultView.columns.join(',')) p.set('cols', v.columns.join(','));
  return p.toString();
}

/** listQuery is the API query of a view: what GET /api/contacts takes. */
export function listQuery(v: ContactsView) {
  return {
    q: v.q || undefined,
    label_id: v.label || undefined,
    starred: v.starred === '' ? undefined : v.starred === 'true',
    segment_id: v.segment || undefined,
    sort: v.sort,
    limit: v.size,
    offset: (v.page - 1) * v.size,
  };
}

/** exportURL downloads the contacts the view's filters select (all its pages). */
export function exportURL(bookId: string, v: ContactsView, format: ExportFormat = 'csv'): string {
  const q = new URLSearchParams({ format });
  if (v.q) q.set('q', v.q);
  if (v.label) q.set('label_id', v.label);
  if (v.starred) q.set('starred', v.starred);
  if (v.segment) q.set('segment_id', v.segment);
  return `/api/books/${bookId}/export?${q}`;
}

/** pageCount is the number of pages of total items (at least 1). */
export function pageCount(total: number, size: number): number {
  return Math.max(1, Math.ceil(total / size));
}
