import { renameSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { DEFAULT_DURABILITY, sqliteSynchronous } from '../durability.js';
import type { EventQuery } from '../event-store.js';
import { filterColumns } from '../report-store.js';
import { backfillSqliteReportColumns } from '../reports/report-backfill.js';
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA, SQLITE_SCHEMA_VERSION, SQLITE_V4_COLUMNS, SQLITE_V5_COLUMNS, SQLITE_V7_COLUMNS } from './sqlite-schema.js';
import type { SqliteStoreOptions } from './sqlite-store-options.js';


/*
 * The SQLite connection of one store on the request thread: pragmas, schema, and every prepared
 * statement of reads, keys and retention (prepared once, reused for the life of the store). Group
 * commits are written by `sqlite-event-writer.ts`, on the writer thread of `sqlite-writer.ts`.
 */

/** A prepared statement with positional or named parameters. */
export type Statement = Database.Statement<unknown[]>;

/** Page size of a new database file, bytes. */
export const SQLITE_PAGE_SIZE = 16_384;

/** Rows deleted per statement by retention, so a large purge never holds the write lock for long. */
export const DELETE_SLICE = 5000;

/** Event columns the read API returns. */
const EVENT_COLUMNS =
  'event_id, event_type, user_id, session_id, timestamp, client_timestamp, received_at, properties, user_agent, ip_address, is_bot, visitor_id';

// Union length of the chunk ranges [offset, offset + count) per session: each chunk adds only the
// part past the furthest end of the chunks before it, so overlapping chunks are not counted twice.
const LIST_SESSIONS_SQL = `
WITH spans AS (
  SELECT session_id, event_offset, event_count, duration, received_at, is_final,
    MAX(event_offset + event_count) OVER (
      PARTITION BY session_id ORDER BY event_offset ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
    ) AS covered_before
  FROM recording_chunks WHERE project_id = @projectId
), sessions AS (
  SELECT session_id, COUNT(*) AS chunk_count,
    SUM(MAX(0, event_offset + event_count - MAX(event_offset, COALESCE(covered_before, 0)))) AS event_count,
    MAX(duration) AS duration, MIN(received_at) AS first_received_at,
    MAX(received_at) AS last_received_at, MAX(is_final) AS finished
  FROM spans GROUP BY session_id
  ORDER BY last_received_at DESC, session_id DESC LIMIT @limit
)
SELECT s.*,
  (SELECT c.start_url FROM recording_chunks c WHERE c.project_id = @projectId AND c.session_id = s.session_id
     AND c.start_url IS NOT NULL ORDER BY c.event_offset LIMIT 1) AS start_url,
  (SELECT c.user_id FROM recording_chunks c WHERE c.project_id = @projectId AND c.session_id = s.session_id
     AND c.user_id IS NOT NULL ORDER BY c.event_offset LIMIT 1) AS user_id
FROM sessions s ORDER BY s.last_received_at DESC, s.session_id DESC`;

