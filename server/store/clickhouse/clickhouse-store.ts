import type { RecordedEvent } from '../../../protocol/index.js';
import type { EventPage, EventStore, WriteBatch, WriteResult } from '../event-store.js';
import { filterColumns } from '../report-store.js';
import { MAX_TIME, clampPageLimit, decodeEventCursor, encodeEventCursor, timeBound } from '../shared/cursor.js';
import { assembleRecording } from '../shared/recording-assembly.js';
import { StoreError } from '../store-error.js';
import { migrateClickHouse } from './clickhouse-migrate.js';
import { createClickHouseReports } from './clickhouse-reports.js';
import { deleteClickHouseOlderThan } from './clickhouse-retention.js';
import { EVENT_COLUMNS, rowToEvent, rowToSessionSummary } from './clickhouse-rows.js';
import { CLICKHOUSE_SCHEMA_VERSION, tablesOf } from './clickhouse-schema.js';
import type { ClickHouseTransport, ParamValue } from './clickhouse-transport.js';
import { createClickHouseWriter } from './clickhouse-writer.js';

/** Options of {@link createClickHouseStore}. */
export interface ClickHouseStoreOptions {
  /** How statements reach ClickHouse: `createHttpTransport` for a server, `createChdbTransport` in tests. */
  transport: ClickHouseTransport;
  /**
   * Where projects, keys and the daily salts live: a SQLite or PostgreSQL store (its events tables
   * stay empty). Configuration wants unique keys, transactions and instant revocation, which
   * ClickHouse does not offer; Plausible keeps its configuration in PostgreSQL for the same
   * reason. The ClickHouse store initialises and closes it with itself.
   */
  config: EventStore;
  /** The ClickHouse database of the events, created when missing. @default 'service_analytics' */
  database?: string;
  /** The schema version to bring the database to; tests make an older database with it. @default the current one */
  schemaVersion?: number;
}

/** The listing of recorded sessions: chunks overlap, so events are counted once per offset. */
const listSessionsSql = (chunks: string, limit: number) => `
SELECT session_id, count() AS chunk_count,
  sum(greatest(0, c_offset + c_count - greatest(c_offset, covered_before))) AS event_count,
  max(c_duration) AS duration, min(c_received) AS first_received_at, max(c_received) AS last_received_at,
  max(c_final) AS finished,
  argMinIf(c_start_url, c_offset, c_start_url IS NOT NULL) AS start_url,
  argMinIf(c_user_id, c_offset, c_user_id IS NOT NULL) AS user_id
FROM (
  SELECT session_id, event_offset AS c_offset, event_count AS c_count, duration AS c_duration, received_at AS c_received,
    is_final AS c_final, start_url AS c_start_url, user_id AS c_user_id,
    ifNull(max(event_offset + event_count) OVER (PARTITION BY session_id ORDER BY event_offset ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS covered_before
  FROM ${chunks} FINAL WHERE project_id = {project:String})
GROUP BY session_id ORDER BY last_received_at DESC, session_id DESC LIMIT ${limit}`;

/**
 * The ClickHouse store (docs/decisions.md, "ClickHouse"): events and recordings in ClickHouse,
 * for installations whose events outgrow one database machine; projects, keys and salts in the
 * `config` store. Dedupe is checked at insert, one group at a time (`clickhouse-writer.ts`);
 * `write` resolves after ClickHouse confirmed the insert; reports read the events table
 * (`clickhouse-reports.ts`); retention drops whole months (`clickhouse-retention.ts`).
 */
