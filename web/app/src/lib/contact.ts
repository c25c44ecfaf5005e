// How a contact is named and summed up wherever it is listed.
import type { Contact } from '../api/client';
import type { SocialLabel } from '../api/enums';

export function contactName(c: Pick<Contact, 'first_name' | 'last_name' | 'company'>): string {
  const n = `${c.first_name} ${c.last_name}`.trim();
  return n || c.company || 'Unnamed contact';
}

export function primaryEmail(c: Pick<Contact, 'emails'>): string {
  return (c.emails.find((e) => e.primary) ?? c.emails[0])?.address ?? '';
}

export function primaryPhone(c: Pick<Contact, 'phones'>): string {
  return (c.phones.find((p) => p.primary) ?? c.phones[0])?.number ?? '';
}

/** How the social networks are written. */
export const socialNames: Record<SocialLabel, string> = {
  linkedin: 'LinkedIn',
  x: 'X',
  instagram: 'Instagram',
  facebook: 'Facebook',
  github: 'GitHub',
  youtube: 'YouTube',
  other: 'Other',
};
