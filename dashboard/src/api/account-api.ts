/**
 * The sign-in endpoints (docs/protocol.md, "Accounts and sessions") and a project's shared links
 * ("Shared links"). Sign-in and the session answer set and read the `HttpOnly` session cookie,
 * which this code never sees: the browser sends it on same-origin requests.
 */
import type { ApiClient } from './api-client.js';
import { ApiError } from './api-error.js';

/** An account as the server answers it. */
export interface WireAccount {
  id: string;
  email: string;
  role: 'viewer' | 'admin';
}

/** A project an account may open. */
export interface WireProject {
  id: string;
  name: string;
}

/** `POST /api/v1/auth/sign-in` and `GET /api/v1/auth/session`. */
export interface SessionAnswer {
  account: WireAccount;
  projects: WireProject[];
}

/** A shared link as listed (never its token, which only its creation answers). */
export interface WireLink {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  created_by: string | null;
  revoked_at: string | null;
}

/** `POST /api/v1/links`. */
export interface CreatedLink {
  link: WireLink;
  token: string;
  /** The dashboard's address of the link under the server's base path: `/dashboard/#/shared/<token>`. */
  path: string;
}

async function call<T>(basePath: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${basePath}/api/v1/${path}`, {
      method,
      headers: { Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      cache: 'no-store',
      credentials: 'same-origin',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError('The server could not be reached.', 0, null);
  }
  const answer = (await response.json().catch(() => null)) as { error?: unknown; code?: unknown } | null;
  if (!response.ok) throw new ApiError(typeof answer?.error === 'string' ? answer.error : `HTTP ${response.status}`, response.status, typeof answer?.code === 'string' ? answer.code : null);
  return answer as T;
}

/** Signs in with an email and password; the server sets the session cookie. */
export const signIn = (basePath: string, email: string, password: string): Promise<SessionAnswer> => call(basePath, 'POST', 'auth/sign-in', { email, password });

/** The signed-in account of this browser's cookie, or null when there is none (401). */
export async function currentSession(basePath: string): Promise<SessionAnswer | null> {
  try {
    return await call<SessionAnswer>(basePath, 'GET', 'auth/session');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}

/** Ends the session on the server and clears its cookie. */
export const signOut = (basePath: string): Promise<unknown> => call(basePath, 'POST', 'auth/sign-out');

/** The project's shared links. */
export const listLinks = async (api: ApiClient, signal?: AbortSignal): Promise<WireLink[]> => (await api.get<{ links: WireLink[] }>('links', undefined, signal)).links;

/** Makes a read-only shared link; the answer holds its token, shown once. */
export const createLink = (api: ApiClient, name: string): Promise<CreatedLink> => api.send<CreatedLink>('POST', 'links', { name });

/** Revokes a link: it stops working at once. */
export const revokeLink = (api: ApiClient, linkId: string): Promise<unknown> => api.send('DELETE', `links/${encodeURIComponent(linkId)}`);

/** Erases one user of the project (their events and the recordings uploaded under their id). */
export const eraseUser = (api: ApiClient, userId: string): Promise<{ events: number; recordings: number }> =>
  api.send('DELETE', `users/${encodeURIComponent(userId)}`);