/** Adds each column its table lacks; existing rows get the column's default. */
function addMissingColumns(db: Database.Database, columns: typeof SQLITE_V4_COLUMNS): void {
  for (const [table, column, definition] of columns) {
    const present = (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((c) => c.name === column);
    if (!present) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** Opens the database, creates the schema when missing and prepares the statements. */
export function openDatabase(options: SqliteStoreOptions): OpenDatabase {
  const db = new Database(options.path);
  try {
    return prepareDatabase(db, options);
  } catch (error) {
    db.close();
    throw error;
  }
}

function prepareDatabase(db: Database.Database, options: SqliteStoreOptions): OpenDatabase {
  // WAL lets readers run beside the writer. `synchronous` follows the durability (durability.ts):
  // FULL syncs the WAL at every commit, so an acknowledged commit survives a power cut too; NORMAL
  // syncs at checkpoints only, which in WAL mode still survives a process crash, so
  // commit-before-answer holds either way (docs/decisions.md, "Group commit and commit-before-answer").
  // Only a new, empty file takes it; an existing database keeps the page size it was made with.
  // 16 KB pages: each group commit writes its dirty pages whole to the WAL, and with 4 KB pages the
  // many frames per commit (and the checkpointer's copying of them) cost a clear share of the
  // writer's CPU per event (docs/decisions.md, "Write path: each event parsed and encoded once").
  db.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${sqliteSynchronous(options.durability ?? DEFAULT_DURABILITY)}`);
  const busyTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000));
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
  db.pragma('cache_size = -32000');

  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SQLITE_SCHEMA_VERSION) {
    throw new Error(
      `${options.path} has schema version ${version}; this server knows up to ${SQLITE_SCHEMA_VERSION}. Upgrade the server.`,
    );
  }
  if (version > 0 && version < SQLITE_SCHEMA_VERSION && options.path !== ':memory:' && options.migrationBackup !== false) {
    // A whole copy before any step changes the file (VACUUM INTO: one consistent snapshot, even
    // with another process writing), so a migration that goes wrong can be undone with `restore`.
    // Written under a name of its own and renamed once whole: a copy killed halfway must not sit
    // beside the database looking like the pre-upgrade one (it is removed at the next start).
    const copy = `${options.path}.before-v${SQLITE_SCHEMA_VERSION}-${Date.now()}`;
    const partial = `${options.path}.copying-before-v${SQLITE_SCHEMA_VERSION}`;
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
    db.prepare('VACUUM INTO ?').run(partial);
    renameSync(partial, copy);
    options.onMigrationBackup?.(copy, version);
  }
  // IMMEDIATE takes the write lock first, so two processes starting at once create the schema once.
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    // A new database is created at the current version; an older one is migrated step by step.
    if (current > 0) {
      for (let v = current; v < SQLITE_SCHEMA_VERSION; v++) {
        // A file without `api_keys` (never one the server made) has no keys to copy; SQLITE_SCHEMA creates it below.
        if (v === 5 && !hasTable(db, 'api_keys')) continue;
        db.exec(SQLITE_MIGRATIONS[v] ?? '');
        if (v === 3) addMissingColumns(db, SQLITE_V4_COLUMNS);
        if (v === 4) addMissingColumns(db, SQLITE_V5_COLUMNS);
        if (v === 6) addMissingColumns(db, SQLITE_V7_COLUMNS);
      }
    }
    db.exec(SQLITE_SCHEMA);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
  // Rows of an older version get their report columns, batch by batch, before the store serves.
  backfillSqliteReportColumns(db, options.backfillBatch);

  const statements = {
    insertProject: db.prepare<unknown[]>(
      'INSERT INTO projects (id, name, created_at, full_ip, cors_origins, bots) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    updateProjectBots: db.prepare<unknown[]>('UPDATE projects SET bots = ? WHERE id = ?'),
    projectExists: db.prepare<unknown[]>('SELECT 1 FROM projects WHERE id = ?').pluck(),
    getProject: db.prepare<unknown[]>('SELECT * FROM projects WHERE id = ?'),
    listProjects: db.prepare<unknown[]>('SELECT * FROM projects ORDER BY created_at, id'),
    insertKey: db.prepare<unknown[]>(
      'INSERT INTO api_keys (id, project_id, kind, hash, prefix, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    findKey: db.prepare<unknown[]>('SELECT * FROM api_keys WHERE hash = ? AND revoked_at IS NULL'),
    findCredential: db.prepare<unknown[]>(
      `SELECT k.id, k.project_id, k.kind, k.hash, k.prefix, k.created_at, k.revoked_at,
         p.name AS project_name, p.created_at AS project_created_at, p.full_ip, p.cors_origins, p.bots
       FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE k.hash = ? AND k.revoked_at IS NULL`,
    ),
    authChanges: db.prepare<unknown[]>('SELECT n FROM auth_changes WHERE id = 1').pluck(),
    listKeys: db.prepare<unknown[]>('SELECT * FROM api_keys WHERE project_id = ? ORDER BY created_at, id'),
    revokeKey: db.prepare<unknown[]>('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
    listSessions: db.prepare<unknown[]>(LIST_SESSIONS_SQL),
    recordingChunks: db.prepare<unknown[]>(
      `SELECT event_offset, events, is_final FROM recording_chunks
       WHERE project_id = ? AND session_id = ? ORDER BY event_offset`,
    ),
    // Retention walks the distinct projects through the (project_id, …) index, one seek each,
    // so every delete is an index range instead of a scan of the whole table.
    firstEventProject: db.prepare<unknown[]>('SELECT project_id FROM events ORDER BY project_id LIMIT 1').pluck(),
    nextEventProject: db
      .prepare<unknown[]>('SELECT project_id FROM events WHERE project_id > ? ORDER BY project_id LIMIT 1')
      .pluck(),
    deleteEvents: db.prepare<unknown[]>(
      `DELETE FROM events WHERE rowid IN
         (SELECT rowid FROM events WHERE project_id = ? AND timestamp < ? LIMIT ${DELETE_SLICE})`,
    ),
    // The UTC days of a user's events: the days whose aggregates an erasure builds again.
    deleteChunks: db.prepare<unknown[]>(
      `DELETE FROM recording_chunks WHERE rowid IN
         (SELECT rowid FROM recording_chunks WHERE received_at < ? LIMIT ${DELETE_SLICE})`,
    ),
    // Oldest first, after the previous page's last event: the time index read forwards.
    exportFirst: db.prepare<unknown[]>(
      `SELECT ${EVENT_COLUMNS} FROM events INDEXED BY events_by_time
       WHERE project_id = @projectId AND timestamp >= @from AND timestamp < @to
       ORDER BY timestamp, event_id LIMIT @limit`,
    ),
    exportNext: db.prepare<unknown[]>(
      `SELECT ${EVENT_COLUMNS} FROM events INDEXED BY events_by_time
       WHERE project_id = @projectId AND (timestamp, event_id) > (@afterTime, @afterId) AND timestamp < @to
       ORDER BY timestamp, event_id LIMIT @limit`,
    ),
    insertSalt: db.prepare<unknown[]>('INSERT INTO salts (day, salt) VALUES (?, ?) ON CONFLICT (day) DO NOTHING'),
    getSalt: db.prepare<unknown[]>('SELECT salt FROM salts WHERE day = ?').pluck(),
    deleteSaltsBefore: db.prepare<unknown[]>('DELETE FROM salts WHERE day < ?'),
    ping: db.prepare<unknown[]>('SELECT 1').pluck(),
  } satisfies Record<StatementName, Statement>;

  return { db, busyTimeoutMs, statements, queryCache: new Map<string, Statement>(), reportCache: new Map<string, Statement>() };
}

/** The statements `openDatabase` prepares, by name. */
export type StatementName =
  | 'insertProject'
  | 'updateProjectBots'
  | 'projectExists'
  | 'getProject'
  | 'listProjects'
  | 'insertKey'
  | 'findKey'
  | 'findCredential'
  | 'authChanges'
  | 'listKeys'
  | 'revokeKey'
  | 'listSessions'
  | 'recordingChunks'
  | 'firstEventProject'
  | 'nextEventProject'
  | 'deleteEvents'
  | 'deleteChunks'
  | 'exportFirst'
  | 'exportNext'
  | 'insertSalt'
  | 'getSalt'
  | 'deleteSaltsBefore'
  | 'ping';

/** An open store database. */
export interface OpenDatabase {
  db: Database.Database;
  busyTimeoutMs: number;
  statements: Readonly<Record<StatementName, Statement>>;
  /** Event-page statements by combination of filters (`eventPageStatement`). */
  queryCache: Map<string, Statement>;
  /** Report statements by SQL text (`report-queries.ts`). */
  reportCache: Map<string, Statement>;
}

/**
 * Builds (and caches, per combination of filters) the statement of one events page. It always reads
 * the time index backwards (no sort step, and the cursor is a seek into it); filters are checked on
 * the rows it reads (see `sqlite-schema.ts` for why there is no index per filter).
 */
export function eventPageStatement(open: OpenDatabase, query: EventQuery): Statement {
  const dimensions = filterColumns(query.filters).map(([column]) => column);
  const key = `${+!!query.eventType}${+!!query.userId}${+!!query.sessionId}${+(query.from !== undefined)}${+(query.to !== undefined)}${+!!query.cursor}${dimensions.join(',')}`;
  let statement = open.queryCache.get(key);
  if (!statement) {
    const where = ['project_id = ?'];
    if (query.eventType) where.push('event_type = ?');
    if (query.userId) where.push('user_id = ?');
    if (query.sessionId) where.push('session_id = ?');
    for (const column of dimensions) where.push(`${column} = ?`);
    if (query.from !== undefined) where.push('timestamp >= ?');
    if (query.to !== undefined) where.push('timestamp < ?');
    if (query.cursor) where.push('(timestamp, event_id) < (?, ?)');
    statement = open.db.prepare<unknown[]>(
      `SELECT ${EVENT_COLUMNS} FROM events INDEXED BY events_by_time WHERE ${where.join(' AND ')}
       ORDER BY timestamp DESC, event_id DESC LIMIT ?`,
    );
    open.queryCache.set(key, statement);
  }
  return statement;
}

