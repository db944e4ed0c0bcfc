import type Database from 'better-sqlite3';
import type { PropertyValue, RecordedEvent } from '../../../protocol/index.js';
import { MAX_TIME, clampPageLimit, decodeEventCursor, encodeEventCursor, timeBound } from '../shared/cursor.js';
import type { ApiKeyRecord, BotPolicy, Credential, DeletedUser, EventPage, EventRow, EventStore, KeyKind, Project, Recording, SessionSummary, WriteBatch, WriteResult } from '../event-store.js';
import { DEFAULT_DURABILITY } from '../durability.js';
import type { SqliteStoreOptions } from './sqlite-store-options.js';
import { assembleRecording } from '../shared/recording-assembly.js';
import { createReportStore } from '../reports/report-queries.js';
import { type RunQuery, SQLITE_DIALECT } from '../reports/dialect.js';
import { prepareSqliteUserErasure, sqliteErasureSql } from './sqlite-erasure.js';
import { createSqliteRollupRefresh, type RefreshNext } from '../reports/rollup-refresh.js';
import type { KeepFiltered } from '../reports/filtered-tops.js';
import type { KeepSessionDays } from '../reports/session-days.js';
import { prepareSqliteFilteredKeep, prepareSqliteSessionDaysKeep } from '../reports/report-keep.js';
import { type KeepEstimates, prepareSqliteEstimatesKeep } from '../aggregates/kept-estimates.js';
import { registerSketchOf } from './sketch-of-function.js';
import { createSketchKit } from '../aggregates/visitor-sketch.js';
import { startSqliteRollupThread } from './rollup-sqlite-thread.js';
import { type RollupRefresher, startRollupRefresher } from '../reports/rollup-refresher.js';
import { ensureSqliteRollups } from '../reports/rollup-schema.js';
import { SQLITE_AGGREGATE_PARTS, ensureSqliteAggregates, openSqliteAggregates, cutSqliteAggregatesAt } from './sqlite-aggregates.js';
import { filterColumns } from '../report-store.js';
import { cleanJson, cleanText } from '../shared/sanitize.js';
import { DELETE_SLICE, eventPageStatement, openDatabase, type OpenDatabase } from './sqlite-database.js';
import { type CommitAggregates, encodeBatch, prepareEventWriter } from './sqlite-event-writer.js';
import { type ReadValues, type SqliteReader, startSqliteReader } from './sqlite-reader.js';
import { startSqliteWriter } from './sqlite-writer.js';
import { StoreError } from '../store-error.js';
import { createSqliteAccounts } from './sqlite-accounts.js';

interface EventDbRow {
  event_id: string;
  event_type: string;
  user_id: string | null;
  session_id: string | null;
  timestamp: number;
  client_timestamp: number | null;
  received_at: number;
  properties: string;
  user_agent: string | null;
  ip_address: string | null;
  is_bot: number;
  visitor_id: string | null;
}

interface ProjectDbRow {
  id: string;
  name: string;
  created_at: number;
  full_ip: number;
  cors_origins: string;
  bots: BotPolicy;
}

interface KeyDbRow {
  id: string;
  project_id: string;
  kind: KeyKind;
  hash: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

interface CredentialDbRow extends KeyDbRow {
  project_name: string;
  project_created_at: number;
  full_ip: number;
  cors_origins: string;
  bots: BotPolicy;
}

interface SessionDbRow {
  session_id: string;
  chunk_count: number;
  event_count: number;
  duration: number;
  first_received_at: number;
  last_received_at: number;
  finished: number;
  start_url: string | null;
  user_id: string | null;
}

function toEventRow(row: EventDbRow): EventRow {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    userId: row.user_id,
    sessionId: row.session_id,
    timestamp: row.timestamp,
    clientTimestamp: row.client_timestamp,
    receivedAt: row.received_at,
    properties: JSON.parse(row.properties) as Record<string, PropertyValue>,
    userAgent: row.user_agent,
    ipAddress: row.ip_address,
    isBot: row.is_bot === 1,
    visitorId: row.visitor_id,
  };
}

