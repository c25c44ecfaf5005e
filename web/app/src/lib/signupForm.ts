// What the form editor and its preview share: the fields a sign-up form
// may ask for, and the HTML snippet that embeds a form in another site.
import type { FieldDefinition, Schemas } from '../api/client';

export type SignupForm = Schemas['Form'];
export type FormField = Schemas['FormField'];

/** The built-in fields, in the hosted page's order, with its labels. */
export const builtinFields: { key: string; label: string; type: string }[] = [
  { key: 'first_name', label: 'First name', type: 'text' },
  { key: 'last_name', label: 'Last name', type: 'text' },
  { key: 'company', label: 'Company', type: 'text' },
  { key: 'job_title', label: 'Job title', type: 'text' },
  { key: 'phone', label: 'Phone', type: 'tel' },
];

/** fieldChoices are every field a form of the book may ask for, topics last. */
export function fieldChoices(custom: FieldDefinition[]): { key: string; label: string; type: string }[] {
  return [
    ...builtinFields,
    ...custom.map((f) => ({ key: `custom.${f.key}`, label: f.name, type: f.type === 'text' ? 'text' : f.type })),
    { key: 'topics', label: 'Topics', type: 'topics' },
  ];
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** escapeHTML makes text safe inside an HTML element or attribute. */
export function escapeHTML(s: string): string {
  return s.replace(/[&<>"']/g, (c) => escapes[c]);
}

/**
 * embedSnippet is a plain HTML form that posts to the form's submissions
 * endpoint from any site: no script, the honeypot hidden off-screen, the
 * consent text beside its checkbox.
 */
export function embedSnippet(origin: string, form: SignupForm, custom: FieldDefinition[], topics: { id: string; name: string }[]): string {
  const choices = fieldChoices(custom);
  const lines = [`<form method="post" action="${escapeHTML(origin)}/api/forms/${form.id}/submissions">`];
  lines.push('  <p><label for="cb-email">Email</label><br><input id="cb-email" name="email" type="email" autocomplete="email" required></p>');
  for (const f of form.fields) {
    const c = choices.find((x) => x.key === f.key);
    if (!c) continue;
    if (f.key === 'topics') {
      lines.push('  <fieldset><legend>Topics</legend>');
      for (const t of topics) lines.push(`    <label><input type="checkbox" name="topics" value="${t.id}"> ${escapeHTML(t.name)}</label><br>`);
      lines.push('  </fieldset>');
      continue;
    }
    const id = 'cb-' + f.key.replace(/[._]/g, '-');
    lines.push(`  <p><label for="${id}">${escapeHTML(c.label)}</label><br><input id="${id}" name="${escapeHTML(f.key)}" type="${c.type}"${f.required ? ' required' : ''}></p>`);
  }
  lines.push('  <div style="position:absolute;left:-10000px" aria-hidden="true"><input name="company_website" tabindex="-1" autocomplete="off"></div>');
  if (form.consent_text) {
    lines.push(`  <p><input id="cb-consent" type="checkbox" name="consent" value="on" required> <label for="cb-consent">${escapeHTML(form.consent_text)}</label></p>`);
  }
  lines.push('  <button type="submit">Subscribe</button>', '</form>');
  return lines.join('\n');
}
