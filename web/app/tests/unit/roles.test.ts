import { describe, expect, test } from 'vitest';
import { atLeast, needs, roles } from '../../src/lib/roles';

describe('roles', () => {
  test('each role includes the ones below it', () => {
    for (const [i, have] of roles.entries()) {
      for (const [j, min] of roles.entries()) expect(atLeast(have, min), `${have} at least ${min}`).toBe(i >= j);
    }
  });

  test('no role (not signed in, or not a member) is at least anything', () => {
    expect(atLeast(undefined, 'viewer')).toBe(false);
  });

  test('the reason a control is disabled names the role it needs', () => {
    expect(needs('admin')).toBe('Needs the admin role or higher.');
    expect(needs('member')).toBe('Needs the member role or higher.');
  });
});