export function createClickHouseStore(options: ClickHouseStoreOptions): EventStore {
  const { transport, config } = options;
  const tables = tablesOf(options.database ?? 'service_analytics');
  const writeGroup = createClickHouseWriter(transport, tables);
  let state: 'new' | 'open' | 'closed' = 'new';
  let initialising: Promise<void> | null = null;
  // One group at a time: a group's dedupe check must see the inserts of the group before it.
  let writing: Promise<unknown> = Promise.resolve();

  const use = (): ClickHouseTransport => {
    if (state === 'open') return transport;
    throw new StoreError('NOT_OPEN', state === 'closed' ? 'The ClickHouse store is closed.' : 'Call init() before using the ClickHouse store.');
  };
  /** The transport while the store is open: every call after close() rejects with NOT_OPEN. */
  const open: ClickHouseTransport = {
    query: (...args) => use().query(...args),
    command: (...args) => use().command(...args),
    insert: (...args) => use().insert(...args),
    close: async () => {},
  };
  const query = (sql: string, params: Record<string, ParamValue> = {}) => open.query(sql, params);
  const count = async (sql: string, params: Record<string, ParamValue>): Promise<number> => Number((await query(sql, params))[0]?.n ?? 0);

  return {
    kind: 'clickhouse',
    reports: createClickHouseReports(open, tables),

    async init() {
      if (state === 'closed') throw new StoreError('NOT_OPEN', 'The ClickHouse store is closed.');
      initialising ??= (async () => {
        await config.init();
        await migrateClickHouse(transport, tables, options.schemaVersion ?? CLICKHOUSE_SCHEMA_VERSION);
      })().then(
        () => {
          if (state === 'new') state = 'open';
        },
        (error: unknown) => {
          initialising = null;
          throw error;
        },
      );
      return initialising;
    },

    async write(batch: WriteBatch): Promise<WriteResult> {
      use();
      if (batch.events.length === 0 && batch.chunks.length === 0) return { eventInserted: [], chunkInserted: [] };
      const result = writing.then(() => writeGroup(batch));
      // The next group waits for this one to settle, whether it failed or not.
      writing = result.catch(() => undefined);
      return result;
    },

    createProject: (project) => config.createProject(project),
    getProject: (projectId) => config.getProject(projectId),
    listProjects: () => config.listProjects(),
    createKey: (key) => config.createKey(key),
    findKeyByHash: (hash) => config.findKeyByHash(hash),
    findCredential: (hash) => config.findCredential(hash),
    listKeys: (projectId) => config.listKeys(projectId),
    revokeKey: (keyId, at) => config.revokeKey(keyId, at),
    updateProject: (projectId, changes) => config.updateProject(projectId, changes),
    dailySalt: (day, candidate) => config.dailySalt(day, candidate),
    deleteSaltsBefore: (day) => config.deleteSaltsBefore(day),
    // The dashboard's accounts, sessions and shared links are configuration too: kept where projects are.
    createAccount: (account) => config.createAccount(account),
    getAccount: (accountId) => config.getAccount(accountId),
    findAccountByEmail: (email) => config.findAccountByEmail(email),
    listAccounts: () => config.listAccounts(),
    updateAccount: (accountId, changes) => config.updateAccount(accountId, changes),
    deleteAccount: (accountId) => config.deleteAccount(accountId),
    createAccountSession: (session) => config.createAccountSession(session),
    findAccountSession: (sessionId) => config.findAccountSession(sessionId),
    touchAccountSession: (sessionId, at) => config.touchAccountSession(sessionId, at),
    deleteAccountSession: (sessionId) => config.deleteAccountSession(sessionId),
    deleteExpiredAccountSessions: (lastSeenBefore, createdBefore) => config.deleteExpiredAccountSessions(lastSeenBefore, createdBefore),
    createSharedLink: (link) => config.createSharedLink(link),
    findSharedLink: (hash) => config.findSharedLink(hash),
    listSharedLinks: (projectId) => config.listSharedLinks(projectId),
    revokeSharedLink: (projectId, linkId, at) => config.revokeSharedLink(projectId, linkId, at),

    async queryEvents(q): Promise<EventPage> {
      const limit = clampPageLimit(q.limit);
      const params: Record<string, ParamValue> = { project: q.projectId };
      const where = ['project_id = {project:String}'];
      const add = (condition: string, name: string, value: ParamValue) => {
        where.push(condition);
        params[name] = value;
      };
      if (q.eventType) add('event_type = {type:String}', 'type', q.eventType);
      if (q.userId) add('user_id = {user:String}', 'user', q.userId);
      if (q.sessionId) add('session_id = {session:String}', 'session', q.sessionId);
      filterColumns(q.filters).forEach(([column, value], i) => add(`${column} = {f${i}:String}`, `f${i}`, value));
      if (q.from !== undefined) add('timestamp >= {from:Int64}', 'from', timeBound(q.from));
      if (q.to !== undefined) add('timestamp < {to:Int64}', 'to', timeBound(q.to));
      if (q.cursor) {
        const cursor = decodeEventCursor(q.cursor);
        add('(timestamp, event_id) < ({at:Int64}, {id:String})', 'at', cursor.timestamp);
        params.id = cursor.eventId;
      }
      const rows = await query(
        `SELECT ${EVENT_COLUMNS} FROM ${tables.events} FINAL WHERE ${where.join(' AND ')}
         ORDER BY timestamp DESC, event_id DESC LIMIT ${limit + 1}`,
        params,
      );
      const more = rows.length > limit;
      const events = (more ? rows.slice(0, limit) : rows).map(rowToEvent);
      const last = events[events.length - 1];
      return { events, nextCursor: more && last ? encodeEventCursor({ timestamp: last.timestamp, eventId: last.eventId }) : null };
    },

    async listSessions(projectId, limit) {
      return (await query(listSessionsSql(tables.chunks, clampPageLimit(limit)), { project: projectId })).map(rowToSessionSummary);
    },

    async getRecording(projectId, sessionId) {
      const rows = await query(
        `SELECT event_offset, events, is_final FROM ${tables.chunks} FINAL
         WHERE project_id = {project:String} AND session_id = {session:String} ORDER BY event_offset`,
        { project: projectId, session: sessionId },
      );
      if (rows.length === 0) return null;
      return assembleRecording(
        sessionId,
        rows.map((row) => ({ eventOffset: Number(row.event_offset), events: JSON.parse(String(row.events)) as RecordedEvent[], isFinal: row.is_final === true })),
      );
    },

    async exportEvents(q) {
      const params: Record<string, ParamValue> = {
        project: q.projectId,
        from: q.from === undefined ? -MAX_TIME : timeBound(q.from),
        to: q.to === undefined ? MAX_TIME : timeBound(q.to),
      };
      let position = '';
      if (q.after !== undefined) {
        position = ' AND (timestamp, event_id) > ({at:Int64}, {id:String})';
        params.at = q.after.timestamp;
        params.id = q.after.eventId;
      }
      const rows = await query(
        `SELECT ${EVENT_COLUMNS} FROM ${tables.events} FINAL
         WHERE project_id = {project:String} AND timestamp >= {from:Int64} AND timestamp < {to:Int64}${position}
         ORDER BY timestamp, event_id LIMIT ${clampPageLimit(q.limit)}`,
        params,
      );
      return rows.map(rowToEvent);
    },

    async deleteUser(projectId, userId) {
      // No transaction spans ClickHouse statements: each DELETE is synchronous and idempotent, so
      // an erasure stopped half-way is completed by running it again (the answer then counts what
      // was left). The counts come first, with FINAL (a copy not merged yet counts once).
      const params = { project: projectId, user: userId };
      const byUser = 'project_id = {project:String} AND user_id = {user:String}';
      const events = await count(`SELECT count() AS n FROM ${tables.events} FINAL WHERE ${byUser}`, params);
      const recordings = await count(`SELECT count() AS n FROM ${tables.chunks} FINAL WHERE ${byUser}`, params);
      const t = open;
      if (events > 0) {
        // The ids first, as retention does (clickhouse-retention.ts says why).
        await t.command(
          `DELETE FROM ${tables.eventIds} WHERE project_id = {project:String}
           AND event_id IN (SELECT event_id FROM ${tables.events} WHERE ${byUser})`,
          params,
        );
        await t.command(`DELETE FROM ${tables.events} WHERE ${byUser}`, params);
      }
      // Only the chunks uploaded under the user's id (event-store.ts says why).
      if (recordings > 0) await t.command(`DELETE FROM ${tables.chunks} WHERE ${byUser}`, params);
      return { events, recordings };
    },

    async deleteOlderThan(cutoff) {
      return deleteClickHouseOlderThan(open, tables, cutoff);
    },

    async ping() {
      await query('SELECT 1');
      await config.ping();
    },

    async close() {
      if (state === 'closed') return;
      state = 'closed';
      await writing;
      await transport.close();
      await config.close();
    },
  };
}
