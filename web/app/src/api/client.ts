// The typed client of /api, generated from the OpenAPI document
// (schema.d.ts, `npm run gen`): a path, parameter or body the API does not
// have fails the type check of the build.
import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { authorize, forget } from './session';

export type Schemas = components['schemas'];
export type Contact = Schemas['Contact'];
export type Book = Schemas['Book'];
export type Label = Schemas['Label'];
export type FieldDefinition = Schemas['FieldDefinition'];
export type Member = Schemas['Member'];
export type Invitation = Schemas['Invitation'];
export type ApiKey = Schemas['ApiKey'];
export type Role = Schemas['Role'];
export type TeamMembership = Schemas['TeamMembership'];
export type User = Schemas['User'];

export const api = createClient<paths>({ baseUrl: '' });
api.use(authorize);

/**
 * ApiError is a failed call: the API's error code and its sentence for
 * people. field, when a screen sets it, names the form field the error
 * belongs to where the message does not quote one.
 */
export class ApiError extends Error {
  field?: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The fields the API refused, each with its own sentence, when the answer names them. */
    readonly details: FieldDetail[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** FieldDetail is one refused field of an error answer: its JSON path (emails[1].address) and why. */
export interface FieldDetail {
  field: string;
  message: string;
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** detailsOf reads the error's field details, keeping only well-formed ones. */
function detailsOf(v: unknown): FieldDetail[] {
  if (!Array.isArray(v)) return [];
  return v.filter((d): d is FieldDetail => typeof d?.field === 'string' && typeof d?.message === 'string' && d.field !== '');
}

/**
 * ok unwraps an openapi-fetch answer: the envelope's data, or an ApiError
 * carrying the envelope's code and message. A network failure or an aborted
 * request propagates as thrown by fetch.
 */
export async function ok<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) {
    const e = (error as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    throw new ApiError(response.status, e?.code ?? 'SERVER_ERROR', e?.message ?? `The server answered ${response.status}.`, detailsOf(e?.details));
  }
  return data as T;
}

/** bookHeader is the header every contact endpoint needs. */
export function inBook(bookId: string) {
  return { 'X-Book-ID': bookId };
}

/**
 * errorText is the sentence a screen shows for a failure: an ApiError's
 * message (the API's own sentence), any other error's message, or the
 * thrown value itself.
 */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** isAbort tells a cancelled request (a newer one replaced it) from a failure. */
export function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === 'AbortError';
}

/**
 * logOut ends the session on the server (its token stops working at once;
 * the answer clears the cookies) and then in the app. A session the server
 * already ended (401) is simply forgotten.
 */
export async function logOut(): Promise<void> {
  try {
    await ok(api.POST('/api/auth/logout'));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) throw e;
  }
  forget();
}
