import { DEFAULT_PARTITION, EVENT_PARTITIONS, ID_DAY_FUNCTION, type PartitionedTable, RECORDING_PARTITIONS } from './postgres-partition.js';
import { REPORT_BACKFILL, REPORT_COLUMNS, REPORT_COLUMNS_V5 } from '../reports/report-columns.js';
import { HEATMAP_EVENT_TYPES_SQL } from '../reports/report-heatmap.js';

/**
 * The PostgreSQL schema, the same shape as SQLite's (`sqlite-schema.ts`) so both stores answer
 * alike:
 * - Times are BIGINT milliseconds since the epoch, exactly the numbers of the store interface: no
 *   time-zone conversion, no rounding to microseconds, and the keyset cursor compares integers.
 * - Queried fields are real columns; `properties` and a chunk's `events` are JSONB.
 * - `event_offset` is DOUBLE PRECISION, the exact type of a JS number: the wire allows any integer,
 *   and one offset beyond BIGINT must not fail the group commit it shares with other requests.
 * - Identifier columns use the "C" collation: byte order is what the cursor and dedupe need, and
 *   its comparisons are cheaper than a linguistic collation's.
 * - Version lives in `schema_version`; DDL runs under an advisory lock so that several server
 *   processes starting at once on one database create it once. A new database gets
 *   POSTGRES_SCHEMA (the latest shape); an older one gets the MIGRATIONS past its version, in the
 *   same locked transaction.
 * - `events` has only the indexes that writing needs (dedupe) and the one every read uses (time).
 *   Indexes for the read API's type/user/session filters, measured together, cost a large part of
 *   PostgreSQL's CPU per inserted event, paid on every event for a filter a read may never use (the
 *   store's figures are in bench/RESULTS.md). Filtered reads walk `events_by_time` of the project
 *   instead, newest first, as on SQLite.
 * - Triggers NOTIFY CREDENTIALS_CHANNEL in every transaction that changes `projects` or
 *   `api_keys`, from any process or tool: the credential cache of every server process listens and
 *   forgets what it knew (postgres-credentials.ts).
 * - Version 3 moves event times outside the window the server now accepts (`clock-skew.ts`) to
 *   their arrival time, keeping the client's in `client_timestamp`.
 * - Version 4 adds the project's bot policy (existing projects get `drop`), the events' `is_bot`
 *   and `visitor_id` (constant defaults: no table rewrite), and `salts`, the daily salts of visitor
 *   ids, kept apart from the events (`visitor-id.ts`).
 * - Version 5 adds the report columns (`REPORT_COLUMNS_V5` of `reports/report-columns.ts`; nullable, so no
 *   table rewrite) and `backfills`, whose row makes `report-backfill.ts` fill the older rows' columns
 *   in bounded batches after the schema step. No index is added for the reports: each reads one
 *   project's time range through `events_by_time` (docs/decisions.md, "Report columns").
 * - Version 6 partitions `events` by day (`postgres-partition.ts`): the day of the UUIDv7 time in
 *   the event id, `id_day`, part of the unique key so that dedupe stays exact across partitions,
 *   and a default partition for other ids. The migration moves every row into the new table, in
 *   the schema transaction: one pass over the events, paid once at the upgrade.
 * - Version 7 partitions `recording_chunks` the same way, by the day of the session id (the
 *   client's session ids are UUIDv7 too), so that retention drops a day of recordings whole.
 * - Version 8 lets `api_keys.kind` be `admin` (its CHECK replaced; the table is not rewritten).
 * - Version 9 adds the report column `country` (nullable: no table rewrite; added to the
 *   partitioned parent, it reaches every partition), filled at ingest from the client's full
 *   address. Older events keep it null: their stored address is truncated.
 * - Version 10 adds `events_by_user`, a partial index of the events that carry a user id, by which
 *   an erasure finds them (`sqlite-schema.ts` says why only those).
 * - Version 11 adds the dashboard's `accounts`, their `account_sessions` (the SHA-256 of each
 *   sign-in cookie's secret, deleted with their account) and the projects' `shared_links` (tokens
 *   hashed like keys): new tables only. No NOTIFY triggers on them: sessions and links are read
 *   from the table on each request, never cached, so a sign-out or revocation reaches every
 *   process at once (`sqlite-schema.ts`, docs/decisions.md "Team access").
 * - Version 12 adds `events_by_heatmap`, a partial index of the clicks and scroll depths by page and
 *   time, which the heatmap report reads (`sqlite-schema.ts` says why only those).
 */
