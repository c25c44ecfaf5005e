// What each role may do, as the API enforces it; the screens hide or disable
// controls a role cannot use, and say why.
import type { Role } from '../api/client';

const rank: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export function atLeast(role: Role | undefined, min: Role): boolean {
  return role !== undefined && rank[role] >= rank[min];
}

export { roles } from '../api/enums';

export const roleNames: Record<Role, string> = { viewer: 'Viewer', member: 'Member', admin: 'Admin', owner: 'Owner' };

/** why says which role an action needs, for a disabled control's description. */
export function needs(min: Role): string {
  return `Needs the ${roleNames[min].toLowerCase()} role or higher.`;
}
