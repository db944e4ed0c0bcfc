import pg from 'pg';
import type { Credential } from '../event-store.js';
import { CREDENTIALS_CHANNEL } from './postgres-schema.js';

/*
 * The credential cache of the PostgreSQL store: every request is authenticated, so looking its key
 * up in the database each time costs a round trip per request (two before findCredential joined
 * key and project). The cache must never answer with a key that any process revoked before the
 * request arrived ("revoked keys stop working at once"), so it is built on three rules:
 *
 * 1. Invalidation. Triggers on `projects` and `api_keys` (postgres-schema.ts) NOTIFY
 *    CREDENTIALS_CHANNEL inside every transaction that changes them, whichever process or tool
 *    made the change. A dedicated connection LISTENs; any notification empties the cache. So does
 *    losing that connection, and nothing is cached until LISTEN is back: changes made meanwhile
 *    would go unheard.
 *
 * 2. A fence before trusting a hit. A notification is delivered asynchronously: when `revokeKey`
 *    resolves in another process (or in another store of this one), the notification may still be
 *    in a socket buffer, so an unguarded cache hit right after the revoke could let the revoked key
 *    through. Before answering from the cache we therefore wait for one round trip on the LISTEN
 *    connection itself. PostgreSQL signals listening backends while the notifying transaction
 *    commits, before the committer gets its answer, and a backend sends its pending notifications
 *    before it answers a query (ReadyForQuery), on the same socket and so in order. Hence every
 *    change committed before the fence was sent has emptied the cache by the time the fence's
 *    answer arrives. The fence is shared: every lookup that arrives while no fence is being sent
 *    waits for the next one, so a burst of requests costs one tiny query (one key on an idle
 *    connection) instead of a join per request on the busy pool.
 *
 * 3. No stale fills. A miss is answered by a query on the pool; its result is cached only when no
 *    notification arrived (and LISTEN did not drop) between starting the query and getting its
 *    answer. A change that commits after the query's snapshot always notifies after that, so it
 *    either stops the fill or empties the cache after it.
 *
 * The fence also asks for the backend's pid: if it differs from the one that ran LISTEN, the
 * connection goes through a transaction-pooling proxy (PgBouncer's transaction mode), where
 * notifications do not reliably reach this connection, and the cache switches itself off for good.
 */

/** Most entries kept; past it the cache starts afresh (bounds memory under a flood of unknown keys). */
const MAX_ENTRIES = 10_000;
/** Waits before reconnecting the LISTEN connection: doubles from the first to the last. */
const RECONNECT_FIRST_MS = 50;
const RECONNECT_MAX_MS = 5_000;

/** `application_name` of the LISTEN connection. */
export const LISTENER_APPLICATION_NAME = 'service-analytics credential listener';

const FENCE = { name: 'service_analytics_fence', text: 'SELECT pg_backend_pid() AS pid' };

/** Options of {@link createCredentialCache}. */
export interface CredentialCacheOptions {
  /** Connection URL for the LISTEN connection. */
  url: string;
  /** The uncached lookup (one query on the pool). */
  lookup(hash: string): Promise<Credential | null>;
  /** Told about errors of the LISTEN connection; it reconnects by itself. */
  onError?(error: Error): void;
}

/** See the comment at the top of this file. */
export interface CredentialCache {
  /** The live key with this hash and its project, or null; from the cache when that is safe. */
  find(hash: string): Promise<Credential | null>;
  /** Closes the LISTEN connection. */
  close(): Promise<void>;
}

interface Fence {
  promise: Promise<boolean>;
  resolve(ok: boolean): void;
}

function newFence(): Fence {
  let resolve!: (ok: boolean) => void;
  const promise = new Promise<boolean>((r) => (resolve = r));
  return { promise, resolve };
}

function freeze(found: Credential): Credential {
  Object.freeze(found.project.corsOrigins);
  Object.freeze(found.project);
  Object.freeze(found.key);
  return Object.freeze(found);
}

