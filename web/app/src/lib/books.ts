// Book presentation shared by the screens that show books.

/** The icons a book can carry: the identifier the API stores, and its glyph. */
export const bookIcons: Record<string, { glyph: string; name: string }> = {
  book: { glyph: '📒', name: 'Book' },
  users: { glyph: '👥', name: 'People' },
  briefcase: { glyph: '💼', name: 'Briefcase' },
  building: { glyph: '🏢', name: 'Building' },
  star: { glyph: '⭐', name: 'Star' },
  heart: { glyph: '❤️', name: 'Heart' },
  home: { glyph: '🏠', name: 'Home' },
  globe: { glyph: '🌍', name: 'Globe' },
};

export function iconGlyph(icon: string): string {
  return (bookIcons[icon] ?? bookIcons.book).glyph;
}

export const hexColor = /^#[0-9A-Fa-f]{6}$/;

export function checkColor(v: string): string {
  return hexColor.test(v) ? '' : 'Use a colour like #4F46E5.';
}
