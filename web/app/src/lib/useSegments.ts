// The book's segments by id and name: what the screens offer wherever
// contacts are chosen (the contacts filter, an enrollment, an audience).
import { api, inBook, ok } from '../api/client';
import { useResource } from './useResource';

const none: { id: string; name: string }[] = [];

/** useSegments lists the book's segments (id and name), for the audience and enrollment choices. */
export function useSegments(bookId: string): { id: string; name: string }[] {
  const r = useResource(
    (signal) => ok(api.GET('/api/segments', { params: { header: inBook(bookId) }, signal })).then((a) => a.data.map((x) => ({ id: x.id, name: x.name }))),
    [bookId],
  );
  // Without them (still loading, or refused) nothing is offered.
  return (!r.error && r.data) || none;
}
