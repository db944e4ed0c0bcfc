import type { Context } from 'koa';
import { HttpError } from '../http-error.js';
import { hashKey, hashesEqual } from '../api-keys.js';
import type { RequestOrigin } from '../auth/request-origin.js';
import { readSessionCookie } from '../auth/session-cookie.js';
import type { SignInSessions } from '../auth/sign-in-sessions.js';
import type { Account, SharedLink } from '../store/account-store.js';
import type { EventStore, KeyKind, Project } from '../store/event-store.js';
import { createKeyHashes } from './write-key-hashes.js';

/**
 * What a route needs (docs/protocol.md, "Authentication and key kinds"): `write` sends data;
 * `report` reads the reports only (what a shared link opens); `read` reads reports, events and
 * recordings; `admin` also erases, exports and manages shared links.
 */
export type Access = KeyKind | 'report';

/** Who made a request: a key, a signed-in account, or a shared link. */
export type Principal =
  | { via: 'key'; kind: KeyKind }
  | { via: 'session'; account: Account; sessionId: string }
  | { via: 'link'; link: SharedLink };

/** The caller of a request, once its credentials checked out. */
export interface Caller {
  project: Project;
  /**
   * The key kind whose powers the caller has, for the per-project rate limit: a viewer and a link
   * count as `read`, an admin account as `admin`.
   */
  kind: KeyKind;
  principal: Principal;
}

/** What {@link authenticate} reads besides the request. */
export interface AuthDeps {
  store: EventStore;
  /** The sessions of signed-in accounts (`auth/sign-in-sessions.ts`). */
  signIns: SignInSessions;
  /** The same-origin check of cookie-authenticated changes (`auth/request-origin.ts`). */
  origin: RequestOrigin;
}

const SCHEME = /^ApiKey\s+(\S+)$/;
const LINK_SCHEME = /^SharedLink\s+(\S+)$/;

/** Hashes of write keys that checked out: a pure function of the key, so one memory serves every store. */
const writeKeyHashes = createKeyHashes();

/**
 * Where the key of a request is: `Authorization: ApiKey <key>` with `X-Project-ID`, or for the
 * beacon form (`text/plain`, which cannot carry headers) `?api_key=&project_id=`.
 */
function readCredentials(ctx: Context, allowQuery: boolean): { key: string; projectId: string } | null {
  const header = ctx.get('authorization');
  if (header) {
    const match = SCHEME.exec(header);
    const projectId = ctx.get('x-project-id');
    return match?.[1] && projectId ? { key: match[1], projectId } : null;
  }
  if (!allowQuery) return null;
  const key = ctx.query.api_key;
  const projectId = ctx.query.project_id;
  return typeof key === 'string' && key && typeof projectId === 'string' && projectId ? { key, projectId } : null;
}

/**
 * The kinds of key that may call a route needing `need`: a write key only writes; reading takes a
 * read key or an admin key (a script that erases or exports also lists what it acts on); erasure
 * and export take an admin key alone, so the read key a dashboard holds can neither destroy nor
 * copy everything.
 */
const ACCEPTED: Record<Access, readonly KeyKind[]> = { write: ['write'], report: ['read', 'admin'], read: ['read', 'admin'], admin: ['admin'] };

/** The 401 message for a key of the wrong kind. */
const WRONG_KIND: Record<Access, string> = {
  write: 'This endpoint needs a write key; read and admin keys cannot send data.',
  report: 'This endpoint needs a read key; write keys can only send data.',
  read: 'This endpoint needs a read key; write keys can only send data.',
  admin: 'This endpoint needs an admin key (key create --kind admin); read keys can only read reports and events.',
};

/**
 * The powers of each role, the same as those of the key kinds (docs/decisions.md, "Team access"):
 * a viewer as a read key, an admin as an admin key. No account sends data.
 */
const ROLE_KIND = { viewer: 'read', admin: 'admin' } as const satisfies Record<Account['role'], KeyKind>;

const MISSING = 'Missing credentials: send "Authorization: ApiKey <key>" and "X-Project-ID".';

