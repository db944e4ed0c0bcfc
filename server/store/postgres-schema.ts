import { REPORT_BACKFILL, REPORT_COLUMNS } from './sqlite-schema.js';

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
 * - Version 5 adds the report columns (`REPORT_COLUMNS` of `sqlite-schema.ts`; nullable, so no
 *   table rewrite) and `backfills`, whose row makes `report-backfill.ts` fill the older rows' columns
 *   in bounded batches after the schema step. No index is added for the reports: each reads one
 *   project's time range through `events_by_time` (docs/decisions.md, "Report columns").
 */
export const POSTGRES_SCHEMA_VERSION = 5;

/** Work a migration left for after the schema step: name, and where it stopped (report-backfill.ts). */
const BACKFILLS_TABLE = `
CREATE TABLE IF NOT EXISTS backfills (
  name TEXT COLLATE "C" PRIMARY KEY,
  position TEXT
);`;

/** The report columns' definitions, for the table and for the migration. */
const REPORT_COLUMN_DEFINITIONS = REPORT_COLUMNS.map((column) => `${column} TEXT COLLATE "C"`);

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
  kind TEXT NOT NULL CHECK (kind IN ('write', 'read')),
  hash TEXT COLLATE "C" NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX IF NOT EXISTS api_keys_by_project ON api_keys (project_id, created_at);

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
${REPORT_COLUMN_DEFINITIONS.map((definition) => `  ${definition},`).join('\n')}
  UNIQUE (project_id, event_id)
);
CREATE INDEX IF NOT EXISTS events_by_time ON events (project_id, timestamp, event_id);

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
  UNIQUE (project_id, session_id, event_offset)
);
CREATE INDEX IF NOT EXISTS recording_chunks_by_received ON recording_chunks (received_at);
${SALTS_TABLE}
${BACKFILLS_TABLE}
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
${REPORT_COLUMN_DEFINITIONS.map((definition) => `ALTER TABLE events ADD COLUMN IF NOT EXISTS ${definition};`).join('\n')}
${BACKFILLS_TABLE}
INSERT INTO backfills (name, position) VALUES ('${REPORT_BACKFILL}', NULL) ON CONFLICT (name) DO NOTHING;`,
};
