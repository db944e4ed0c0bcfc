import pg from 'pg';
import type { RecordedEvent } from '../../../protocol/index.js';
import { MAX_TIME, clampPageLimit, decodeEventCursor, encodeEventCursor, timeBound } from '../shared/cursor.js';
import { createPostgresEstimatesKeep } from '../aggregates/kept-estimates.js';
import type { EventPage, EventStore, WriteResult } from '../event-store.js';
import { createCredentialCache } from './postgres-credentials.js';
import { RECORDING_PARTITIONS, createPartitionManager, dropExpiredPartitions, idDay } from './postgres-partition.js';
import { MIGRATIONS, POSTGRES_SCHEMA, POSTGRES_SCHEMA_VERSION, SCHEMA_LOCK_SQL } from './postgres-schema.js';
import { CopyMetDuplicate, createEventWriter, insertChunks, insertEvents } from './postgres-write.js';
import type { AggregatesBuildListener } from '../aggregates/aggregate-schema.js';
import { type CompactionMark, applyPostgresAggregates, batchOfStored, compactPostgresAggregates, cutPostgresAggregatesAt, saveCompactionMark, savedCompactionMark, ensurePostgresAggregates, ensurePostgresSketchStorage } from './postgres-aggregates.js';
import { backfillPostgresReportColumns } from '../reports/report-backfill.js';
import { createReportStore } from '../reports/report-queries.js';
import { POSTGRES_DIALECT } from '../reports/dialect.js';
import { createPostgresReadRun } from './postgres-read-run.js';
import { inTransaction } from './postgres-transaction.js';
import { erasePostgresUserData } from './postgres-erasure.js';
import { besideOn } from './postgres-beside.js';
import { BUILD_APPLICATION_NAME, createPostgresRollupRefresh, isDroppedBuild } from '../reports/rollup-refresh.js';
import { createPostgresDayKeeps, createPostgresFilteredKeep, createPostgresSessionDaysKeep } from '../reports/report-keep.js';
import { type RollupRefresher, startRollupRefresher } from '../reports/rollup-refresher.js';
import { ensurePostgresRollups, markDaysSql } from '../reports/rollup-schema.js';
import { filterColumns } from '../report-store.js';
import {
  EVENT_COLUMNS,
  EVENT_PROJECTS_SQL,
  LIST_SESSIONS_SQL,
  constraintError,
  num,
  toCredential,
  toEventRow,
  toKey,
  toProject,
  toSessionSummary,
  type Row,
} from './postgres-rows.js';
import { assembleRecording } from '../shared/recording-assembly.js';
import { StoreError } from '../store-error.js';
import { createPostgresAccounts } from './postgres-accounts.js';
import { findHllExtension, hllKeyRegister, hllSketchOfSql, hllUnionSql, type KeyRegisterSql } from './postgres-hll.js';
import type { SketchUnionSql } from '../aggregates/aggregate-queries.js';
import type { SketchOfSql } from '../reports/filtered-tops.js';