function toProject(row: ProjectDbRow): Project {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    fullIp: row.full_ip === 1,
    corsOrigins: JSON.parse(row.cors_origins) as string[],
    bots: row.bots,
  };
}

function toKey(row: KeyDbRow): ApiKeyRecord {
  return {
    id: row.id,
    projectId: row.project_id,
    kind: row.kind,
    hash: row.hash,
    prefix: row.prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

function constraintError(error: unknown, what: string): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') {
    return new StoreError('DUPLICATE', `${what} already exists.`, { cause: error });
  }
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
    return new StoreError('UNKNOWN_PROJECT', `${what}: the project does not exist.`, { cause: error });
  }
  return error;
}

function toCredential(row: CredentialDbRow): Credential {
  return {
    key: toKey(row),
    project: toProject({
      id: row.project_id,
      name: row.project_name,
      created_at: row.project_created_at,
      full_ip: row.full_ip,
      cors_origins: row.cors_origins,
      bots: row.bots,
    }),
  };
}

/** Credentials remembered at most; past it the cache starts over (a flood of wrong keys cannot grow it). */
const CREDENTIAL_CACHE_SIZE = 1000;

/** Report statements kept prepared at most. */
const REPORT_STATEMENTS = 200;

/** A database only this connection can see: no writer thread can share it. */
function isPrivateDatabase(path: string): boolean {
  return path === '' || path === ':memory:' || path.startsWith('file::memory:') || path.includes('mode=memory');
}

/**
 * Threads that read reports, the read API and the export (`readThreads`). Four, though the machine
 * may have two cores: a dashboard's first view after the file left the OS's page cache waits on
 * the disk, one random page at a time per thread, so more threads keep more reads in flight
 * (about a sixth faster than two at 10M and 30M events); warm, where the cores are the limit, about
 * the same (bench/RESULTS.md, "Report panels", the overview after the page cache was dropped).
 */
export const REPORT_THREADS = 4;
/**
 * Of those, how many may run scans (reads of a report's whole range of events) at once: one, so
 * that scans, which keep a core busy for seconds, leave the cores to ingest and the other reads.
 */
const REPORT_SCAN_THREADS = 1;

/** The nice value of the background's reader thread: below the reports' reader (`sqlite-reader.ts`). */
const BACKGROUND_NICENESS = 19;
/**
 * The background's read budget, ms: nobody waits for its reads, which at nice 19 on busy cores
 * take longer than a report's, and a read refused is work thrown away.
 */
const BACKGROUND_BUDGET_MS = 120_000;

