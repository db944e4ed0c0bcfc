import type { Context } from 'koa';
import { HttpError } from '../http-error.js';
import { hashKey, hashesEqual } from '../api-keys.js';
import type { EventStore, KeyKind, Project } from '../store/event-store.js';
import { createKeyHashes } from './write-key-hashes.js';

/** The caller of a request, once its key checked out. */
export interface Caller {
  project: Project;
  kind: KeyKind;
}

const SCHEME = /^ApiKey\s+(\S+)$/;

/** Hashes of write keys that checked out: a pure function of the key, so one memory serves every store. */
const writeKeyHashes = createKeyHashes();

/**
 * Where the credentials of a request are: `Authorization: ApiKey <key>` with `X-Project-ID`, or
 * for the beacon form (`text/plain`, which cannot carry headers) `?api_key=&project_id=`.
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
 * The kinds of key that may call a route needing `need` (docs/protocol.md, "Authentication and key
 * kinds"): a write key only writes; reading takes a read key or an admin key (a script that erases
 * or exports also lists what it acts on); erasure and export take an admin key alone, so the read
 * key a dashboard holds can neither destroy nor copy everything.
 */
const ACCEPTED: Record<KeyKind, readonly KeyKind[]> = { write: ['write'], read: ['read', 'admin'], admin: ['admin'] };

/** The 401 message for a key of the wrong kind. */
const WRONG_KIND: Record<KeyKind, string> = {
  write: 'This endpoint needs a write key; read and admin keys cannot send data.',
  read: 'This endpoint needs a read key; write keys can only send data.',
  admin: 'This endpoint needs an admin key (key create --kind admin); read keys can only read reports and events.',
};

/**
 * Checks the key of a request against its project and the kind of key the route needs.
 * Every failure is the same 401 `AUTH_ERROR`, so a caller learns nothing about which part was wrong
 * beyond what the message says of the key kind.
 */
export async function authenticate(
  ctx: Context,
  store: EventStore,
  need: KeyKind,
  options: { allowQuery: boolean },
): Promise<Caller> {
  const credentials = readCredentials(ctx, options.allowQuery);
  if (!credentials) {
    throw new HttpError(
      'AUTH_ERROR',
      options.allowQuery
        ? 'Missing credentials: send "Authorization: ApiKey <key>" and "X-Project-ID", or ?api_key=&project_id= on a text/plain beacon.'
        : 'Missing credentials: send "Authorization: ApiKey <key>" and "X-Project-ID".',
    );
  }
  const hash = need === 'write' ? writeKeyHashes.hashOf(credentials.key) : hashKey(credentials.key);
  const found = await store.findCredential(hash);
  if (!found || !hashesEqual(found.key.hash, hash) || found.key.projectId !== credentials.projectId) {
    throw new HttpError('AUTH_ERROR', 'Invalid API key or project id.');
  }
  if (!ACCEPTED[need].includes(found.key.kind)) throw new HttpError('AUTH_ERROR', WRONG_KIND[need]);
  if (need === 'write') writeKeyHashes.remember(credentials.key, hash);
  return { project: found.project, kind: found.key.kind };
}