/** Options of {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** Connection URL, `postgres://user:password@host:port/database`. */
  url: string;
  /**
   * Connections this process keeps; each group commit holds one for its transaction. The builds
   * of the daily rollups and the keeps of filtered rows take two more, a pool of their own.
   * @default 10
   */
  poolSize?: number;
  /**
   * How long a pooled connection stays open unused, ms; 0 keeps it until `close()`. A new
   * connection's first statements fill the server's catalog caches of that connection for the
   * tables and functions they are planned with: a filter's eight overview lists asked 11 s after
   * the last read took a median 334 ms at a million events on connections closed after 10 s of
   * idle, 87 ms on kept ones (`bench/filtered-overview-time.ts --pause=11000`). The default
   * outlasts the pauses between a dashboard's clicks; `pg`'s own, 10 s, did not. Idle
   * connections send TCP keepalives, so a load balancer or NAT between this process and the
   * database does not drop them silently; one the server ends (`idle_session_timeout`, a
   * restart) leaves the pool by itself.
   * @default 600000
   */
  idleConnectionMs?: number;
  /**
   * Told about errors of idle pooled connections (e.g. the server restarted). The pool drops such
   * a connection by itself; without a listener Node would crash on the `error` event.
   * @default ignore
   */
  onPoolError?: (error: Error) => void;
  /**
   * Answer authentication from a cache kept exact by LISTEN/NOTIFY (postgres-credentials.ts); it
   * holds one more connection, opened on the first authentication. Turn it off where LISTEN does
   * not hold, e.g. behind PgBouncer in transaction mode (the cache also switches itself off when it
   * detects that).
   * @default true
   */
  cacheCredentials?: boolean;
  /**
   * Rows per transaction when an upgrade fills the report columns of existing events
   * (`report-backfill.ts`). @default 5000
   */
  backfillBatch?: number;
  /**
   * The time budget of one read statement, ms (a report's, `queryEvents`, `listSessions`,
   * `getRecording`, `exportEvents`): past it the database cancels the statement and the read
   * rejects with `BUSY` (`postgres-read-run.ts`). @default 15000
   */
  readBudgetMs?: number;
  /** How often the report aggregates' parts are merged (`postgres-aggregates.ts`), ms. @default 5000 */
  compactEveryMs?: number;
  /** Told when the open builds the report aggregates from the events, and when it is done. */
  onAggregatesBuild?: AggregatesBuildListener;
  /**
   * Let the database merge the report aggregates' visitor sketches with PostgreSQL's `hll`
   * extension where the server has it (`postgres-hll.ts`; created in the database at open when
   * this role may). The answers are the same either way; off, Node merges them.
   * @default true
   */
  hllExtension?: boolean;
  /**
   * Keep the top lists of frequent filter values ahead in the background (docs/decisions.md,
   * "Filtered top lists"): off, nothing is read ahead, and a filter's first view of a day reads
   * its events (then keeps them). Minutes to hours of background reads after the first open of a
   * file of millions of events, on a machine that may rather spend them elsewhere. @default true
   */
  keepFiltersAhead?: boolean;
  /**
   * Build the daily rollups in the background (docs/decisions.md, "Daily rollups"): off, days stay
   * marked (and are read from their events) until `reports.refreshRollups()` builds them, and
   * nothing is kept ahead either. For a process beside another that builds them (on PostgreSQL,
   * several servers on one database need only one), or a test that decides when a day is built.
   * @default true
   */
  backgroundRollups?: boolean;
}

/** The PostgreSQL store, and what it found at open. */
export interface PostgresEventStore extends EventStore {
  /** Who merges the report sketches: the `hll` extension, or Node (before `init()`, and without the extension). */
  readonly sketchMerge: 'hll' | 'node';
}

const FIND_CREDENTIAL = {
  name: 'service_analytics_find_credential',
  text: `SELECT k.id, k.project_id, k.kind, k.hash, k.prefix, k.created_at, k.revoked_at,
            p.name AS project_name, p.created_at AS project_created_at, p.full_ip, p.cors_origins, p.bots
     FROM api_keys k JOIN projects p ON p.id = k.project_id
     WHERE k.hash = $1 AND k.revoked_at IS NULL`,
};

