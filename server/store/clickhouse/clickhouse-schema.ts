/*
 * The ClickHouse schema, as numbered steps (docs/decisions.md, "ClickHouse"). A new database runs
 * every step; an older one the steps after its version, which `schema_version` keeps. ClickHouse
 * has no transactions and no locks for DDL, so every statement is idempotent (`IF NOT EXISTS`):
 * two processes starting together run the same steps, and a start stopped half-way runs its step
 * again. A step's version row is inserted after its statements, so a step is never recorded
 * before it was done; a version row twice (two processes) is harmless, as the version is the
 * largest one.
 *
 * - `events`: a ReplacingMergeTree ordered by (project_id, timestamp, event_id), so that every
 *   report and listing reads one project's time range by the primary index, and partitioned by the
 *   UTC month of `timestamp`, so that retention drops whole months (`clickhouse-retention.ts`).
 *   Replacing: two processes that store the same event at the same instant (a beacon beside the
 *   worker's send, behind a load balancer) each pass the insert-time check; their copies share the
 *   sort key (the id, and the time the client stamped) and merge into one, and reads say `FINAL`
 *   until they have.
 * - `event_ids`: (project_id, event_id) in the order of the dedupe key, filled by a materialized
 *   view in the same INSERT as `events`: the insert-time check reads it by the primary index, as
 *   `events` is not ordered by the id.
 * - `recording_chunks`: ordered by the chunk's key (project_id, session_id, event_offset), so a
 *   replay and the insert-time check read by the primary index; partitioned by the month of
 *   arrival, which retention compares. `event_offset` is a Float64: the wire allows any integer
 *   offset, beyond 64 bits too, as the other stores keep it.
 *
 * Every table writes its parts with `fsync_after_insert` and `fsync_part_directory`: an insert is
 * answered after its part is on disk, as a SQLite or PostgreSQL commit is.
 */

/** The schema version this server writes and reads. */
export const CLICKHOUSE_SCHEMA_VERSION = 2;

/** The UTC month of an epoch-ms column, `YYYYMM`: the partition of a row. */
export const monthOf = (column: string): string => `toYYYYMM(fromUnixTimestamp64Milli(${column}, 'UTC'))`;

const DURABLE = 'SETTINGS fsync_after_insert = 1, fsync_part_directory = 1';

/**
 * A database name checked to be a plain identifier (letters, digits, `_`): it is written into
 * statements as it is, so it must need no quoting (chDB's insert accepts no quoted name either).
 */
export function checkDatabaseName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`The ClickHouse database name "${name}" must be letters, digits and _ (not starting with a digit).`);
  return name;
}

/** The database-qualified names of the store's tables. */
export interface ClickHouseTables {
  /** The database's name, for statements and for `system` tables. */
  database: string;
  events: string;
  eventIds: string;
  chunks: string;
  schemaVersion: string;
}

/** The tables of the store in database `database`. */
export function tablesOf(database: string): ClickHouseTables {
  const db = checkDatabaseName(database);
  return {
    database: db,
    events: `${db}.events`,
    eventIds: `${db}.event_ids`,
    chunks: `${db}.recording_chunks`,
    schemaVersion: `${db}.schema_version`,
  };
}

/** The report columns of `events`, with their types: a column per dimension of `EventDimensions`. */
export const REPORT_COLUMN_TYPES: ReadonlyArray<readonly [column: string, type: string]> = [
  ['path', 'Nullable(String)'],
  ['host', 'LowCardinality(Nullable(String))'],
  ['referrer_host', 'Nullable(String)'],
  ['channel', 'LowCardinality(Nullable(String))'],
  ['utm_source', 'Nullable(String)'],
  ['utm_medium', 'Nullable(String)'],
  ['utm_campaign', 'Nullable(String)'],
  ['browser', 'LowCardinality(Nullable(String))'],
  ['os', 'LowCardinality(Nullable(String))'],
  ['device', 'LowCardinality(Nullable(String))'],
  ['screen_class', 'LowCardinality(Nullable(String))'],
  ['anonymous_id', 'Nullable(String)'],
  ['country', 'LowCardinality(Nullable(String))'],
];

/** The statements of each version's step, by version. */
export const CLICKHOUSE_MIGRATIONS: Readonly<Record<number, (t: ClickHouseTables) => string[]>> = {
  1: (t) => [
    `CREATE TABLE IF NOT EXISTS ${t.events} (
  project_id String,
  event_id String,
  event_type LowCardinality(String),
  user_id Nullable(String),
  session_id Nullable(String),
  timestamp Int64,
  client_timestamp Nullable(Int64),
  received_at Int64,
  properties String,
  user_agent Nullable(String),
  ip_address Nullable(String),
  is_bot Bool,
  visitor_id Nullable(String),
${REPORT_COLUMN_TYPES.map(([column, type]) => `  ${column} ${type}`).join(',\n')}
) ENGINE = ReplacingMergeTree
PARTITION BY ${monthOf('timestamp')}
ORDER BY (project_id, timestamp, event_id)
${DURABLE}`,
    `CREATE TABLE IF NOT EXISTS ${t.eventIds} (
  project_id String,
  event_id String,
  timestamp Int64
) ENGINE = ReplacingMergeTree
PARTITION BY ${monthOf('timestamp')}
ORDER BY (project_id, event_id)
${DURABLE}`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${t.database}.event_ids_mv TO ${t.eventIds}
AS SELECT project_id, event_id, timestamp FROM ${t.events}`,
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (
  project_id String,
  session_id String,
  event_offset Float64,
  events String,
  event_count UInt32,
  duration Float64,
  start_url Nullable(String),
  user_id Nullable(String),
  is_final Bool,
  received_at Int64
) ENGINE = ReplacingMergeTree
PARTITION BY ${monthOf('received_at')}
ORDER BY (project_id, session_id, event_offset)
${DURABLE}`,
  ],
  // Skip indexes for the reads by user and by session (erasure, the read API's filters): without
  // them a project's whole range is read for one user. Existing parts get them by a background
  // mutation (MATERIALIZE INDEX), so the start does not wait for a rewrite of every part; until a
  // part has it, that part is read as before.
  2: (t) => [
    `ALTER TABLE ${t.events} ADD INDEX IF NOT EXISTS events_by_user user_id TYPE bloom_filter(0.01) GRANULARITY 4`,
    `ALTER TABLE ${t.events} ADD INDEX IF NOT EXISTS events_by_session session_id TYPE bloom_filter(0.01) GRANULARITY 4`,
    `ALTER TABLE ${t.events} MATERIALIZE INDEX events_by_user`,
    `ALTER TABLE ${t.events} MATERIALIZE INDEX events_by_session`,
  ],
};

/** The statements that make the database and the version table, before the version is read. */
export const schemaBaseStatements = (t: ClickHouseTables): string[] => [
  `CREATE DATABASE IF NOT EXISTS ${t.database}`,
  `CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (version UInt32, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = MergeTree ORDER BY version`,
];
