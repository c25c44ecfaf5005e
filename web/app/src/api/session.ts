// The one place that knows how the dashboard proves who it is to /api.
//
// The session is the server's cookie session: every call that logs someone
// in (log in, sign up, accept an invitation, confirm a reset, change the
// password) asks for it with `?session=cookie`, so the login token lands in
// the HttpOnly, SameSite=Strict `cb_session` cookie and never in the answer:
// no script of the page, an injected one included, can read it. The browser
// sends that cookie by itself. Writes must also carry the readable `cb_csrf`
// cookie's value in the X-CSRF-Token header (a signed double submit), which
// the middleware below adds to every call. The `cb_csrf` cookie expires
// with the session, so its presence is also how the app knows, after a
// reload, that it has a session worth trying.
import type { Middleware } from 'openapi-fetch';

const csrfCookie = 'cb_csrf';
const csrfHeader = 'X-CSRF-Token';

/** cookieSession is the query of every call that logs someone in: answer with the cookie session. */
export const cookieSession = { query: { session: 'cookie' as const } };

const listeners = new Set<() => void>();

function csrfToken(): string | null {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === csrfCookie) return decodeURIComponent(value.join('='));
  }
  return null;
}

/** started tells the app that a call made with cookieSession succeeded: it is signed in. */
export function started(): void {
  listeners.forEach((l) => l());
}

/**
 * forget ends the session on this side: after logging out (the server has
 * already cleared its cookies) or when the server refused the session.
 * The HttpOnly cookie is out of a script's reach; the server ignores it
 * once its session ended, and the next login replaces it.
 */
export function forget(): void {
  document.cookie = `${csrfCookie}=; Path=/; Max-Age=0; SameSite=Strict`;
  listeners.forEach((l) => l());
}

/** signedIn says whether there is a session worth trying. */
export function signedIn(): boolean {
  return csrfToken() !== null;
}

/** onChange calls fn whenever the session starts or ends; returns the unsubscribe. */
export function onChange(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** authorize is the client middleware: the CSRF header out, a refused session ends it. */
export const authorize: Middleware = {
  onRequest({ request }) {
    const token = csrfToken();
    if (token && request.method !== 'GET' && request.method !== 'HEAD') request.headers.set(csrfHeader, token);
    return request;
  },
  onResponse({ request, response }) {
    // A wrong password or code at login is a 401 too, but says nothing of the session.
    // signedIn() is no test here: the server clears the cookies of a session
    // it refused in that very answer.
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/auth/login')) forget();
    return response;
  },
};