export const POSTGRES_SCHEMA_VERSION = 12;

/** Work a migration left for after the schema step: name, and where it stopped (report-backfill.ts). */
const BACKFILLS_TABLE = `
CREATE TABLE IF NOT EXISTS backfills (
  name TEXT COLLATE "C" PRIMARY KEY,
  position TEXT
);`;

/** A report column's definition. */
const reportColumn = (column: string): string => `${column} TEXT COLLATE "C"`;

/** Key of the transaction-level advisory lock taken around schema changes. */
export const SCHEMA_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('service-analytics:schema'))";

/** Channel notified when a project or key changes (see postgres-credentials.ts). */
export const CREDENTIALS_CHANNEL = 'service_analytics_credentials';

/**
 * Statement-level triggers: one notification per changing statement, whatever its row count
 * (PostgreSQL folds identical notifications of one transaction into one); delivered only if the
 * transaction commits. Re-creatable, so the same text serves a new database and the migration.
 */
const CREDENTIAL_TRIGGERS = `
CREATE OR REPLACE FUNCTION service_analytics_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('${CREDENTIALS_CHANNEL}', '');
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS projects_notify_credentials ON projects;
CREATE TRIGGER projects_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects
  FOR EACH STATEMENT EXECUTE FUNCTION service_analytics_credentials_changed();
DROP TRIGGER IF EXISTS api_keys_notify_credentials ON api_keys;
CREATE TRIGGER api_keys_notify_credentials AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION service_analytics_credentials_changed();
`;

/** One random salt per UTC day (`YYYY-MM-DD`) for cookieless visitor ids, shared by every process. */
const SALTS_TABLE = `
CREATE TABLE IF NOT EXISTS salts (
  day TEXT COLLATE "C" PRIMARY KEY,
  salt TEXT NOT NULL
);`;

/** Version 11's tables: accounts, their sign-in sessions, and the shared links of projects. */
const ACCOUNT_TABLES = `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT COLLATE "C" PRIMARY KEY,
  email TEXT COLLATE "C" NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('viewer', 'admin')),
  password_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  disabled_at BIGINT
);
CREATE TABLE IF NOT EXISTS account_sessions (
  id TEXT COLLATE "C" PRIMARY KEY,
  account_id TEXT COLLATE "C" NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS account_sessions_by_account ON account_sessions (account_id);
CREATE TABLE IF NOT EXISTS shared_links (
  id TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
  hash TEXT COLLATE "C" NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  created_at BIGINT NOT NULL,
  created_by TEXT COLLATE "C",
  revoked_at BIGINT
);
CREATE INDEX IF NOT EXISTS shared_links_by_project ON shared_links (project_id, created_at);`;

/** Version 10's index of identified events, by which an erasure finds a user's events (`sqlite-schema.ts` says why it is partial). */
const EVENTS_BY_USER = 'CREATE INDEX IF NOT EXISTS events_by_user ON events (project_id, user_id) WHERE user_id IS NOT NULL;';

/** Version 12's index of clicks and scroll depths by page, which the heatmap report reads (`sqlite-schema.ts` says why it is partial). */
const EVENTS_BY_HEATMAP = `CREATE INDEX IF NOT EXISTS events_by_heatmap ON events (project_id, path, timestamp) WHERE ${HEATMAP_EVENT_TYPES_SQL};`;

/**
 * The events, partitioned by `id_day` (version 6). `id_day` defaults to 0, the day of ids that are
 * not UUIDv7; a row of a UUIDv7 id written by hand must set it to `service_analytics_id_day(event_id)`.
 * The unique key and `events_by_time` are declared on the parent, which gives each partition its own.
 */