export function createCredentialCache(options: CredentialCacheOptions): CredentialCache {
  const cache = new Map<string, Credential | null>();
  /** Bumped on every notification and every change of the connection: fills started before it are dropped. */
  let generation = 0;
  let client: pg.Client | null = null;
  /** LISTEN is in force on `client`, with this backend pid; caching is allowed only then. */
  let listeningPid: number | null = null;
  let starting = false;
  let closed = false;
  /** Set for good when the fence shows a transaction-pooling proxy. */
  let disabled = false;
  let reconnectDelay = RECONNECT_FIRST_MS;
  let reconnectTimer: NodeJS.Timeout | null = null;
  /** The fence being sent, and the one that lookups arriving meanwhile wait for. */
  let sending: Fence | null = null;
  let next: Fence | null = null;

  const forget = (): void => {
    generation++;
    cache.clear();
  };

  function lost(connection: pg.Client, error?: Error): void {
    if (connection !== client) return;
    client = null;
    listeningPid = null;
    forget();
    if (error) options.onError?.(error);
    connection.end().catch(() => {});
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (closed || disabled || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      void start();
    }, reconnectDelay);
    // A waiting reconnect must not keep a process (the CLI, a test) alive.
    reconnectTimer.unref();
    reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS);
  }

  async function start(): Promise<void> {
    if (closed || disabled || client || starting) return;
    starting = true;
    // Named, so that an operator can tell it in pg_stat_activity (and tests can wait for it).
    const connection = new pg.Client({ connectionString: options.url, application_name: LISTENER_APPLICATION_NAME });
    connection.on('error', (error) => lost(connection, error));
    connection.on('end', () => lost(connection));
    connection.on('notification', (message) => {
      if (message.channel === CREDENTIALS_CHANNEL) forget();
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${CREDENTIALS_CHANNEL}`);
      const { rows } = await connection.query<{ pid: number }>(FENCE);
      if (closed) {
        await connection.end();
        return;
      }
      client = connection;
      listeningPid = rows[0]?.pid ?? null;
      reconnectDelay = RECONNECT_FIRST_MS;
      // Whatever was filled while nobody listened is suspect.
      forget();
    } catch (error) {
      connection.end().catch(() => {});
      if (error instanceof Error) options.onError?.(error);
      scheduleReconnect();
    } finally {
      starting = false;
    }
  }

  /** One round trip on the LISTEN connection, shared by every lookup waiting for it; false when it failed. */
  function fence(): Promise<boolean> {
    next ??= newFence();
    const waiting = next.promise;
    if (!sending) send();
    return waiting;
  }

  function send(): void {
    const fenceNow = next;
    next = null;
    const connection = client;
    if (!fenceNow) return;
    if (!connection || listeningPid === null) {
      fenceNow.resolve(false);
      return;
    }
    sending = fenceNow;
    connection.query<{ pid: number }>(FENCE).then(
      ({ rows }) => {
        const pid = rows[0]?.pid;
        if (pid !== listeningPid && connection === client) {
          disabled = true;
          options.onError?.(
            new Error('PostgreSQL answered LISTEN and a later query from different backends (a transaction-pooling proxy?): the credential cache is off.'),
          );
          lost(connection);
        }
        fenceNow.resolve(!disabled && connection === client);
      },
      () => fenceNow.resolve(false),
    ).finally(() => {
      sending = null;
      if (next) send();
    });
  }

  async function fill(hash: string): Promise<Credential | null> {
    const before = generation;
    const found = await options.lookup(hash);
    if (generation === before && listeningPid !== null) {
      if (cache.size >= MAX_ENTRIES) cache.clear();
      // One object answers many requests: frozen, so that no caller can change what the next one sees.
      cache.set(hash, found && freeze(found));
    }
    return found;
  }

  return {
    async find(hash) {
      if (disabled || closed) return options.lookup(hash);
      // Started on first use, so that processes that never authenticate (the CLI) never open it.
      if (!client) {
        void start();
        return options.lookup(hash);
      }
      if (!cache.has(hash)) return fill(hash);
      if (!(await fence())) return options.lookup(hash);
      // The fence may have delivered a notification that emptied the cache.
      const again = cache.get(hash);
      return again === undefined ? fill(hash) : again;
    },

    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const connection = client;
      client = null;
      listeningPid = null;
      forget();
      await connection?.end().catch(() => {});
    },
  };
}
