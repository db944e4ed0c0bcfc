import { REPORT_BACKFILL, REPORT_COLUMNS, REPORT_COLUMNS_V5 } from '../reports/report-columns.js';
import { HEATMAP_EVENT_TYPES_SQL } from '../reports/report-heatmap.js';

/**
 * The SQLite schema. Times are INTEGER milliseconds since the epoch; `properties` and recording
 * `events` are JSON text (never queried inside, so no JSON1 indexes). Version in `PRAGMA user_version`.
 *
 * Events carry two indexes, both appended to at their end while ingesting:
 * - `UNIQUE (project_id, event_id)`: dedupe. Time-ordered UUIDv7 ids keep it appending
 *   (docs/decisions.md, "UUIDv7 event ids").
 * - `(project_id, timestamp, event_id)`: every listing and its keyset cursor, newest first, read
 *   backwards; a filter (`event_type`, `user_id`, `session_id`) is checked on the rows of that scan.
 * Version 1 also had one index per filter. Every inserted event paid for each of them, together a
 * large part of SQLite's ingest rate (the store's figures are in bench/RESULTS.md), to speed up
 * filtered reads that SQLite's single-machine users run rarely; a filtered page now reads the time
 * range until it has its rows. PostgreSQL keeps its own choice (`postgres-schema.ts`). Version 2
 * also adds `auth_changes` (see below). Version 3 moves event times that lie outside the window the
 * server now accepts (`clock-skew.ts`: from 2000 to a day after arrival) to their arrival time,
 * keeping the client's in `client_timestamp`: such rows broke listings and retention. Version 4
 * adds the project's bot policy (existing projects get the default, `drop`), the events' `is_bot`
 * and `visitor_id`, and `salts`, the daily salts of visitor ids: a table of their own, never
 * joined with the events, and emptied of each day's salt soon after that day (`visitor-id.ts`).
 * Version 5 adds the report columns ({@link REPORT_COLUMNS_V5}: page path, hosts, channel, UTM,
 * browser, OS, device, screen class, anonymous id), filled at ingest, and `backfills`: a row there
 * says that the rows of an older database still need theirs, which `report-backfill.ts` fills in
 * bounded batches after the schema step and then deletes. No index is added for the reports: each
 * reads one project's time range through `events_by_time` (docs/decisions.md, "Report columns").
 * Version 6 lets `api_keys.kind` be `admin`, rebuilding the table ({@link SQLITE_V6_API_KEYS}).
 * Version 7 adds the report column `country` ({@link SQLITE_V7_COLUMNS}), filled at ingest from the
 * client's full address; older events keep it null, as their stored address is truncated.
 * Version 8 adds `events_by_user`, an index of only the events that carry a user id (a partial
 * index): an erasure found the user's events by reading every event of the project, which at 10M
 * events held the database for seconds (bench/RESULTS.md, "Reads beside writes"). Only identified
 * events pay for it at ingest, and the events of an erasure are exactly those.
 * Version 9 adds the dashboard's people ({@link SQLITE_ACCOUNT_TABLES}): `accounts` (email, role,
 * scrypt hash of the password), `account_sessions` (the SHA-256 of each sign-in cookie's secret,
 * deleted with their account) and `shared_links` (read-only links to one project's reports, their
 * tokens hashed like keys). New tables only: no row of an older version changes. They stay out of
 * `auth_changes`: sessions and links are read from the table on each request, never cached, so
 * that a sign-out, a disabled account or a revoked link takes effect at once without a count to
 * keep (docs/decisions.md, "Team access").
 * Version 10 adds `events_by_heatmap` ({@link EVENTS_BY_HEATMAP}), an index of only the clicks and
 * scroll depths by page and time: the heatmap report reads one page's, which through
 * `events_by_time` meant reading every event of the project's range. Only those two event types
 * pay for it at ingest.
 */
export const SQLITE_SCHEMA_VERSION = 10;

