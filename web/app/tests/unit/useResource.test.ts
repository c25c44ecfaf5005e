import { describe, expect, test } from 'vitest';
import { h, render } from 'preact';
import { act } from 'preact/test-utils';
import { ApiError, errorText } from '../../src/api/client';
import { useResource, type Resource, type ResourceOptions } from '../../src/lib/useResource';

/** later is a promise the test settles when it chooses, with the signal its load was given. */
interface Later<T> {
  signal: AbortSignal;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
}

/**
 * harness renders a component around useResource into a bare container
 * (the hook draws nothing, so no DOM is needed) and records every load.
 */
function harness<T>(options: (key: string) => ResourceOptions = () => ({})) {
  const loads: (Later<T> & { key: string })[] = [];
  const seen: { current: Resource<T> | null } = { current: null };
  function Screen({ k }: { k: string }) {
    seen.current = useResource<T>((signal) => new Promise<T>((resolve, reject) => loads.push({ key: k, signal, resolve, reject })), [k], options(k));
    return null;
  }
  const root = { childNodes: [], firstChild: null, namespaceURI: 'http://www.w3.org/1999/xhtml', ownerDocument: {} } as unknown as Element;
  return {
    loads,
    get r(): Resource<T> {
      return seen.current!;
    },
    show: (k: string) => act(() => render(h(Screen, { k }), root)),
    /** settle lets the answers given so far land. */
    settle: () => act(async () => {}),
    leave: () => act(() => render(null, root)),
  };
}

describe('errorText', () => {
  test('an API error is its sentence, any other error its message, anything else itself', () => {
    expect(errorText(new ApiError(404, 'NOT_FOUND', 'No such contact.'))).toBe('No such contact.');
    expect(errorText(new TypeError('Failed to fetch'))).toBe('Failed to fetch');
    expect(errorText('refused')).toBe('refused');
    expect(errorText(42)).toBe('42');
  });
});

describe('useResource', () => {
  test('loads on mount and shows the answer', async () => {
    const t = harness<string>();
    await t.show('a');
    expect(t.r.loading).toBe(true);
    expect(t.r.data).toBe(null);
    expect(t.loads.map((l) => l.key)).toEqual(['a']);
    t.loads[0].resolve('A');
    await t.settle();
    expect(t.r).toMatchObject({ data: 'A', loading: false, error: '' });
  });

  test('a load replaced by a newer one is aborted, and its late answer is dropped', async () => {
    const t = harness<string>();
    await t.show('book-1');
    await t.show('book-2');
    const [first, second] = t.loads;
    expect(first.signal.aborted).toBe(true);
    expect(second.signal.aborted).toBe(false);
    second.resolve('contacts of book 2');
    await t.settle();
    // The first answer arrives last all the same (a server that ignored the abort).
    first.resolve('contacts of book 1');
    await t.settle();
    expect(t.r.data).toBe('contacts of book 2');
    expect(t.r.loading).toBe(false);
  });

  test('a late failure of a replaced load is not shown either', async () => {
    const t = harness<string>();
    await t.show('a');
    await t.show('b');
    t.loads[1].resolve('B');
    t.loads[0].reject(new ApiError(500, 'SERVER_ERROR', 'The server answered 500.'));
    await t.settle();
    expect(t.r).toMatchObject({ data: 'B', error: '', loading: false });
  });

  test('new dependencies clear the data unless kept', async () => {
    const cleared = harness<string>();
    await cleared.show('a');
    cleared.loads[0].resolve('A');
    await cleared.settle();
    await cleared.show('b');
    expect(cleared.r.data).toBe(null);

    const kept = harness<string>(() => ({ keep: true }));
    await kept.show('a');
    kept.loads[0].resolve('A');
    await kept.settle();
    await kept.show('b');
    expect(kept.r).toMatchObject({ data: 'A', loading: true });
  });

  test('an error is shown through errorText, with what was thrown kept', async () => {
    const t = harness<string>();
    await t.show('a');
    const refused = new ApiError(402, 'ADDON_REQUIRED', 'Campaigns need the Campaigns add-on.');
    t.loads[0].reject(refused);
    await t.settle();
    expect(t.r).toMatchObject({ data: null, loading: false, error: 'Campaigns need the Campaigns add-on.' });
    expect(t.r.failure).toBe(refused);
  });

  test('describe words a failure the screen explains itself', async () => {
    const t = harness<string>(() => ({ describe: (e) => (e instanceof ApiError && e.status === 404 ? 'This contact does not exist (any more).' : errorText(e)) }));
    await t.show('a');
    t.loads[0].reject(new ApiError(404, 'NOT_FOUND', 'not found'));
    await t.settle();
    expect(t.r.error).toBe('This contact does not exist (any more).');
  });

  test('an aborted request is no error', async () => {
    const t = harness<string>();
    await t.show('a');
    t.loads[0].reject(new DOMException('The user aborted a request.', 'AbortError'));
    await t.settle();
    expect(t.r.error).toBe('');
  });

  test('reload loads again, keeps the data shown meanwhile, clears the error and settles with the answer', async () => {
    const t = harness<string>();
    await t.show('a');
    t.loads[0].reject(new Error('Failed to fetch'));
    await t.settle();
    expect(t.r.error).toBe('Failed to fetch');

    let done = false;
    await act(() => void t.r.reload().then(() => (done = true)));
    expect(t.loads).toHaveLength(2);
    expect(t.r).toMatchObject({ error: '', loading: true });
    t.loads[1].resolve('A');
    await t.settle();
    expect(done).toBe(true);
    expect(t.r).toMatchObject({ data: 'A', loading: false });

    await act(() => void t.r.reload());
    expect(t.r).toMatchObject({ data: 'A', loading: true });
    // A second reload replaces the first: only its answer lands.
    await act(() => void t.r.reload());
    expect(t.loads[2].signal.aborted).toBe(true);
    t.loads[3].resolve('A again');
    t.loads[2].resolve('stale');
    await t.settle();
    expect(t.r.data).toBe('A again');
  });

  test('set replaces the data in place', async () => {
    const t = harness<string[]>();
    await t.show('a');
    t.loads[0].resolve(['x']);
    await t.settle();
    await act(() => t.r.set((d) => [...(d ?? []), 'y']));
    expect(t.r.data).toEqual(['x', 'y']);
  });

  test('nothing is loaded while disabled, then loaded once enabled', async () => {
    let enabled = false;
    const t = harness<string>(() => ({ enabled }));
    await t.show('a');
    await act(() => void t.r.reload());
    expect(t.loads).toHaveLength(0);
    enabled = true;
    await t.show('a');
    expect(t.loads).toHaveLength(1);
  });

  test('leaving the screen aborts the load and drops its answer', async () => {
    const t = harness<string>();
    await t.show('a');
    const seen = t.r;
    await t.leave();
    expect(t.loads[0].signal.aborted).toBe(true);
    t.loads[0].resolve('A');
    await t.settle();
    expect(seen.data).toBe(null);
  });
});
