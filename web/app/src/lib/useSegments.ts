// The book's segments by id and name: what the screens offer wherever
// contacts are chosen (the contacts filter, an enrollment, an audience).
import { useEffect, useState } from 'preact/hooks';
import { api, inBook, ok } from '../api/client';

/** useSegments lists the book's segments (id and name), for the audience and enrollment choices. */
export function useSegments(bookId: string): { id: string; name: string }[] {
  const [segments, setSegments] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    ok(api.GET('/api/segments', { params: { header: inBook(bookId) } }))
      .then((r) => setSegments(r.data.map((x) => ({ id: x.id, name: x.name }))))
      .catch(() => setSegments([]));
  }, [bookId]);
  return segments;
}