/** Version 8's index. */
const EVENTS_BY_USER = 'CREATE INDEX IF NOT EXISTS events_by_user ON events (project_id, user_id) WHERE user_id IS NOT NULL;';

/**
 * Version 10's index (`reports/report-heatmap.ts` reads it): a query uses a partial index only when
 * its WHERE holds the index's condition as written, so the report's statements repeat
 * {@link HEATMAP_EVENT_TYPES_SQL}.
 */
export const EVENTS_BY_HEATMAP = `CREATE INDEX IF NOT EXISTS events_by_heatmap ON events (project_id, path, timestamp) WHERE ${HEATMAP_EVENT_TYPES_SQL};`;

/** Version 9's tables: accounts, their sign-in sessions, and the shared links of projects. */
export const SQLITE_ACCOUNT_TABLES = `CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('viewer', 'admin')),
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  disabled_at INTEGER
);
CREATE TABLE IF NOT EXISTS account_sessions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS account_sessions_by_account ON account_sessions (account_id);
CREATE TABLE IF NOT EXISTS shared_links (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id),
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL,
  created_by TEXT,
  revoked_at INTEGER
);
CREATE INDEX IF NOT EXISTS shared_links_by_project ON shared_links (project_id, created_at);`;

/** Columns added by version 4, each only where missing (SQLite has no `ADD COLUMN IF NOT EXISTS`). */
export const SQLITE_V4_COLUMNS: ReadonlyArray<readonly [table: string, column: string, definition: string]> = [
  ['projects', 'bots', "TEXT NOT NULL DEFAULT 'drop' CHECK (bots IN ('drop', 'flag', 'keep'))"],
  ['events', 'is_bot', 'INTEGER NOT NULL DEFAULT 0'],
  ['events', 'visitor_id', 'TEXT'],
];

/** Columns added by version 5. */
export const SQLITE_V5_COLUMNS: ReadonlyArray<readonly [table: string, column: string, definition: string]> = REPORT_COLUMNS_V5.map(
  (column) => ['events', column, 'TEXT'] as const,
);

/** Columns added by version 7. */
export const SQLITE_V7_COLUMNS: ReadonlyArray<readonly [table: string, column: string, definition: string]> = [['events', 'country', 'TEXT']];

/** The `api_keys` table, `kind` allowing `admin` since version 6. */
const API_KEYS_TABLE = (name: string): string => `CREATE TABLE IF NOT EXISTS ${name} (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id),
  kind TEXT NOT NULL CHECK (kind IN ('write', 'read', 'admin')),
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER
);`;

/**
 * Version 5's step: SQLite cannot alter a CHECK, so `api_keys` is copied into a table with the new
 * one, which takes its name. Its index and its three `auth_changes` triggers go with the old table;
 * {@link SQLITE_SCHEMA}, run right after the steps in the same transaction, creates them again.
 * Nothing references `api_keys`, so dropping it with foreign keys on breaks no reference.
 */
export const SQLITE_V6_API_KEYS = `${API_KEYS_TABLE('api_keys_v6')}
INSERT INTO api_keys_v6 (id, project_id, kind, hash, prefix, created_at, revoked_at)
  SELECT id, project_id, kind, hash, prefix, created_at, revoked_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_v6 RENAME TO api_keys;`;

/**
 * Statements that bring a database of version `n` (the key) to `n + 1`; version 3's, 4's and 6's
 * steps also add the {@link SQLITE_V4_COLUMNS}, {@link SQLITE_V5_COLUMNS} and {@link SQLITE_V7_COLUMNS}
 * (`sqlite-database.ts`), as their columns must be looked for first, and version 5's step runs only
 * where `api_keys` exists.
 */
