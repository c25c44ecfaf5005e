import { describe, expect, test } from 'vitest';
import { defaultView, listQuery, pageCount, parseView, viewToSearch } from '../../src/lib/contactsView';

describe('contacts view in the URL', () => {
  test('defaults leave the URL empty', () => {
    expect(viewToSearch(defaultView)).toBe('');
    expect(parseView('')).toEqual(defaultView);
  });

  test('a view survives the round trip', () => {
    const v = {
      q: 'ana ruiz',
      label: '3d9b6f1e-2c4a-4b8e-9f07-6a1c5e8d2b94',
      starred: 'true' as const,
      segment: '2e7b9c4a-6f1d-4a3e-8b5c-0d2f4e6a8c1b',
      sort: 'name' as const,
      page: 3,
      size: 100,
      columns: ['name', 'phone', 'field:tier'],
    };
    const s = viewToSearch(v);
    expect(s).toBe('q=ana+ruiz&label=3d9b6f1e-2c4a-4b8e-9f07-6a1c5e8d2b94&starred=true&segment=2e7b9c4a-6f1d-4a3e-8b5c-0d2f4e6a8c1b&sort=name&page=3&size=100&cols=name%2Cphone%2Cfield%3Atier');
    expect(parseView(s)).toEqual(v);
  });

  test('malformed values fall back to the defaults', () => {
    const v = parseView('label=x&segment=y&starred=maybe&sort=drop+table&page=-2&size=7&cols=evil,Field:X,email,email');
    expect(v.label).toBe('');
    expect(v.segment).toBe('');
    expect(v.starred).toBe('');
    expect(v.sort).toBe(defaultView.sort);
    expect(v.page).toBe(1);
    expect(v.size).toBe(defaultView.size);
    // Unknown columns are dropped, repeats once, and the name column always stays.
    expect(v.columns).toEqual(['name', 'email']);
  });

  test('an over-long search is cut to what the API takes', () => {
    expect(parseView('q=' + 'a'.repeat(500)).q).toHaveLength(200);
  });

  test('the API query pages by offset', () => {
    expect(listQuery({ ...defaultView, page: 3, size: 25, starred: 'false', q: '' })).toEqual({
      q: undefined,
      label_id: undefined,
      starred: false,
      segment_id: undefined,
      sort: '-created_at',
      limit: 25,
      offset: 50,
    });
    expect(pageCount(0, 50)).toBe(1);
    expect(pageCount(1000, 50)).toBe(20);
    expect(pageCount(1001, 50)).toBe(21);
  });
});