const EVENTS_TABLE = `
CREATE TABLE IF NOT EXISTS events (
  project_id TEXT COLLATE "C" NOT NULL,
  event_id TEXT COLLATE "C" NOT NULL,
  event_type TEXT COLLATE "C" NOT NULL,
  user_id TEXT COLLATE "C",
  session_id TEXT COLLATE "C",
  timestamp BIGINT NOT NULL,
  client_timestamp BIGINT,
  received_at BIGINT NOT NULL,
  properties JSONB NOT NULL,
  user_agent TEXT,
  ip_address TEXT,
  is_bot BOOLEAN NOT NULL DEFAULT false,
  visitor_id TEXT COLLATE "C",
${REPORT_COLUMNS.map((column) => `  ${reportColumn(column)},`).join('\n')}
  id_day INTEGER NOT NULL DEFAULT 0,
  UNIQUE (project_id, event_id, id_day)
) PARTITION BY RANGE (id_day);
CREATE INDEX IF NOT EXISTS events_by_time ON events (project_id, timestamp, event_id);
${EVENTS_BY_USER}
${EVENTS_BY_HEATMAP}
CREATE TABLE IF NOT EXISTS ${DEFAULT_PARTITION} PARTITION OF events DEFAULT;`;

/**
 * The recording chunks, partitioned by `id_day` of the session id (version 7), as `events` is by its
 * event id's: the unique key holds the day, which is a function of the session id, so a resent chunk
 * is still a duplicate. `id_day` defaults to 0 (the default partition).
 */
const RECORDINGS_TABLE = `
CREATE TABLE IF NOT EXISTS recording_chunks (
  project_id TEXT COLLATE "C" NOT NULL,
  session_id TEXT COLLATE "C" NOT NULL,
  event_offset DOUBLE PRECISION NOT NULL,
  events JSONB NOT NULL,
  event_count INTEGER NOT NULL,
  duration DOUBLE PRECISION NOT NULL,
  start_url TEXT,
  user_id TEXT,
  is_final BOOLEAN NOT NULL,
  received_at BIGINT NOT NULL,
  id_day INTEGER NOT NULL DEFAULT 0,
  UNIQUE (project_id, session_id, event_offset, id_day)
) PARTITION BY RANGE (id_day);
CREATE INDEX IF NOT EXISTS recording_chunks_by_received ON recording_chunks (received_at);
CREATE TABLE IF NOT EXISTS ${RECORDING_PARTITIONS.defaultPartition} PARTITION OF recording_chunks DEFAULT;`;

/** Every column of a version 6 `recording_chunks` row, in table order. */
const V6_CHUNK_COLUMNS = 'project_id, session_id, event_offset, events, event_count, duration, start_url, user_id, is_final, received_at';

/**
 * Every column of a version 5 `events` row, in table order: what version 6's step copies into the
 * partitioned table (which has the latest columns, `country` too; version 9's step then finds it there).
 */
const V5_EVENT_COLUMNS = [
  'project_id', 'event_id', 'event_type', 'user_id', 'session_id', 'timestamp', 'client_timestamp', 'received_at',
  'properties', 'user_agent', 'ip_address', 'is_bot', 'visitor_id', ...REPORT_COLUMNS_V5,
].join(', ');

/** The latest schema, for a database that has none yet. */
export const POSTGRES_SCHEMA = `
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS projects (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  full_ip BOOLEAN NOT NULL DEFAULT false,
  cors_origins TEXT[] NOT NULL DEFAULT '{}',
  bots TEXT NOT NULL DEFAULT 'drop' CHECK (bots IN ('drop', 'flag', 'keep'))
);

CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
  kind TEXT NOT NULL CHECK (kind IN ('write', 'read', 'admin')),
  hash TEXT COLLATE "C" NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX IF NOT EXISTS api_keys_by_project ON api_keys (project_id, created_at);

${ID_DAY_FUNCTION}
${EVENTS_TABLE}

${RECORDINGS_TABLE}
${SALTS_TABLE}
${BACKFILLS_TABLE}
${ACCOUNT_TABLES}
${CREDENTIAL_TRIGGERS}
INSERT INTO schema_version (version) VALUES (${POSTGRES_SCHEMA_VERSION});
`;

/**
 * Steps from one version to the next: `MIGRATIONS[n]` takes a database from version n - 1 to n.
 * Each runs in the schema transaction, under the advisory lock.
 */
