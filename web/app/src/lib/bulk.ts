// Bulk changes run in chunks: the API takes at most 10,000 ids per call, and
// smaller calls let the screen show progress on large selections.

export const bulkChunk = 1000;
export const bulkMax = 10000;

/**
 * chunkSize splits a selection into about ten set-based calls, so progress
 * moves in visible steps, but never calls of fewer than 100 ids (a handful
 * of contacts is one call) or more than bulkChunk.
 */
export function chunkSize(n: number): number {
  return Math.min(bulkChunk, Math.max(100, Math.ceil(n / 10)));
}

/** chunks splits ids into lists of at most size. */
export function chunks<T>(ids: T[], size = bulkChunk): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < ids.length; i += size) out.push(ids.slice(i, i + size));
  return out;
}

/**
 * runChunked sends each chunk in turn, reporting the ids done so far; it
 * returns the sum of what each call counted.
 */
export async function runChunked(ids: string[], send: (chunk: string[]) => Promise<number>, progress: (done: number) => void): Promise<number> {
  let done = 0;
  let counted = 0;
  for (const c of chunks(ids, chunkSize(ids.length))) {
    counted += await send(c);
    done += c.length;
    progress(done);
  }
  return counted;
}

/** plural writes a count with its noun: 1 contact, 1,000 contacts. */
export function plural(n: number, one: string, many = one + 's'): string {
  return `${n.toLocaleString('en')} ${n === 1 ? one : many}`;
}
