// The one place that knows how the dashboard proves who it is to /api.
//
// Today the API hands out a Bearer token at login and sign-up; it is kept in
// memory and in sessionStorage (so a reload of the tab stays signed in, and
// closing the tab signs out) and sent as the Authorization header. When the
// server sets an HttpOnly session cookie instead, only this module changes:
// `remember` stops storing anything, `authorize` adds the CSRF header
// instead of the Bearer token, and `signedIn` asks the server.
import type { Middleware } from 'openapi-fetch';

const storageKey = 'contactbook.session';

interface Stored {
  token: string;
  expiresAt: string;
}

let current: Stored | null = load();
const listeners = new Set<() => void>();

function load(): Stored | null {
  try {
    const raw = sessionStorage.getItem(storageKey);
    if (!raw) return null;
    const s = JSON.parse(raw) as Stored;
    return Date.parse(s.expiresAt) > Date.now() ? s : null;
  } catch {
    return null;
  }
}

/** remember keeps the session a login or sign-up answered with. */
export function remember(token: string, expiresAt: string): void {
  current = { token, expiresAt };
  sessionStorage.setItem(storageKey, JSON.stringify(current));
  listeners.forEach((l) => l());
}

/** forget ends the session on this side (log out, or the server refused it). */
export function forget(): void {
  current = null;
  sessionStorage.removeItem(storageKey);
  listeners.forEach((l) => l());
}

/** signedIn says whether there is a session worth trying. */
export function signedIn(): boolean {
  return current !== null && Date.parse(current.expiresAt) > Date.now();
}

/** onChange calls fn whenever the session starts or ends; returns the unsubscribe. */
export function onChange(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** authorize is the client middleware: credentials out, a refused session ends it. */
export const authorize: Middleware = {
  onRequest({ request }) {
    if (current) request.headers.set('Authorization', `Bearer ${current.token}`);
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && request.headers.has('Authorization')) forget();
    return response;
  },
};