export const SQLITE_MIGRATIONS: Readonly<Record<number, string>> = {
  1: `DROP INDEX IF EXISTS events_by_type;
DROP INDEX IF EXISTS events_by_user;
DROP INDEX IF EXISTS events_by_session;`,
  2: `UPDATE events SET client_timestamp = COALESCE(client_timestamp, timestamp), timestamp = received_at
WHERE timestamp < 946684800000 OR timestamp > received_at + 86400000;`,
  4: `CREATE TABLE IF NOT EXISTS backfills (name TEXT PRIMARY KEY, position TEXT);
INSERT OR IGNORE INTO backfills (name, position) VALUES ('${REPORT_BACKFILL}', NULL);`,
  5: SQLITE_V6_API_KEYS,
  7: EVENTS_BY_USER,
  8: SQLITE_ACCOUNT_TABLES,
  9: EVENTS_BY_HEATMAP,
};

export const SQLITE_SCHEMA = `
CREATE TABLE IF NOT EXISTS projects (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  full_ip INTEGER NOT NULL DEFAULT 0,
  cors_origins TEXT NOT NULL DEFAULT '[]',
  bots TEXT NOT NULL DEFAULT 'drop' CHECK (bots IN ('drop', 'flag', 'keep'))
);

${API_KEYS_TABLE('api_keys')}
CREATE INDEX IF NOT EXISTS api_keys_by_project ON api_keys (project_id, created_at);

-- Counts changes to keys and projects, whoever makes them (this server, another process, the CLI):
-- the credential cache is valid while the count is unchanged, and event writes leave it alone.
CREATE TABLE IF NOT EXISTS auth_changes (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO auth_changes (id, n) VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS api_keys_inserted AFTER INSERT ON api_keys BEGIN UPDATE auth_changes SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS api_keys_updated AFTER UPDATE ON api_keys BEGIN UPDATE auth_changes SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS api_keys_deleted AFTER DELETE ON api_keys BEGIN UPDATE auth_changes SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS projects_inserted AFTER INSERT ON projects BEGIN UPDATE auth_changes SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS projects_updated AFTER UPDATE ON projects BEGIN UPDATE auth_changes SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS projects_deleted AFTER DELETE ON projects BEGIN UPDATE auth_changes SET n = n + 1; END;

CREATE TABLE IF NOT EXISTS events (
  project_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  user_id TEXT,
  session_id TEXT,
  timestamp INTEGER NOT NULL,
  client_timestamp INTEGER,
  received_at INTEGER NOT NULL,
  properties TEXT NOT NULL,
  user_agent TEXT,
  ip_address TEXT,
  is_bot INTEGER NOT NULL DEFAULT 0,
  visitor_id TEXT,
${REPORT_COLUMNS.map((column) => `  ${column} TEXT,`).join('\n')}
  UNIQUE (project_id, event_id)
);
CREATE INDEX IF NOT EXISTS events_by_time ON events (project_id, timestamp, event_id);
${EVENTS_BY_USER}
${EVENTS_BY_HEATMAP}

CREATE TABLE IF NOT EXISTS recording_chunks (
  project_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  event_offset INTEGER NOT NULL,
  events TEXT NOT NULL,
  event_count INTEGER NOT NULL,
  duration REAL NOT NULL,
  start_url TEXT,
  user_id TEXT,
  is_final INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  UNIQUE (project_id, session_id, event_offset)
);
CREATE INDEX IF NOT EXISTS recording_chunks_by_received ON recording_chunks (received_at);

-- One random salt per UTC day (YYYY-MM-DD) for cookieless visitor ids, shared by every process.
CREATE TABLE IF NOT EXISTS salts (
  day TEXT PRIMARY KEY,
  salt TEXT NOT NULL
);

-- Work a migration left for after the schema step: name, and where it stopped (report-backfill.ts).
CREATE TABLE IF NOT EXISTS backfills (name TEXT PRIMARY KEY, position TEXT);

-- The dashboard's accounts, their sessions and the projects' shared links (version 9).
${SQLITE_ACCOUNT_TABLES}
`;
