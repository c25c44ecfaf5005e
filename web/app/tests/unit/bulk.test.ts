import { describe, expect, test } from 'vitest';
import { bulkChunk, chunkSize, chunks, plural, runChunked } from '../../src/lib/bulk';

describe('bulk changes in chunks', () => {
  test('chunks keep every id once, in order, at most the chunk size each', () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `id${i}`);
    const parts = chunks(ids);
    expect(parts.map((p) => p.length)).toEqual([bulkChunk, bulkChunk, 500]);
    expect(parts.flat()).toEqual(ids);
    expect(chunks([])).toEqual([]);
    expect(chunks(['a', 'b', 'c'], 2)).toEqual([['a', 'b'], ['c']]);
  });

  test('about ten calls per selection, never below 100 ids or above the chunk limit', () => {
    expect(chunkSize(5)).toBe(100);
    expect(chunkSize(1000)).toBe(100);
    expect(chunkSize(2500)).toBe(250);
    expect(chunkSize(10000)).toBe(bulkChunk);
    expect(chunkSize(50000)).toBe(bulkChunk);
  });

  test('runChunked sends one chunk after the other, reports progress and sums the counts', async () => {
    const ids = Array.from({ length: 2001 }, (_, i) => `id${i}`); // chunks of 201
    const sent: number[] = [];
    const progress: number[] = [];
    let inFlight = 0;
    const counted = await runChunked(
      ids,
      async (c) => {
        inFlight++;
        expect(inFlight).toBe(1);
        await new Promise((r) => setTimeout(r, 1));
        sent.push(c.length);
        inFlight--;
        return c.length - 1; // the API counts only what changed
      },
      (done) => progress.push(done),
    );
    expect(sent).toEqual([...Array(9).fill(201), 192]);
    expect(progress).toEqual([201, 402, 603, 804, 1005, 1206, 1407, 1608, 1809, 2001]);
    expect(counted).toBe(2001 - 10);
  });

  test('a failed chunk stops the run: later chunks are not sent', async () => {
    let calls = 0;
    const run = runChunked(
      Array.from({ length: 3000 }, (_, i) => `id${i}`),
      async () => {
        calls++;
        if (calls === 2) throw new Error('refused');
        return 300;
      },
      () => {},
    );
    await expect(run).rejects.toThrow('refused');
    expect(calls).toBe(2);
  });

  test('plural writes the count with its noun', () => {
    expect(plural(1, 'contact')).toBe('1 contact');
    expect(plural(0, 'contact')).toBe('0 contacts');
    expect(plural(10000, 'contact')).toBe('10,000 contacts');
    expect(plural(2, 'person', 'people')).toBe('2 people');
  });
});
