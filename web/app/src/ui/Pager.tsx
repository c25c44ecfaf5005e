// Pager moves through the pages of a paged list: previous, where we are,
// next, and optionally how many rows a page shows.
import { Field } from './Field';

interface Props {
  page: number;
  pages: number;
  onPage: (page: number) => void;
  size?: number;
  sizes?: readonly number[];
  onSize?: (size: number) => void;
}

export function Pager({ page, pages, onPage, size, sizes, onSize }: Props) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        Previous page
      </button>
      <span>
        Page {Math.min(page, pages).toLocaleString('en')} of {pages.toLocaleString('en')}
      </span>
      <button type="button" class="secondary" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next page
      </button>
      {sizes && onSize && (
        <Field label="Rows per page" as="select" value={String(size)} onChange={(e) => onSize(Number((e.target as HTMLSelectElement).value))}>
          {sizes.map((n) => (
            <option value={String(n)}>{n}</option>
          ))}
        </Field>
      )}
    </nav>
  );
}