async function byKey(store: EventStore, need: Access, credentials: { key: string; projectId: string }): Promise<Caller> {
  const hash = need === 'write' ? writeKeyHashes.hashOf(credentials.key) : hashKey(credentials.key);
  const found = await store.findCredential(hash);
  if (!found || !hashesEqual(found.key.hash, hash) || found.key.projectId !== credentials.projectId) {
    throw new HttpError('AUTH_ERROR', 'Invalid API key or project id.');
  }
  if (!ACCEPTED[need].includes(found.key.kind)) throw new HttpError('AUTH_ERROR', WRONG_KIND[need]);
  if (need === 'write') writeKeyHashes.remember(credentials.key, hash);
  return { project: found.project, kind: found.key.kind, principal: { via: 'key', kind: found.key.kind } };
}

/** A shared link opens its project's reports, and nothing else. */
async function byLink(ctx: Context, store: EventStore, need: Access, token: string): Promise<Caller> {
  const hash = hashKey(token);
  const link = await store.findSharedLink(hash);
  const project = link === null || !hashesEqual(link.hash, hash) ? null : await store.getProject(link.projectId);
  const named = ctx.get('x-project-id');
  if (link === null || project === null || (named !== '' && named !== project.id)) {
    throw new HttpError('AUTH_ERROR', 'This shared link does not exist or was revoked.');
  }
  if (need !== 'report') throw new HttpError('FORBIDDEN', 'A shared link opens the reports only: no events, replays, export or erasure.');
  return { project, kind: 'read', principal: { via: 'link', link } };
}

/** A signed-in account acts on the project `X-Project-ID` names, with its role's powers. */
async function bySession(ctx: Context, deps: AuthDeps, need: Access, token: string): Promise<Caller> {
  const found = await deps.signIns.resolve(token);
  if (found === null) throw new HttpError('AUTH_ERROR', 'Your session has ended; sign in again.');
  // Cookies ride along with any request the browser makes to this origin: a change must come from
  // the dashboard's own pages (CSRF), whatever SameSite already keeps away.
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') deps.origin.assertSameOrigin(ctx);
  const { account, session } = found;
  if (need === 'write') throw new HttpError('FORBIDDEN', 'Signed-in accounts do not send data; use the project\'s write key.');
  const kind = ROLE_KIND[account.role];
  if (!ACCEPTED[need].includes(kind)) throw new HttpError('FORBIDDEN', 'This needs an admin account; viewers read reports, events and replays.');
  const projectId = ctx.get('x-project-id');
  if (projectId === '') throw new HttpError('AUTH_ERROR', 'Signed in: send "X-Project-ID" to name the project.');
  const project = await deps.store.getProject(projectId);
  if (project === null) throw new HttpError('AUTH_ERROR', 'Invalid API key or project id.');
  return { project, kind, principal: { via: 'session', account, sessionId: session.id } };
}

/**
 * Checks the credentials of a request against the project and the access the route needs, the
 * one place where key kinds, account roles and shared links are checked:
 * - `Authorization: ApiKey <key>` with `X-Project-ID` (or the beacon form's query): the key's kind;
 * - `Authorization: SharedLink <token>`: reports of the link's project only;
 * - else the session cookie of a signed-in account (docs/decisions.md, "Team access"): its role's
 *   powers on the project `X-Project-ID` names, changes only from the same origin.
 * A missing or wrong credential is 401 `AUTH_ERROR`, the same for every wrong part; a wrong key
 * kind is 401 as it always was; a valid account or link without the power is 403 `FORBIDDEN`.
 */
export async function authenticate(ctx: Context, deps: AuthDeps, need: Access, options: { allowQuery: boolean }): Promise<Caller> {
  const link = LINK_SCHEME.exec(ctx.get('authorization'))?.[1];
  if (link !== undefined) return byLink(ctx, deps.store, need, link);
  const credentials = readCredentials(ctx, options.allowQuery);
  if (credentials) return byKey(deps.store, need, credentials);
  const token = ctx.get('authorization') === '' ? readSessionCookie(ctx) : null;
  if (token !== null) return bySession(ctx, deps, need, token);
  throw new HttpError('AUTH_ERROR', options.allowQuery ? `${MISSING.slice(0, -1)}, or ?api_key=&project_id= on a text/plain beacon.` : MISSING);
}