/** The default of {@link SqliteStoreOptions.readBudgetMs}. */
export const DEFAULT_READ_BUDGET_MS = 15_000;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The SQLite store (better-sqlite3): the default, embedded, zero set-up. Group commits run on a
 * writer thread (`sqlite-writer.ts`; in the caller's thread for an in-memory database); everything
 * else runs synchronously on the caller's thread, on a connection of its own.
 *
 * Credentials are cached per key hash and dropped whenever a key or project changed, by any
 * connection of any process (the `auth_changes` count that triggers keep, `sqlite-schema.ts`), so a
 * revoked key stops working at once while event writes never empty the cache.
 */
export function createSqliteStore(options: SqliteStoreOptions): EventStore {
  if (options.readThreads !== undefined && !(Number.isInteger(options.readThreads) && options.readThreads >= 1)) {
    throw new RangeError(`readThreads must be a positive integer, not ${options.readThreads}`);
  }
  let open: OpenDatabase | null = null;
  let closed = false;
  let write: ((batch: WriteBatch) => Promise<WriteResult>) | null = null;
  let eraseUser: ((projectId: string, userId: string) => Promise<DeletedUser>) | null = null;
  let closeWriter: () => Promise<void> = async () => {};
  const credentials = new Map<string, Credential | null>();
  let credentialsVersion = -1;
  // Whether `auth_changes` was read in this turn of the event loop. Reading it after the writer
  // thread's latest commit makes this connection drop its page cache and read the pages again,
  // which cost more than anything else in authenticating a request; the requests of one turn share
  // one read (docs/decisions.md, "Key kinds and hashing"). A change made through this store clears
  // the flag, so its own next lookup reads again.
  let versionReadThisTurn = false;
  const credentialsChanged = (): void => {
    versionReadThisTurn = false;
  };
  let initializing: Promise<void> | null = null;
  // The aggregates on the request thread's connection: what erasure and retention take events out of.
  let ownAggregates: CommitAggregates | null = null;
  // Daily rollups (rollup-schema.ts): created at open, before the writer starts; refreshed in the background until close.
  let refreshRollup: RefreshNext | null = null;
  let keepFiltered: KeepFiltered | null = null;
  let keepSessionDays: KeepSessionDays | null = null;
  let keepEstimates: KeepEstimates | null = null;
  let rollupRefresher: RollupRefresher | null = null;
  let closeRollupThread: () => Promise<void> = async () => {};
  // Reads off the request thread (sqlite-reader.ts); null for an in-memory database, whose one
  // connection no other thread can open.
  let reader: SqliteReader | null = null;
  // The background's reads (keeping filters ahead) on a thread of their own, below the reader's
  // priority: a report never waits behind one (a frequent value's day at ten million events takes
  // up to seconds, and reads on one thread run one at a time).
  let backgroundReader: SqliteReader | null = null;
  const forgetKeptAnswers = (): void => {
    reader?.forget();
    backgroundReader?.forget();
  };
  const closeReaders = async () => {
    await reader?.close();
    await backgroundReader?.close();
    reader = null;
    backgroundReader = null;
  };

  async function openAll(): Promise<void> {
    const db = openDatabase(options);
    try {
      // For the reports this connection runs itself (an in-memory database's); the reader thread registers its own.
      registerSketchOf(db.db, createSketchKit());
      ensureSqliteRollups(db.db);
      // Built here, on this connection, before the writer starts; from then on the group commits keep them.
      const aggregates = ensureSqliteAggregates(db.db, () => openSqliteAggregates(db.db, SQLITE_AGGREGATE_PARTS), options.onAggregatesBuild);
      ownAggregates = aggregates;
      if (isPrivateDatabase(options.path)) {
        refreshRollup = createSqliteRollupRefresh(db.db, SQLITE_DIALECT);
        const keep = prepareSqliteFilteredKeep(db.db, createSketchKit());
        keepFiltered = async (k) => keep(k);
        const keepDays = prepareSqliteSessionDaysKeep(db.db);
        keepSessionDays = async (k) => keepDays(k);
        const keepKept = prepareSqliteEstimatesKeep(db.db, createSketchKit());
        keepEstimates = async (k) => keepKept(k);
      } else {
        const thread = await startSqliteRollupThread({ path: options.path, busyTimeoutMs: db.busyTimeoutMs, dialect: SQLITE_DIALECT });
        refreshRollup = thread.refreshNext;
        keepFiltered = thread.keepFiltered;
        keepSessionDays = thread.keepSessionDays;
        keepEstimates = thread.keepEstimates;
        closeRollupThread = () => thread.close();
      }
      if (isPrivateDatabase(options.path)) {
        const commit = prepareEventWriter(db.db, { cleanText, cleanJson }, aggregates);
        write = async (batch) => commit(encodeBatch(batch));
        const erase = prepareSqliteUserErasure(db.db, aggregates, sqliteErasureSql());
        eraseUser = async (projectId, userId) => erase(projectId, userId);
      } else {
        const writer = await startSqliteWriter({
          path: options.path,
          busyTimeoutMs: db.busyTimeoutMs,
          durability: options.durability ?? DEFAULT_DURABILITY,
        });
        write = (batch) => writer.write(batch);
        eraseUser = (projectId, userId) => writer.eraseUser(projectId, userId);
        closeWriter = () => writer.close();
        const readerOptions = { path: options.path, busyTimeoutMs: db.busyTimeoutMs, budgetMs: options.readBudgetMs ?? DEFAULT_READ_BUDGET_MS };
        reader = await startSqliteReader({
          ...readerOptions,
          threads: options.readThreads ?? REPORT_THREADS,
          scanThreads: REPORT_SCAN_THREADS,
          ...(options.keptAnswerMs === undefined ? {} : { keptAnswerMs: options.keptAnswerMs }),
        });
        backgroundReader = await startSqliteReader({ ...readerOptions, budgetMs: BACKGROUND_BUDGET_MS, niceness: BACKGROUND_NICENESS });
      }
    } catch (error) {
      await closeReaders();
      await closeWriter();
      await closeRollupThread();
      db.db.close();
      throw error;
    }
    if (closed) {
      // close() came while the writer started: it found nothing open, so this must not stay open.
      await closeReaders();
      await closeRollupThread();
      await closeWriter();
      db.db.close();
      throw new StoreError('NOT_OPEN', 'The SQLite store was closed while it opened.');
    }
    open = db;
    if (options.backgroundRollups === false) return;
    rollupRefresher = startRollupRefresher({
      refreshNext: refreshRollup,
      ...(options.keepFiltersAhead === false
        ? {}
        : {
            keepAhead: () =>
              reports.keepFilteredAhead(true).catch((error: unknown) => {
                // A turn cut short by close() is taken again after the next open.
                if (open !== null) process.emitWarning(`Keeping filtered top lists ahead failed: ${String(error)}`);
                return false;
              }),
          }),
      onError: (error) => process.emitWarning(`Daily rollup refresh failed: ${String(error)}`),
    });
  }

  const use = (): OpenDatabase => {
    if (open) return open;
    throw new StoreError('NOT_OPEN', closed ? 'The SQLite store is closed.' : 'Call init() before using the SQLite store.');
  };

  /** Runs a read on the reader thread, or here for an in-memory database. */
  const readAll = async <Row>(statement: Database.Statement, values: ReadValues): Promise<Row[]> => {
    if (reader !== null) return (await reader.all(statement.source, values)) as Row[];
    return (Array.isArray(values) ? statement.all(...(values as unknown[])) : statement.all(values)) as Row[];
  };

  /** Runs report statements on the thread `thread()` gives, or here for an in-memory database (statements cached by text: a handful of shapes per report and filter combination). */
  const runOn =
    (thread: () => SqliteReader | null): RunQuery =>
    async (sql, values, hints) => {
      const onThread = thread();
      if (onThread !== null) return onThread.all(sql, values, { scan: hints?.scan === true });
      const current = use();
      let statement = current.reportCache.get(sql);
      if (!statement) {
        statement = current.db.prepare<unknown[]>(sql);
        if (current.reportCache.size >= REPORT_STATEMENTS) current.reportCache.clear();
        current.reportCache.set(sql, statement);
      }
      return statement.all(...values) as Array<Record<string, unknown>>;
    };

  const reports = createReportStore(
    SQLITE_DIALECT,
    runOn(() => reader),
    {
      runBackground: runOn(() => backgroundReader),
      refreshNext: (beforeDay, skip) => (use(), (refreshRollup as RefreshNext)(beforeDay, skip)),
      aggregates: true,
      sessionSummaries: true,
      keepFiltered: async (keep) => (use(), (keepFiltered as KeepFiltered)(keep)),
      keepSessionDays: async (keep) => (use(), (keepSessionDays as KeepSessionDays)(keep)),
      keepEstimates: { keep: async (keep) => (use(), (keepEstimates as KeepEstimates)(keep)), parts: false },
      sketchOf: () => (key) => `sa_sketch_of(${key})`,
      // A keep cut short by close() is computed again by the next report after an open.
      onKeepError: (error) => {
        if (open !== null) process.emitWarning(`Keeping a report's rows failed: ${String(error)}`);
      },
    },
  );

  // Accounts, sign-in sessions and shared links (sqlite-accounts.ts), on this thread's connection.
  const accounts = createSqliteAccounts(() => use().db);

  return {
    kind: 'sqlite',
    reports,
    ...accounts,

    init() {
      if (closed) return Promise.reject(new StoreError('NOT_OPEN', 'The SQLite store is closed.'));
      // One opening, however many callers: a second writer thread must never start.
      initializing ??= openAll().catch((error: unknown) => {
        initializing = null;
        throw error;
      });
      return initializing;
    },

    async write(batch) {
      use();
      if (batch.events.length === 0 && batch.chunks.length === 0) return { eventInserted: [], chunkInserted: [] };
      return (write as (batch: WriteBatch) => Promise<WriteResult>)(batch);
    },

    async createProject(project) {
      credentialsChanged();
      try {
        use().statements.insertProject.run(
          project.id,
          project.name,
          project.createdAt,
          project.fullIp ? 1 : 0,
          JSON.stringify(project.corsOrigins),
          project.bots,
        );
      } catch (error) {
        throw constraintError(error, `Project ${project.id}`);
      }
    },

    async getProject(projectId) {
      const row = use().statements.getProject.get(projectId) as ProjectDbRow | undefined;
      return row ? toProject(row) : null;
    },

    async listProjects() {
      return (use().statements.listProjects.all() as ProjectDbRow[]).map(toProject);
    },

    async createKey(key) {
      credentialsChanged();
      try {
        use().statements.insertKey.run(key.id, key.projectId, key.kind, key.hash, key.prefix, key.createdAt, key.revokedAt);
      } catch (error) {
        throw constraintError(error, `Key ${key.id}`);
      }
    },

    async findKeyByHash(hash) {
      const row = use().statements.findKey.get(hash) as KeyDbRow | undefined;
      return row ? toKey(row) : null;
    },

    async findCredential(hash) {
      const current = use();
      if (!versionReadThisTurn) {
        versionReadThisTurn = true;
        setImmediate(credentialsChanged);
        const version = current.statements.authChanges.get() as number;
        if (version !== credentialsVersion) {
          credentials.clear();
          credentialsVersion = version;
        }
      }
      const cached = credentials.get(hash);
      if (cached !== undefined) return cached;
      const row = current.statements.findCredential.get(hash) as CredentialDbRow | undefined;
      const found = row ? toCredential(row) : null;
      if (credentials.size >= CREDENTIAL_CACHE_SIZE) credentials.clear();
      credentials.set(hash, found);
      return found;
    },

    async listKeys(projectId) {
      return (use().statements.listKeys.all(projectId) as KeyDbRow[]).map(toKey);
    },

    async revokeKey(keyId, at) {
      credentialsChanged();
      return use().statements.revokeKey.run(at, keyId).changes > 0;
    },

    async updateProject(projectId, changes) {
      credentialsChanged();
      const current = use();
      if (changes.bots === undefined) return current.statements.projectExists.get(projectId) !== undefined;
      return current.statements.updateProjectBots.run(changes.bots, projectId).changes > 0;
    },

    async queryEvents(query): Promise<EventPage> {
      const current = use();
      const limit = clampPageLimit(query.limit);
      const params: unknown[] = [query.projectId];
      if (query.eventType) params.push(query.eventType);
      if (query.userId) params.push(query.userId);
      if (query.sessionId) params.push(query.sessionId);
      // In the order of eventPageStatement's conditions.
      for (const [, value] of filterColumns(query.filters)) params.push(value);
      if (query.from !== undefined) params.push(timeBound(query.from));
      if (query.to !== undefined) params.push(timeBound(query.to));
      if (query.cursor) {
        const cursor = decodeEventCursor(query.cursor);
        params.push(cursor.timestamp, cursor.eventId);
      }
      // One row more than asked tells whether another page exists without a COUNT.
      params.push(limit + 1);
      const rows = await readAll<EventDbRow>(eventPageStatement(current, query), params);
      const more = rows.length > limit;
      if (more) rows.length = limit;
      const last = rows[rows.length - 1];
      return {
        events: rows.map(toEventRow),
        nextCursor: more && last ? encodeEventCursor({ timestamp: last.timestamp, eventId: last.event_id }) : null,
      };
    },

    async listSessions(projectId, limit): Promise<SessionSummary[]> {
      const rows = await readAll<SessionDbRow>(use().statements.listSessions, { projectId, limit: clampPageLimit(limit) });
      return rows.map((row) => ({
        sessionId: row.session_id,
        userId: row.user_id,
        startUrl: row.start_url,
        duration: row.duration,
        chunkCount: row.chunk_count,
        eventCount: row.event_count,
        firstReceivedAt: row.first_received_at,
        lastReceivedAt: row.last_received_at,
        finished: row.finished === 1,
      }));
    },

    async getRecording(projectId, sessionId): Promise<Recording | null> {
      const rows = await readAll<{ event_offset: number; events: string; is_final: number }>(use().statements.recordingChunks, [projectId, sessionId]);
      if (rows.length === 0) return null;
      return assembleRecording(
        sessionId,
        rows.map((row) => ({
          eventOffset: row.event_offset,
          events: JSON.parse(row.events) as RecordedEvent[],
          isFinal: row.is_final === 1,
        })),
      );
    },

    async exportEvents(query) {
      const { statements } = use();
      const limit = clampPageLimit(query.limit);
      const from = query.from === undefined ? -MAX_TIME : timeBound(query.from);
      const to = query.to === undefined ? MAX_TIME : timeBound(query.to);
      const rows =
        query.after === undefined
          ? await readAll<EventDbRow>(statements.exportFirst, { projectId: query.projectId, from, to, limit })
          : await readAll<EventDbRow>(statements.exportNext, { projectId: query.projectId, afterTime: query.after.timestamp, afterId: query.after.eventId, to, limit });
      return rows.map(toEventRow);
    },

    async deleteUser(projectId, userId) {
      use();
      // On the writer thread, in turn with the group commits (sqlite-erasure.ts).
      const erased = await (eraseUser as NonNullable<typeof eraseUser>)(projectId, userId);
      // No answer kept for a retry may show the erased rows (sqlite-reader.ts).
      forgetKeptAnswers();
      return erased;
    },

    async dailySalt(day, candidate) {
      const { statements } = use();
      statements.insertSalt.run(day, candidate);
      return statements.getSalt.get(day) as string;
    },

    async deleteSaltsBefore(day) {
      return use().statements.deleteSaltsBefore.run(day).changes;
    },

    async deleteOlderThan(cutoff) {
      let events = 0;
      let chunks = 0;
      // Between slices the event loop runs, so group commits are not held up by a large purge.
      let project = use().statements.firstEventProject.get() as string | undefined;
      while (project !== undefined) {
        for (;;) {
          const deleted = use().statements.deleteEvents.run(project, cutoff).changes;
          events += deleted;
          if (deleted < DELETE_SLICE) break;
          await yieldToEventLoop();
        }
        // The aggregates before the cut-off go; the hour it cuts is built again (sqlite-aggregates.ts).
        const current = use();
        current.db.transaction((p: string) => cutSqliteAggregatesAt(current.db, ownAggregates as CommitAggregates, p, cutoff)).immediate(project);
        project = current.statements.nextEventProject.get(project) as string | undefined;
      }
      for (;;) {
        const deleted = use().statements.deleteChunks.run(cutoff).changes;
        chunks += deleted;
        if (deleted < DELETE_SLICE) break;
        await yieldToEventLoop();
      }
      forgetKeptAnswers();
      return { events, chunks };
    },

    async ping() {
      use().statements.ping.get();
    },

    async close() {
      if (closed) return;
      closed = true;
      const current = open;
      open = null;
      // The readers first: a turn of the background waiting for a read ends at once (refused),
      // so the refresher stops without waiting for that read.
      await closeReaders();
      await rollupRefresher?.stop();
      await closeRollupThread();
      // Groups already handed to the writer commit before its connection closes.
      await closeWriter();
      current?.db.close();
    },
  };
}