export const MIGRATIONS: Readonly<Record<number, string>> = {
  2: `
DROP INDEX IF EXISTS events_by_type;
DROP INDEX IF EXISTS events_by_user;
DROP INDEX IF EXISTS events_by_session;
${CREDENTIAL_TRIGGERS}`,
  3: `
UPDATE events SET client_timestamp = COALESCE(client_timestamp, timestamp), timestamp = received_at
WHERE timestamp < 946684800000 OR timestamp > received_at + 86400000;`,
  4: `
ALTER TABLE projects ADD COLUMN IF NOT EXISTS bots TEXT NOT NULL DEFAULT 'drop' CHECK (bots IN ('drop', 'flag', 'keep'));
ALTER TABLE events ADD COLUMN IF NOT EXISTS is_bot BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE events ADD COLUMN IF NOT EXISTS visitor_id TEXT COLLATE "C";
${SALTS_TABLE}`,
  5: `
${REPORT_COLUMNS_V5.map((column) => `ALTER TABLE events ADD COLUMN IF NOT EXISTS ${reportColumn(column)};`).join('\n')}
${BACKFILLS_TABLE}
INSERT INTO backfills (name, position) VALUES ('${REPORT_BACKFILL}', NULL) ON CONFLICT (name) DO NOTHING;`,
  6: `
${ID_DAY_FUNCTION}
${partitionMigration({ of: EVENT_PARTITIONS, old: 'events_v5', columns: V5_EVENT_COLUMNS, idColumn: 'event_id', ddl: EVENTS_TABLE, indexes: ['events_by_time', 'events_project_id_event_id_key'] })}`,
  // As version 6 did for the events: the chunks move to a partitioned table, each to its session's day.
  7: partitionMigration({
    of: RECORDING_PARTITIONS,
    old: 'recording_chunks_v6',
    columns: V6_CHUNK_COLUMNS,
    idColumn: 'session_id',
    ddl: RECORDINGS_TABLE,
    indexes: ['recording_chunks_by_received', 'recording_chunks_project_id_session_id_event_offset_key'],
  }),
  // The name PostgreSQL gave the column's CHECK in every earlier version.
  8: `
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_kind_check,
  ADD CONSTRAINT api_keys_kind_check CHECK (kind IN ('write', 'read', 'admin'));`,
  // On the partitioned parent: every partition, the default one included, gets the column.
  9: `
ALTER TABLE events ADD COLUMN IF NOT EXISTS ${reportColumn('country')};`,
  // Built over every partition in the schema transaction: writes wait for it, once, at the upgrade.
  10: EVENTS_BY_USER,
  // New tables, nothing rewritten.
  11: ACCOUNT_TABLES,
  // Built over every partition in the schema transaction: writes wait for it, once, at the upgrade.
  12: EVENTS_BY_HEATMAP,
};

/**
 * The migration that partitions a table by the day of an id. The old table steps aside (its
 * indexes renamed, as names are per schema), the partitioned one takes its name with a partition per
 * day its rows have (days from 2000 to two days ahead; the rest go to the default partition), and
 * every row moves over with its id's day. A table that is partitioned already is left as it is.
 */
function partitionMigration(m: { of: PartitionedTable; old: string; columns: string; idColumn: string; ddl: string; indexes: readonly string[] }): string {
  const table = m.of.table;
  return `
DO $migrate$
DECLARE d INTEGER;
BEGIN
  IF (SELECT c.relkind FROM pg_class c WHERE c.oid = '${table}'::regclass) <> 'r' THEN RETURN; END IF;
  ALTER TABLE ${table} RENAME TO ${m.old};
  ${m.indexes.map((index, k) => `ALTER INDEX IF EXISTS ${index} RENAME TO ${m.old}_${k}`).join(';\n  ')};
  ${m.ddl.trim().split('\n').join('\n  ')}
  FOR d IN SELECT DISTINCT service_analytics_id_day(${m.idColumn}) FROM ${m.old} LOOP
    IF d >= 10957 AND d <= floor(extract(epoch FROM now()) / 86400)::int + 2 THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF ${table} FOR VALUES FROM (%s) TO (%s)',
                     '${m.of.prefix}' || to_char(date '1970-01-01' + d, 'YYYYMMDD'), d, d + 1);
    END IF;
  END LOOP;
  INSERT INTO ${table} (${m.columns}, id_day) SELECT ${m.columns}, service_analytics_id_day(${m.idColumn}) FROM ${m.old};
  DROP TABLE ${m.old};
END
$migrate$;`;
}
