// The book a screen works in, with its labels and custom field definitions.
import { api, ok, type FieldDefinition, type Label } from '../api/client';
import { useResource } from './useResource';
import { useWorkspace } from './workspace';

export function useBook(bookId: string) {
  const w = useWorkspace();
  const book = w.books?.find((b) => b.id === bookId) ?? null;
  // Loaded again from scratch for each book: the answer for a book the
  // screen has left (a quick switch of books) never shows its labels in the
  // next one. These two small requests are not cancelled but left to
  // answer: the generation check alone drops that answer, and the browser
  // suite watches it arrive and stay unseen.
  const r = useResource<{ labels: Label[]; fields: FieldDefinition[] }>(
    async () => {
      const path = { params: { path: { id: bookId } } };
      const [l, f] = await Promise.all([ok(api.GET('/api/books/{id}/labels', path)), ok(api.GET('/api/books/{id}/fields', path))]);
      return { labels: l.data, fields: f.data };
    },
    [bookId],
    { enabled: !!book },
  );
  const setLabels = (labels: Label[]) => r.set((d) => d && { ...d, labels });
  return { book, booksLoaded: w.books !== null, labels: r.data?.labels ?? null, fields: r.data?.fields ?? null, error: r.error, reload: r.reload, setLabels };
}