/** SQLSTATEs after which re-running the whole transaction is correct: deadlock, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);

/**
 * The PostgreSQL store (`pg` Pool): for several stateless server processes sharing one database.
 * Every write is atomic and resolves after it committed: a group commit is one transaction on one
 * pooled connection (its events, chunks and what they add to the report aggregates). Authentication answers from a credential cache that
 * LISTEN/NOTIFY keeps exact (postgres-credentials.ts).
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresEventStore {
  // Idle connections are kept, not reopened for each click (`idleConnectionMs`); the process may still exit while they wait.
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    idleTimeoutMillis: options.idleConnectionMs ?? 600_000,
    allowExitOnIdle: true,
    keepAlive: true,
    keepAliveInitialDelayMillis: 60_000,
  });
  pool.on('error', (error) => options.onPoolError?.(error));
  // Builds and keeps on connections of their own, which an erasure may cancel (`rollup-erasure.ts`).
  const buildPool = new pg.Pool({ connectionString: options.url, max: 2, application_name: BUILD_APPLICATION_NAME });
  buildPool.on('error', (error) => options.onPoolError?.(error));
  const eventWriter = createEventWriter();
  const partitions = createPartitionManager(pool);
  const recordingPartitions = createPartitionManager(pool, { table: RECORDING_PARTITIONS });
  let state: 'new' | 'open' | 'closed' = 'new';
  let initialising: Promise<void> | null = null;

  const use = (): pg.Pool => {
    if (state === 'open') return pool;
    throw new StoreError('NOT_OPEN', state === 'closed' ? 'The PostgreSQL store is closed.' : 'Call init() before using the PostgreSQL store.');
  };

  /** Runs `work` in one transaction, again when PostgreSQL asks for it (deadlock, serialization). */
  async function transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await inTransaction(pool, 'BEGIN', work);
      } catch (error) {
        if (attempt < 3 && RETRYABLE.has((error as { code?: string }).code ?? '')) continue;
        throw error;
      }
    }
  }

  const query = (text: string, values: unknown[] = []) => use().query<Row>(text, values);
  // Reads of the events and recordings, which may run long (an event list filtered on an absent
  // value walks the project's events), have the read budget; the configuration's reads by key do not need it.
  const read = createPostgresReadRun(use, options.readBudgetMs);

  /** The uncached credential lookup: key and project in one query. */
  const lookupCredential = async (hash: string) => {
    // Named: prepared once per connection, as it runs whenever the cache cannot answer.
    const { rows } = await use().query<Row>({ ...FIND_CREDENTIAL, values: [hash] });
    return rows[0] ? toCredential(rows[0]) : null;
  };
  const credentials =
    options.cacheCredentials === false
      ? null
      : createCredentialCache({ url: options.url, lookup: lookupCredential, onError: (error) => options.onPoolError?.(error) });

  /** Creates the schema under an advisory lock, so concurrent starts of several processes are safe. */
  const createSchema = async () => {
    await migrate();
    // Today's partition and the next days', before the first write needs them.
    await partitions.ensure([]);
    await recordingPartitions.ensure([]);
    // Rows of an older version get their report columns, batch by batch, before the store serves.
    await backfillPostgresReportColumns(pool, options.backfillBatch);
    // Daily rollups (rollup-schema.ts): created after the schema, refreshed in the background until close.
    await ensurePostgresRollups(pool);
    // Report aggregates (aggregates/aggregate-schema.ts): built from the events once if new, kept by the commits from then on.
    await ensurePostgresAggregates(pool, options.onAggregatesBuild);
    // Only how new sketches are stored: reported, not fatal (postgres-aggregates.ts says why).
    await ensurePostgresSketchStorage(pool).catch((error: unknown) => options.onPoolError?.(error as Error));
    const saved = await savedCompactionMark(pool);
    compactionMarks = [saved, saved];
    const hll = options.hllExtension === false ? null : await findHllExtension(pool);
    sketchUnion = hll === null ? null : hllUnionSql(hll);
    sketchOf = hll === null ? null : hllSketchOfSql(hll);
    keyRegister = hll === null ? null : await hllKeyRegister(pool, hll);
  };
  let sketchUnion: SketchUnionSql | null = null;
  let sketchOf: SketchOfSql | null = null;
  let keyRegister: KeyRegisterSql | null = null;
  const refreshRollup = createPostgresRollupRefresh(buildPool, POSTGRES_DIALECT);
  // One keep at a time, of either kind (`report-keep.ts`).
  const keepDays = createPostgresDayKeeps(buildPool);
  const keepFiltered = createPostgresFilteredKeep(keepDays);
  const keepSessionDays = createPostgresSessionDaysKeep(keepDays);
  const keepEstimates = createPostgresEstimatesKeep(buildPool);
  let rollupRefresher: RollupRefresher | null = null;
  // The aggregates' compaction (postgres-aggregates.ts), every few seconds while open. Each round
  // starts from the mark of the round before last, so that a part committed a little after a
  // round read the newest one is still seen by the next; that mark is saved for the next start.
  let compactionTimer: NodeJS.Timeout | undefined;
  let compacting: Promise<void> | null = null;
  let compactionMarks: [CompactionMark, CompactionMark] = [
    { values: 0, sessions: 0, sessionDays: 0 },
    { values: 0, sessions: 0, sessionDays: 0 },
  ];
  const compact = (): Promise<void> => {
    compacting ??= compactPostgresAggregates(pool, compactionMarks[0])
      .then(async (mark) => {
        const [older] = compactionMarks;
        compactionMarks = [compactionMarks[1], mark];
        const next = compactionMarks[0];
        if (next.values !== older.values || next.sessions !== older.sessions || next.sessionDays !== older.sessionDays) await saveCompactionMark(pool, next);
      })
      .catch((error: unknown) => options.onPoolError?.(error as Error))
      .finally(() => {
        compacting = null;
      });
    return compacting;
  };
  const migrate = () =>
    transaction(async (client) => {
      await client.query(SCHEMA_LOCK_SQL);
      // Checked apart: naming a missing table would abort the transaction.
      const table = await client.query<{ found: boolean }>("SELECT to_regclass('schema_version') IS NOT NULL AS found");
      const existing = table.rows[0]?.found
        ? await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_version')
        : { rows: [] };
      const version = existing.rows[0]?.version ?? 0;
      if (version > POSTGRES_SCHEMA_VERSION) {
        throw new Error(`The database has schema version ${version}; this server knows up to ${POSTGRES_SCHEMA_VERSION}. Upgrade the server.`);
      }
      if (version === 0) {
        await client.query(POSTGRES_SCHEMA);
        return;
      }
      for (let next = version + 1; next <= POSTGRES_SCHEMA_VERSION; next++) {
        const step = MIGRATIONS[next];
        if (step === undefined) throw new Error(`No migration to PostgreSQL schema version ${next}.`);
        await client.query(step);
      }
      if (version < POSTGRES_SCHEMA_VERSION) await client.query('UPDATE schema_version SET version = $1', [POSTGRES_SCHEMA_VERSION]);
    });

  const store: PostgresEventStore = {
    kind: 'postgres',
    // Accounts, sign-in sessions and shared links (postgres-accounts.ts).
    ...createPostgresAccounts({ query, transaction: (work) => (use(), transaction(work)) }),
    reports: createReportStore(POSTGRES_DIALECT, read, {
      refreshNext: (beforeDay, skip) => (use(), refreshRollup(beforeDay, skip)),
      aggregates: true,
      sessionSummaries: true,
      sketchUnion: () => sketchUnion,
      keepFiltered: async (keep) => (use(), keepFiltered(keep)),
      keepSessionDays: async (keep) => (use(), keepSessionDays(keep)),
      keepEstimates: { keep: async (keep) => (use(), keepEstimates(keep)), parts: true },
      sketchOf: () => sketchOf,
      // A keep cut short by close() or dropped by an erasure is computed again by a later report.
      onKeepError: (error) => {
        if (state === 'open' && !isDroppedBuild(error)) options.onPoolError?.(error as Error);
      },
    }),
    get sketchMerge() {
      return sketchUnion === null ? 'node' : 'hll';
    },

    async init() {
      if (state === 'closed') throw new StoreError('NOT_OPEN', 'The PostgreSQL store is closed.');
      // Concurrent calls share one run; a failed run may be retried by calling init() again.
      initialising ??= createSchema().then(
        () => {
          if (state !== 'new') return;
          state = 'open';
          if (options.backgroundRollups !== false) {
            rollupRefresher = startRollupRefresher({
              refreshNext: refreshRollup,
              ...(options.keepFiltersAhead === false
                ? {}
                : {
                    keepAhead: () =>
                      store.reports.keepFilteredAhead(true).catch((error: unknown) => {
                        // A turn cut short by close() or dropped by an erasure is taken again later.
                        if (state === 'open' && !isDroppedBuild(error)) options.onPoolError?.(error as Error);
                        return false;
                      }),
                  }),
              onError: (error) => options.onPoolError?.(error as Error),
            });
          }
          compactionTimer = setInterval(() => void compact(), options.compactEveryMs ?? 5_000).unref();
        },
        (error: unknown) => {
          initialising = null;
          throw error;
        },
      );
      return initialising;
    },

    async write(batch): Promise<WriteResult> {
      use();
      if (batch.events.length === 0 && batch.chunks.length === 0) return { eventInserted: [], chunkInserted: [] };
      // The day partitions the group needs, made first if new (postgres-partition.ts).
      await partitions.ensure(batch.events.map((e) => idDay(e.eventId)));
      if (batch.chunks.length > 0) await recordingPartitions.ensure(batch.chunks.map((c) => idDay(c.sessionId)));
      // One transaction: the events, the chunks and what the events add to the report aggregates
      // (postgres-aggregates.ts) commit together.
      const commit = (byInsert: boolean) =>
        transaction(async (client) => {
          const eventInserted = batch.chunks.length === 0 ? await eventWriter.write(client, batch.events, byInsert) : await insertEvents(client, batch.events);
          const chunkInserted = await insertChunks(client, batch.chunks);
          await applyPostgresAggregates(client, batchOfStored(batch.events, eventInserted));
          return { eventInserted, chunkInserted };
        });
      try {
        return await commit(false);
      } catch (error) {
        // The COPY met a duplicate and aborted the transaction; this time the events are inserted.
        if (error instanceof CopyMetDuplicate) return commit(true);
        throw error;
      }
    },

    async createProject(project) {
      try {
        await query('INSERT INTO projects (id, name, created_at, full_ip, cors_origins, bots) VALUES ($1, $2, $3, $4, $5, $6)', [
          project.id,
          project.name,
          project.createdAt,
          project.fullIp,
          project.corsOrigins,
          project.bots,
        ]);
      } catch (error) {
        throw constraintError(error, `Project ${project.id}`);
      }
    },

    async getProject(projectId) {
      const { rows } = await query('SELECT * FROM projects WHERE id = $1', [projectId]);
      return rows[0] ? toProject(rows[0]) : null;
    },

    async listProjects() {
      return (await query('SELECT * FROM projects ORDER BY created_at, id')).rows.map(toProject);
    },

    async createKey(key) {
      try {
        await query(
          'INSERT INTO api_keys (id, project_id, kind, hash, prefix, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [key.id, key.projectId, key.kind, key.hash, key.prefix, key.createdAt, key.revokedAt],
        );
      } catch (error) {
        throw constraintError(error, `Key ${key.id}`);
      }
    },

    async findKeyByHash(hash) {
      // Named: prepared once per connection, as it runs on every authenticated request.
      const { rows } = await use().query<Row>({
        name: 'service_analytics_find_key',
        text: 'SELECT * FROM api_keys WHERE hash = $1 AND revoked_at IS NULL',
        values: [hash],
      });
      return rows[0] ? toKey(rows[0]) : null;
    },

    async findCredential(hash) {
      use();
      return credentials ? credentials.find(hash) : lookupCredential(hash);
    },

    async listKeys(projectId) {
      return (await query('SELECT * FROM api_keys WHERE project_id = $1 ORDER BY created_at, id', [projectId])).rows.map(toKey);
    },

    async revokeKey(keyId, at) {
      const result = await query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, keyId]);
      return result.rowCount === 1;
    },

    async queryEvents(q): Promise<EventPage> {
      const limit = clampPageLimit(q.limit);
      const values: unknown[] = [q.projectId];
      const where = ['project_id = $1'];
      const add = (condition: (n: number) => string, ...params: unknown[]) => {
        where.push(condition(values.length + 1));
        values.push(...params);
      };
      if (q.eventType) add((n) => `event_type = $${n}`, q.eventType);
      if (q.userId) add((n) => `user_id = $${n}`, q.userId);
      if (q.sessionId) add((n) => `session_id = $${n}`, q.sessionId);
      for (const [column, value] of filterColumns(q.filters)) add((n) => `${column} = $${n}`, value);
      if (q.from !== undefined) add((n) => `timestamp >= $${n}`, timeBound(q.from));
      if (q.to !== undefined) add((n) => `timestamp < $${n}`, timeBound(q.to));
      if (q.cursor) {
        const cursor = decodeEventCursor(q.cursor);
        add((n) => `(timestamp, event_id) < ($${n}, $${n + 1})`, cursor.timestamp, cursor.eventId);
      }
      values.push(limit + 1);
      const rows = await read(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where.join(' AND ')}
         ORDER BY timestamp DESC, event_id DESC LIMIT $${values.length}`,
        values,
      );
      const more = rows.length > limit;
      const events = (more ? rows.slice(0, limit) : rows).map(toEventRow);
      const last = events[events.length - 1];
      return {
        events,
        nextCursor: more && last ? encodeEventCursor({ timestamp: last.timestamp, eventId: last.eventId }) : null,
      };
    },

    async listSessions(projectId, limit) {
      const rows = await read(LIST_SESSIONS_SQL, [projectId, clampPageLimit(limit)]);
      return rows.map(toSessionSummary);
    },

    async getRecording(projectId, sessionId) {
      const rows = await read(
        // The day narrows the read to the session's partition (postgres-partition.ts).
        'SELECT event_offset, events, is_final FROM recording_chunks WHERE project_id = $1 AND session_id = $2 AND id_day = $3 ORDER BY event_offset',
        [projectId, sessionId, idDay(sessionId)],
      );
      if (rows.length === 0) return null;
      return assembleRecording(
        sessionId,
        rows.map((row) => ({
          eventOffset: num(row.event_offset),
          events: row.events as RecordedEvent[],
          isFinal: row.is_final === true,
        })),
      );
    },

    async updateProject(projectId, changes) {
      if (changes.bots === undefined) return (await query('SELECT 1 FROM projects WHERE id = $1', [projectId])).rows.length > 0;
      return ((await query('UPDATE projects SET bots = $1 WHERE id = $2', [changes.bots, projectId])).rowCount ?? 0) > 0;
    },

    async exportEvents(q) {
      const limit = clampPageLimit(q.limit);
      const values: unknown[] = [q.projectId, q.from === undefined ? -MAX_TIME : timeBound(q.from), q.to === undefined ? MAX_TIME : timeBound(q.to), limit];
      let position = 'timestamp >= $2';
      if (q.after !== undefined) {
        values.push(q.after.timestamp, q.after.eventId);
        position = 'timestamp >= $2 AND (timestamp, event_id) > ($5, $6)';
      }
      const rows = await read(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE project_id = $1 AND ${position} AND timestamp < $3
         ORDER BY timestamp, event_id LIMIT $4`,
        values,
      );
      return rows.map(toEventRow);
    },

    async deleteUser(projectId, userId) {
      return transaction((client) => erasePostgresUserData(client, projectId, userId, keyRegister, besideOn(pool, 'COMMIT')));
    },

    async dailySalt(day, candidate) {
      // The row inserted now, or the one another process inserted first.
      let { rows } = await query(
        `WITH inserted AS (INSERT INTO salts (day, salt) VALUES ($1, $2) ON CONFLICT (day) DO NOTHING RETURNING salt)
         SELECT salt FROM inserted UNION ALL SELECT salt FROM salts WHERE day = $1 LIMIT 1`,
        [day, candidate],
      );
      // When another process's insert was still uncommitted, ours waited for it and did nothing,
      // but the statement's snapshot predates that commit and does not see the row: read it again
      // in a statement of its own (two server processes starting on the same day hit this).
      if (rows.length === 0) ({ rows } = await query('SELECT salt FROM salts WHERE day = $1', [day]));
      const salt = rows[0]?.salt;
      if (typeof salt !== 'string') throw new Error(`No salt stored for ${day}.`);
      return salt;
    },

    async deleteSaltsBefore(day) {
      return (await query('DELETE FROM salts WHERE day < $1', [day])).rowCount ?? 0;
    },

    async deleteOlderThan(cutoff) {
      const projects = new Set<string>();
      // Whole day partitions first; the row delete below then finds only the few rows left elsewhere.
      const dropped = await dropExpiredPartitions(pool, cutoff, {
        // A DROP fires no DELETE trigger: the days it empties are marked for the rollups here, as
        // the trigger marks those of deleted rows (rollup-schema.ts); the partition is locked
        // already (postgres-partition.ts says why first).
        beforeDrop: async (client, partition) => {
          await client.query(markDaysSql(partition));
          // Every project of the partition has aggregates to cut below, even when it has no event left.
          const held = await client.query<{ project_id: string }>(`SELECT DISTINCT project_id FROM ${partition}`);
          for (const row of held.rows) projects.add(row.project_id);
        },
      });
      partitions.forget();
      let events = dropped.rows;
      for (const { project_id: projectId } of (await query(EVENT_PROJECTS_SQL)).rows) {
        projects.add(projectId as string);
        events += (await query('DELETE FROM events WHERE project_id = $1 AND timestamp < $2', [projectId, cutoff])).rowCount ?? 0;
      }
      // The aggregates before the cut-off go and the hour it cuts is built again (postgres-aggregates.ts);
      // a dropped partition held no event at or after the cut-off (postgres-partition.ts).
      for (const projectId of projects) await transaction((client) => cutPostgresAggregatesAt(client, projectId, cutoff, sketchUnion));
      const droppedChunks = await dropExpiredPartitions(pool, cutoff, { table: RECORDING_PARTITIONS });
      recordingPartitions.forget();
      const chunks = droppedChunks.rows + ((await query('DELETE FROM recording_chunks WHERE received_at < $1', [cutoff])).rowCount ?? 0);
      return { events, chunks };
    },

    async ping() {
      await query('SELECT 1');
    },

    async close() {
      if (state === 'closed') return;
      state = 'closed';
      await rollupRefresher?.stop();
      clearInterval(compactionTimer);
      await compacting;
      await credentials?.close();
      await Promise.all([pool.end(), buildPool.end()]);
    },
  };
  return store;
}
