// The book a screen works in, with its labels and custom field definitions.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, ok, type FieldDefinition, type Label } from '../api/client';
import { useWorkspace } from './workspace';

export function useBook(bookId: string) {
  const w = useWorkspace();
  const book = w.books?.find((b) => b.id === bookId) ?? null;
  const [labels, setLabels] = useState<Label[] | null>(null);
  const [fields, setFields] = useState<FieldDefinition[] | null>(null);
  const [error, setError] = useState('');
  // The book asked about last: the answer for a book the screen has left
  // (a quick switch of books) must not show its labels in the next one.
  const asked = useRef('');
  const reload = useCallback(async () => {
    asked.current = bookId;
    setError('');
    try {
      const path = { params: { path: { id: bookId } } };
      const [l, f] = await Promise.all([ok(api.GET('/api/books/{id}/labels', path)), ok(api.GET('/api/books/{id}/fields', path))]);
      if (asked.current !== bookId) return;
      setLabels(l.data);
      setFields(f.data);
    } catch (e) {
      if (asked.current === bookId) setError(e instanceof Error ? e.message : String(e));
    }
  }, [bookId]);
  useEffect(() => {
    setLabels(null);
    setFields(null);
    if (book) void reload();
  }, [bookId, !!book]);
  return { book, booksLoaded: w.books !== null, labels, fields, error, reload, setLabels };
}
