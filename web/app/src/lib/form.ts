// Form helpers shared by every editor: client-side checks that mirror the
// API's rules, and placing the API's error sentence at the field it names.
import { ApiError } from '../api/client';

export type FieldErrors = Record<string, string>;

/**
 * fieldOf returns the field an API error message names: the API quotes the
 * field in backticks, as in "`emails[0].address` repeats ...". Paths are
 * returned as written (emails[0].address).
 */
export function fieldOf(message: string): string | null {
  const m = /`([a-z_]+(?:\[\d+\](?:\.[a-z_]+)?)?)`/.exec(message);
  return m ? m[1] : null;
}

/**
 * placeError splits an error into the messages shown at fields (when the
 * form has those fields) and the message shown for the whole form. The
 * answer's field details, when it has them, place every refused field at
 * once; otherwise the field the message quotes takes the message.
 */
export function placeError(err: unknown, fields: readonly string[]): { fields: FieldErrors; form: string } {
  if (!(err instanceof ApiError)) {
    return { fields: {}, form: 'The server could not be reached. Check your connection and try again.' };
  }
  if (!err.field && err.details.length > 0) {
    const placed: FieldErrors = {};
    const rest: string[] = [];
    for (const d of err.details) {
      if (fields.includes(d.field)) placed[d.field] ??= d.message.replace(/`/g, '');
      else rest.push(d.message);
    }
    // Details the form has no field for keep the sentence of the whole answer.
    if (Object.keys(placed).length > 0) return { fields: placed, form: rest.length > 0 ? err.message : '' };
  }
  const f = err.field ?? fieldOf(err.message);
  if (f && fields.includes(f)) return { fields: { [f]: err.message.replace(/`/g, '') }, form: '' };
  return { fields: {}, form: err.message };
}

// Deliberately loose: the server decides; this only catches typing slips early.
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkEmail(v: string): string {
  if (!v.trim()) return 'Enter an email address.';
  return emailPattern.test(v.trim()) ? '' : 'Enter an email address like name@example.com.';
}

export function checkPassword(v: string): string {
  const n = [...v].length;
  if (n < 8) return 'Use at least 8 characters.';
  if (n > 72) return 'Use at most 72 characters.';
  return '';
}

export function checkRequired(v: string, what: string): string {
  return v.trim() ? '' : `Enter ${what}.`;
}

export function checkURL(v: string): string {
  if (!v.trim()) return '';
  try {
    const u = new URL(v.trim());
    return u.protocol === 'http:' || u.protocol === 'https:' ? '' : 'Enter a web address starting with http:// or https://.';
  } catch {
    return 'Enter a web address starting with http:// or https://.';
  }
}

export function checkDate(v: string): string {
  if (!v) return '';
  return /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v + 'T00:00:00Z')) ? '' : 'Enter a date as YYYY-MM-DD.';
}

export function checkPhone(v: string): string {
  if (!v.trim()) return '';
  return /^[0-9+().\-/ ]+(?:\s*(?:x|ext\.?)\s*\d+)?$/i.test(v.trim()) ? '' : 'Use digits, spaces and + ( ) . - /, optionally an extension like x12.';
}

/** collect keeps the non-empty messages of a set of checks. */
export function collect(checks: Record<string, string>): FieldErrors {
  const out: FieldErrors = {};
  for (const [k, v] of Object.entries(checks)) if (v) out[k] = v;
  return out;
}

/** keyFromName suggests a custom field key from its name: "Customer tier" → customer_tier. */
export function keyFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^[^a-z]+|_+$/g, '')
    .slice(0, 64);
}
