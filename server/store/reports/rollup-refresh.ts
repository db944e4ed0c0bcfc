import type Database from 'better-sqlite3';
import type pg from 'pg';
import { inTransaction } from '../postgres/postgres-transaction.js';
import type { Dialect } from './dialect.js';
import { DIMENSION_COLUMNS, FILTER_DIMENSIONS, type FilterDimension } from '../report-store.js';
import { DAY_MS, HOLDER_COLUMNS, HOLDER_INDEXES, markLockSql } from './rollup-schema.js';
import { vitalStepSql } from '../shared/vital-steps.js';
import { vitalCountsSql } from './vital-counts.js';
import { weekOfDaySql } from '../aggregates/aggregate-schema.js';

/*
 * Recomputing one marked (project, day) from its raw events (docs/decisions.md, "Daily rollups"):
 * the day's rollup rows are deleted and built again from the events of that day, and its mark is
 * removed, in one transaction. A rollup is so exact by construction, whatever happened to the day
 * (late events, duplicates refused by the insert, erasure, retention): it is a function of the rows
 * the day holds when the transaction reads them.
 */

/** A day that was refreshed. */
export interface RefreshedDay {
  projectId: string;
  /** UTC day number (ms / 86,400,000). */
  day: number;
  /** The day changed while it was computed: it stays marked, for a later refresh. */
  changed?: boolean;
}

/**
 * Refreshes the next marked day before `beforeDay` (newest first), passing over the days of `skip`
 * ({@link dayKey}s); null when there is none.
 */
export type RefreshNext = (beforeDay: number, skip?: readonly string[]) => Promise<RefreshedDay | null>;

/**
 * A (project, day) as one string, `project:day`, as the refreshes match it in SQL
 * (`project_id || ':' || day`); unambiguous, the day being the digits after the last colon.
 */
export const dayKey = (projectId: string, day: number): string => `${projectId}:${day}`;

/** The vitals of `rollup_vitals`, by their report keys. */
export const VITAL_KEYS = ['lcp', 'inp', 'cls', 'fcp'] as const;

/** Every `dim` of `rollup_values`: '' (all events) and each filter dimension. */
export const ROLLUP_DIMS: readonly string[] = ['', ...FILTER_DIMENSIONS];

/** The `kind` of an event's `rollup_steps` row (`rollup-schema.ts`): 0 a page view of a path, 1 one without, 2 any other event. */
const STEP_KIND = "CASE WHEN event_type = 'page_view' THEN CASE WHEN path IS NULL THEN 1 ELSE 0 END ELSE 2 END";

/** The `value` of an event's `rollup_steps` row: the path of a page view ('' without one), else the event type. */
const STEP_VALUE = "CASE WHEN event_type = 'page_view' THEN COALESCE(path, '') ELSE event_type END";

/** What a day's refresh reads of each event: the columns and the few properties the rollups keep. */
function dayColumns(dialect: Dialect): string {
  const prop = (type: string, expression: string) => `CASE WHEN event_type = '${type}' THEN ${expression} END`;
  return `event_id, event_type, session_id, timestamp, is_bot, COALESCE(anonymous_id, visitor_id) AS visitor, visitor_id AS visitor_hash,
    ${Object.values(DIMENSION_COLUMNS).filter((c) => c !== 'event_type').join(', ')},
    ${prop('error', `COALESCE(${dialect.textProperty('message')}, '')`)} AS message, ${prop('error', dialect.textProperty('stack'))} AS stack,
    ${prop('performance', dialect.numberProperty('largestContentfulPaint'))} AS lcp,
    ${prop('performance', dialect.numberProperty('interactionToNextPaint'))} AS inp,
    ${prop('performance', dialect.numberProperty('cumulativeLayoutShift'))} AS cls,
    ${prop('performance', dialect.numberProperty('firstContentfulPaint'))} AS fcp,
    ${prop('experiment_exposure', dialect.textProperty('experiment'))} AS experiment,
    ${prop('experiment_exposure', `COALESCE(${dialect.textProperty('variant')}, '')`)} AS variant`;
}

/** The rollup tables a refresh writes. */
const ROLLUP_TABLES = ['rollup_values', 'rollup_errors', 'rollup_vitals', 'rollup_exposures', 'rollup_steps'] as const;

/** The columns of a `rollup_values` group before its keys become ids (`groupsSql`). */
const GROUP_COLUMNS = 'dim, value, is_bot, session_id, visitor, visitor_hash, events, page_views, first_ts, last_ts';

/**
 * The `rollup_values` groups of one day from `src` (the day's rows of {@link dayColumns}), with
 * their session and visitors still as text: {@link GROUP_COLUMNS}.
 */
function groupsSql(src: string): string {
  const visits = ROLLUP_DIMS.map((dim) => {
    const column = dim === '' ? "''" : DIMENSION_COLUMNS[dim as FilterDimension];
    const where = dim === '' ? '' : ` WHERE ${column} IS NOT NULL`;
    return `SELECT '${dim}' AS dim, ${column} AS value, is_bot, session_id, visitor, visitor_hash, event_type, timestamp FROM ${src}${where}`;
  }).join('\n      UNION ALL ');
  return `SELECT dim, value, is_bot, session_id, visitor, visitor_hash, COUNT(*) AS events,
       SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS page_views, MIN(timestamp) AS first_ts, MAX(timestamp) AS last_ts
     FROM (${visits}) v
     GROUP BY dim, value, is_bot, session_id, visitor, visitor_hash`;
}

/**
 * The distinct keys (sessions, visitors of both kinds) of the groups in `groups`, as column `k`:
 * those of dimension '', which groups every event of the day.
 */
const groupKeysSql = (groups: string): string =>
  ['session_id', 'visitor', 'visitor_hash'].map((column) => `SELECT ${column} AS k FROM ${groups} WHERE dim = '' AND ${column} IS NOT NULL`).join(' UNION ');

/**
 * The INSERT of a day's `rollup_values` rows from the text-keyed groups in `groups`, each key
 * replaced by its id in `ids` (a table or CTE of `id, key`).
 */
function valuesInsert(into: string, groups: string, ids: string, p: string, d: string): string {
  return `INSERT INTO ${into} (project_id, dim, day, value, is_bot, session_id, visitor, visitor_hash, events, page_views, first_ts, last_ts)
     SELECT ${p}, g.dim, ${d}, g.value, g.is_bot, s.id, v.id, h.id, g.events, g.page_views, g.first_ts, g.last_ts
     FROM ${groups} g LEFT JOIN ${ids} s ON s.key = g.session_id LEFT JOIN ${ids} v ON v.key = g.visitor LEFT JOIN ${ids} h ON h.key = g.visitor_hash
     ORDER BY g.dim, g.value`;
}

/**
 * The INSERT of a day's `rollup_exposures` rows from `src` (the day's rows of {@link dayColumns}),
 * each visitor key replaced by its id in `ids` (as {@link valuesInsert}: every event's keys are
 * among those of the groups of dimension '').
 */
function exposuresInsert(into: string, src: string, ids: string, p: string, d: string): string {
  return `INSERT INTO ${into} (project_id, day, is_bot, experiment, variant, visitor, visitor_hash, first_ts)
     SELECT ${p}, ${d}, x.is_bot, x.experiment, x.variant, v.id, h.id, x.first_ts FROM (
       SELECT is_bot, experiment, variant, visitor, visitor_hash, MIN(timestamp) AS first_ts FROM ${src}
       WHERE event_type = 'experiment_exposure' AND experiment IS NOT NULL GROUP BY is_bot, experiment, variant, visitor, visitor_hash) x
     LEFT JOIN ${ids} v ON v.key = x.visitor LEFT JOIN ${ids} h ON h.key = x.visitor_hash`;
}

/**
 * The rollup rows of one day but `rollup_values` and `rollup_exposures`, as INSERT … SELECT from `src` (the day's rows of
 * {@link dayColumns}); `p`, `d` name project and day; `into` names the table written in place of
 * each rollup table.
 */
function rollupInserts(dialect: Dialect, src: string, p: string, d: string, into: (table: string) => string = (table) => table): string[] {
  const key = 'is_bot, message, visitor, visitor_hash';
  return [
    `INSERT INTO ${into('rollup_errors')} (project_id, day, is_bot, message, visitor, visitor_hash, n, last_ts, last_event_id, last_stack)
     SELECT ${p}, ${d}, is_bot, message, visitor, visitor_hash, n, timestamp, event_id, stack FROM (
       SELECT ${key}, timestamp, event_id, stack,
         ROW_NUMBER() OVER (PARTITION BY ${key} ORDER BY timestamp DESC, event_id DESC) AS rn, COUNT(*) OVER (PARTITION BY ${key}) AS n
       FROM ${src} WHERE event_type = 'error') r WHERE rn = 1`,
    // A value its rounding leaves null (SQLite's NaN) is not counted, as the report over the events does not count it.
    `INSERT INTO ${into('rollup_vitals')} (project_id, metric, day, path, is_bot, n, counts)
     SELECT ${p}, metric, ${d}, path, is_bot, SUM(n), ${vitalCountsSql(dialect)} FROM (
       SELECT is_bot, path, metric, value, COUNT(*) AS n FROM (
         SELECT is_bot, path, '' AS metric, 0 AS value FROM ${src} WHERE event_type = 'performance' AND path IS NOT NULL
         ${VITAL_KEYS.map((k) => `UNION ALL SELECT is_bot, path, '${k}', ${vitalStepSql(k)} FROM ${src} WHERE event_type = 'performance' AND path IS NOT NULL AND ${k} IS NOT NULL`).join('\n         ')}) v
       WHERE value IS NOT NULL GROUP BY is_bot, path, metric, value) c
     GROUP BY is_bot, path, metric`,
    `INSERT INTO ${into('rollup_steps')} (project_id, day, kind, value, event_id, is_bot, session_id, ts)
     SELECT ${p}, ${d}, ${STEP_KIND}, ${STEP_VALUE}, event_id, is_bot, session_id, timestamp FROM ${src} WHERE session_id IS NOT NULL
     ORDER BY 3, 4, 5`,
  ];
}

/** Deletes of a day's rollup rows; `rollup_values` and `rollup_vitals` through their keys, one `dim` or vital at a time. */
function rollupDeletes(p: string, d: string): string[] {
  return [
    `DELETE FROM rollup_values WHERE project_id = ${p} AND dim IN (${ROLLUP_DIMS.map((dim) => `'${dim}'`).join(', ')}) AND day = ${d}`,
    `DELETE FROM rollup_vitals WHERE project_id = ${p} AND metric IN (${['', ...VITAL_KEYS].map((k) => `'${k}'`).join(', ')}) AND day = ${d}`,
    ...['rollup_errors', 'rollup_exposures', 'rollup_steps', 'rollup_filtered', 'rollup_kept_sessions'].map((table) => `DELETE FROM ${table} WHERE project_id = ${p} AND day = ${d}`),
    // The day's week of kept filtered rows was merged from the day's, and kept spans over it from its pieces.
    `DELETE FROM rollup_filtered_weeks WHERE project_id = ${p} AND week = ${weekOfDaySql(`CAST(${d} AS INTEGER)`)}`,
    `DELETE FROM rollup_kept_spans WHERE project_id = ${p} AND last_day >= ${d} AND first_day <= ${d}`,
  ];
}

/** The ids of keys that day `d`'s rows of dimension '' hold: every key of the day (they group every event). */
const dayKeyIdsSql = (p: string, d: string): string =>
  HOLDER_COLUMNS.map((column) => `SELECT ${column} AS id FROM rollup_values WHERE project_id = ${p} AND dim = '' AND day = ${d}`).join(' UNION ');

/**
 * The events day `d`'s rows counted at its last build (null before its first). Its refresh looks
 * for keys to release only when the day has fewer now: events were deleted (retention, an
 * erasure), so its rows may hold keys no event has any more. A day that only gained events (late
 * ones) keeps every key it had, and its refresh skips the release. A day whose deletes were made
 * up for by late events before its refresh keeps the keys of the deleted ones: space, never a
 * count, as no row holds them.
 */
const dayEventsSql = (p: string, d: string): string => `SELECT SUM(events) FROM rollup_values WHERE project_id = ${p} AND dim = '' AND day = ${d}`;

/**
 * Takes out of the project's key dictionary the keys of `gone` (a query of ids: those day `d`'s
 * rows held before its refresh and hold no more) that no other day's rows hold, so that the
 * dictionary does not keep every key a project ever had while retention cuts its events, a slice
 * an hour. A row of another day that holds one is found through the holder indexes
 * (`rollup-schema.ts`), a seek per key, never over the project's rows; marked days count, as their
 * rows hold the ids until their refresh replaces them. `indexed` names the index for SQLite, whose
 * planner does not take a partial index by itself here.
 */
function releaseKeysSql(p: string, d: string, gone: string, indexed: (index: string) => string = () => ''): string {
  const elsewhere = HOLDER_COLUMNS.map(
    (column) => `NOT EXISTS (SELECT 1 FROM rollup_values ${indexed(HOLDER_INDEXES[column])} WHERE project_id = ${p} AND dim = '' AND ${column} = gone.id AND day <> ${d})`,
  );
  return `DELETE FROM rollup_keys WHERE project_id = ${p} AND id IN (SELECT id FROM (${gone}) gone WHERE id IS NOT NULL AND ${elsewhere.join(' AND ')})`;
}

/** Rolls a PostgreSQL refresh back, its day left marked for a later call. */
class BuildAgain extends Error {}

/**
 * Counts a refresh of the day in `rollup_versions`: filtered rows computed from a snapshot before
 * it are refused when they come to be kept (`filtered-tops.ts`).
 */
const versionBump = (p: string, d: string): string =>
  `INSERT INTO rollup_versions (project_id, day, version) VALUES (${p}, ${d}, 1)
   ON CONFLICT (project_id, day) DO UPDATE SET version = rollup_versions.version + 1`;

/** The statements of the SQLite refresh, as text: they travel to the refresh thread. */
export interface SqliteRefreshSql {
  setup: string[];
  next: string;
  marksOf: string;
  unmark: string;
  /** The largest key id (0 when none). */
  lastKey: string;
  clears: string[];
  load: string;
  computes: string[];
  deletes: string[];
  installs: string[];
  /** {@link releaseKeysSql} of the keys the compute found the day's rows hold and its new rows will not, before the deletes. */
  release: string;
  /** A mark on every other marked day of the project, after a release that took keys out. */
  markOthers: string;
}

/**
 * The SQLite refresh's statements over `dialect`. The day's `rollup_values` groups are computed
 * with text keys (`temp.rollup_staged_groups`); each of their keys gets its id from the dictionary
 * or, when new, `@base + n` (n its ordinal among the day's keys, @base the largest id the snapshot
 * saw) in `temp.rollup_staged_keys`; the new keys are installed with the rows.
 */
export function sqliteRefreshSql(dialect: Dialect): SqliteRefreshSql {
  const staged = (table: string) => `temp.${table.replace('rollup_', 'rollup_staged_')}`;
  return {
    setup: [
      `CREATE TEMP TABLE IF NOT EXISTS rollup_day AS SELECT ${dayColumns(dialect)} FROM events WHERE 0`,
      `CREATE TEMP TABLE IF NOT EXISTS rollup_staged_groups AS SELECT * FROM (${groupsSql('temp.rollup_day')}) WHERE 0`,
      'CREATE TEMP TABLE IF NOT EXISTS rollup_staged_keys (n INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, id INTEGER)',
      'CREATE TEMP TABLE IF NOT EXISTS rollup_gone_keys (id INTEGER PRIMARY KEY)',
      ...ROLLUP_TABLES.map((table) => `CREATE TEMP TABLE IF NOT EXISTS ${staged(table).slice(5)} AS SELECT * FROM main.${table} WHERE 0`),
    ],
    next: `SELECT project_id, day, marks FROM rollup_dirty
      WHERE day < ? AND project_id || ':' || day NOT IN (SELECT value FROM json_each(?)) ORDER BY day DESC, project_id LIMIT 1`,
    marksOf: 'SELECT marks FROM rollup_dirty WHERE project_id = ? AND day = ?',
    unmark: 'DELETE FROM rollup_dirty WHERE project_id = ? AND day = ?',
    lastKey: 'SELECT COALESCE(MAX(id), 0) FROM main.rollup_keys',
    clears: ['temp.rollup_day', 'temp.rollup_staged_groups', 'temp.rollup_staged_keys', 'temp.rollup_gone_keys', ...ROLLUP_TABLES.map(staged)].map((table) => `DELETE FROM ${table}`),
    load: `INSERT INTO temp.rollup_day SELECT ${dayColumns(dialect)} FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?`,
    computes: [
      `INSERT INTO temp.rollup_staged_groups (${GROUP_COLUMNS}) ${groupsSql('temp.rollup_day')}`,
      `INSERT INTO temp.rollup_staged_keys (key, id)
       SELECT k, (SELECT id FROM main.rollup_keys WHERE project_id = @p AND key = k) FROM (${groupKeysSql('temp.rollup_staged_groups')})`,
      'UPDATE temp.rollup_staged_keys SET id = @base + n WHERE id IS NULL',
      valuesInsert(staged('rollup_values'), 'temp.rollup_staged_groups', 'temp.rollup_staged_keys', '@p', '@d'),
      exposuresInsert(staged('rollup_exposures'), 'temp.rollup_day', 'temp.rollup_staged_keys', '@p', '@d'),
      ...rollupInserts(dialect, 'temp.rollup_day', '@p', '@d', staged),
      // In the snapshot, not under the write lock: the keys the day's rows hold and its new rows
      // will not. The new rows take every id through the staged keys, so none of theirs is here.
      `INSERT INTO temp.rollup_gone_keys SELECT id FROM (SELECT id FROM (${dayKeyIdsSql('@p', '@d')}) held EXCEPT SELECT id FROM temp.rollup_staged_keys)
       WHERE id IS NOT NULL AND (${dayEventsSql('@p', '@d')}) > (SELECT COUNT(*) FROM temp.rollup_day)`,
    ],
    deletes: rollupDeletes('@p', '@d'),
    release: releaseKeysSql('@p', '@d', 'SELECT id FROM temp.rollup_gone_keys', (index) => `INDEXED BY ${index}`),
    // Another process computing a day of the project may have looked up a released key: its
    // count moves, so it drops its result and computes the day again, as after an erasure.
    markOthers: 'UPDATE rollup_dirty SET marks = marks + 1 WHERE project_id = @p AND day <> @d',
    installs: [
      'INSERT INTO main.rollup_keys (id, project_id, key) SELECT id, @p, key FROM temp.rollup_staged_keys WHERE id > @base',
      ...ROLLUP_TABLES.map((table) => `INSERT INTO main.${table} SELECT * FROM ${staged(table)}`),
      versionBump('@p', '@d'),
    ],
  };
}

/**
 * The SQLite refresh on connection `db`, in two transactions so that the write lock is held only
 * to install the result: the day is read and its rollup rows computed into temporary tables inside
 * a read transaction (one snapshot; writes to `temp` take no lock on the database, so the writer
 * thread goes on committing), then one short write transaction replaces the day's rows, adds the
 * day's new keys to the dictionary and removes its mark, if the mark's count and the largest key
 * id are still the ones the snapshot saw. If the count moved, events of the day committed
 * meanwhile; if the largest id moved, another process added keys whose ids the new ones could
 * take: either way the result is dropped and the day stays marked.
 *
 * It runs on the refresh thread (`rollup-sqlite-thread.ts`), which receives it as source text, so
 * it must stay self-contained: nothing from outside its body and parameters but erased types.
 */
export function prepareSqliteRefresh(
  db: Database.Database,
  sql: SqliteRefreshSql,
  dayMs: number,
): (beforeDay: number, skip?: readonly string[]) => RefreshedDay | null {
  for (const statement of sql.setup) db.exec(statement);
  const next = db.prepare(sql.next);
  const marksOf = db.prepare(sql.marksOf).pluck();
  const unmark = db.prepare(sql.unmark);
  const lastKey = db.prepare(sql.lastKey).pluck();
  const clears = sql.clears.map((text) => db.prepare(text));
  const load = db.prepare(sql.load);
  const computes = sql.computes.map((text) => db.prepare(text));
  const deletes = sql.deletes.map((text) => db.prepare(text));
  const installs = sql.installs.map((text) => db.prepare(text));
  const release = db.prepare(sql.release);
  const markOthers = db.prepare(sql.markOthers);
  type Marked = { project_id: string; day: number; marks: number; base: number };
  const values = (row: Marked) => ({ p: row.project_id, d: row.day, base: row.base });
  const clear = () => {
    for (const statement of clears) statement.run();
  };
  const compute = db.transaction((beforeDay: number, skip: string): Marked | null => {
    const found = next.get(beforeDay, skip) as Omit<Marked, 'base'> | undefined;
    if (found === undefined) return null;
    const row: Marked = { ...found, base: lastKey.get() as number };
    clear();
    load.run(row.project_id, row.day * dayMs, (row.day + 1) * dayMs);
    for (const statement of computes) statement.run(values(row));
    return row;
  });
  const install = db.transaction((row: Marked): boolean => {
    if (marksOf.get(row.project_id, row.day) !== row.marks || lastKey.get() !== row.base) return false;
    const day = { p: row.project_id, d: row.day };
    if (release.run(day).changes > 0) markOthers.run(day);
    for (const statement of deletes) statement.run(values(row));
    for (const statement of installs) statement.run(values(row));
    unmark.run(row.project_id, row.day);
    return true;
  });
  return (beforeDay, skip = []) => {
    try {
      const row = compute(beforeDay, JSON.stringify(skip));
      if (row === null) return null;
      const installed = install.immediate(row);
      return installed ? { projectId: row.project_id, day: row.day } : { projectId: row.project_id, day: row.day, changed: true };
    } finally {
      clear();
    }
  };
}

/** The SQLite refresh on the calling thread's connection (an in-memory database, which no other thread can open). */
export function createSqliteRollupRefresh(db: Database.Database, dialect: Dialect): RefreshNext {
  const refresh = prepareSqliteRefresh(db, sqliteRefreshSql(dialect), DAY_MS);
  return async (beforeDay, skip) => refresh(beforeDay, skip);
}

/**
 * Opens a build's or a keep's transaction to no statement timeout, whatever the role or database
 * sets: a day's build may take as long as it takes, and a cancel is an erasure's.
 */
export const NO_TIMEOUT = 'SET LOCAL statement_timeout = 0';

/**
 * The refresh's transaction. JIT compilation off, as for reads (`postgres-read-run.ts`): the
 * planner's estimates of the build's joins (its CTEs' row counts are guesses) reach billions and
 * turn on JIT with inlining and optimization, which took 3.3 s of an 8.6 s build of a day of
 * 111,000 events, for a statement that is not CPU-bound per row.
 */
const REFRESH_BEGIN = `BEGIN; SET LOCAL jit = off; ${NO_TIMEOUT}`;

/** The lock of a project's key dictionary (`rollup_keys`), held by a refresh from its build to its commit. */
export const KEYS_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('rollup-keys:' || $1::text))";

/**
 * The `application_name` of the connections that build days and keep filtered rows on PostgreSQL,
 * a pool of their own (`postgres-store.ts`) so that an erasure's cancel of a build that has just
 * committed (`rollup-erasure.ts`) can only reach another build: how they show in `pg_stat_activity`.
 */
export const BUILD_APPLICATION_NAME = 'service-analytics rollup build';

/**
 * Whether `error` is a refresh's or a keep's statement cancelled by an erasure, which drops a
 * build in flight rather than wait for it (`rollup-erasure.ts`): the transaction rolled back, the
 * day stays marked and is built again later. PostgreSQL's `query_canceled`, which a statement
 * timeout raises too: builds and keeps run without one ({@link NO_TIMEOUT}).
 */
export const isDroppedBuild = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '57014';

/**
 * The PostgreSQL refresh, in one transaction that holds no lock a writer waits for until its very
 * end. A day is claimed with a transaction-scoped advisory lock (several processes refresh
 * different days at once). One statement deletes the day's marks and reads its events and writes
 * the new rollup rows, under one snapshot: the marks it deletes are exactly those of the commits
 * it sees (`rollup-schema.ts`: marks are insert-only, one row per marking). Then it takes the
 * day's mark lock, which waits for markings in flight (they hold it shared until their commit)
 * and holds off new ones for a moment, and removes the day from `rollup_dirty` only if no mark is
 * left: a commit after the snapshot left its mark, so the day stays marked for a later refresh.
 *
 * The day's new session and visitor keys are added to the project's dictionary by the same
 * statement, under a lock of the dictionary taken before the day's rows are deleted: refreshes of
 * one project's days build one after the other (those of different projects still at once), and
 * an erasure, which takes the same lock, never runs between a refresh's delete and its commit
 * (it drops a refresh holding the lock: the statement cancelled, the transaction rolled back).
 * Each of the day's keys is looked up on its own, through the dictionary's index: joined, the
 * planner hashed the project's whole dictionary (3.6 million keys at 10 million events) to find a
 * day's 45,000.
 *
 * Marks of the days a call does not refresh (today, under steady ingest) are one row per group
 * commit; each call deletes those its snapshot sees, for days it can claim (a claimed day has no
 * refresh in flight whose snapshot could miss one), so the table stays small. The day stays in
 * `rollup_dirty`; any later refresh sees those commits.
 */
export function createPostgresRollupRefresh(pool: pg.Pool, dialect: Dialect): RefreshNext {
  const build = `WITH seen AS (DELETE FROM rollup_marks WHERE project_id = $1 AND day = $2 RETURNING 1),
    src AS MATERIALIZED (SELECT ${dayColumns(dialect)} FROM events WHERE project_id = $1 AND timestamp >= $3 AND timestamp < $4),
    groups AS MATERIALIZED (${groupsSql('src')}),
    keys AS MATERIALIZED (${groupKeysSql('groups')}),
    looked AS MATERIALIZED (SELECT key, (SELECT r.id FROM rollup_keys r WHERE r.project_id = $1 AND r.key = looking.key) AS id
      FROM (SELECT ${dialect.asDictionaryKey('k')} AS key FROM keys) looking),
    added AS (INSERT INTO rollup_keys (project_id, key) SELECT $1, key FROM looked WHERE id IS NULL RETURNING id, key),
    ids AS MATERIALIZED (SELECT id, key FROM looked WHERE id IS NOT NULL UNION ALL SELECT id, key FROM added),
    ${[
      valuesInsert('rollup_values', 'groups', 'ids', '$1::text', '$2::int'),
      exposuresInsert('rollup_exposures', 'src', 'ids', '$1::text', '$2::int'),
      ...rollupInserts(dialect, 'src', '$1::text', '$2::int'),
    ]
      .map((sql, i) => `w${i} AS (${sql})`)
      .join(',\n    ')}
    SELECT (SELECT count(*) FROM seen) AS marks, (SELECT count(*) FROM src) AS events`;
  const compact = `WITH later AS MATERIALIZED (SELECT project_id, day FROM rollup_dirty WHERE day >= $1::bigint ORDER BY project_id, day),
    claimed AS MATERIALIZED (SELECT project_id, day FROM later WHERE pg_try_advisory_xact_lock(hashtext('rollup:' || project_id), day))
    DELETE FROM rollup_marks m USING claimed c WHERE m.project_id = c.project_id AND m.day = c.day`;
  const deletes = rollupDeletes('$1', '$2');
  const heldIds = `SELECT old.n AS old, CASE WHEN old.n > (SELECT COUNT(*) FROM events WHERE project_id = $1 AND timestamp >= $3 AND timestamp < $4)
    THEN (SELECT array_agg(id) FROM (${dayKeyIdsSql('$1', '$2::int')}) held WHERE id IS NOT NULL) END AS ids FROM (${dayEventsSql('$1', '$2::int')}) AS old (n)`;
  const release = releaseKeysSql('$1', '$2::int', `SELECT unnest($3::bigint[]) AS id EXCEPT SELECT id FROM (${dayKeyIdsSql('$1', '$2::int')}) held`);
  const bump = versionBump('$1::text', '$2::int');
  /** Days this process refreshed since a call last found no marked day left to refresh. */
  let run = 0;
  let analyzedAt = -Infinity;
  /** A day refreshed, or null with `drained` when no marked day is left (rather than held by other refreshes). */
  const refresh = (beforeDay: number, skip: readonly string[] = []) =>
    inTransaction(pool, REFRESH_BEGIN, async (client): Promise<{ refreshed: RefreshedDay | null; drained: boolean }> => {
      await client.query(compact, [beforeDay]);
      const candidates = await client.query<{ project_id: string; day: number }>(
        `SELECT project_id, day FROM rollup_dirty WHERE day < $1::bigint AND NOT (project_id || ':' || day = ANY($2::text[]))
         ORDER BY day DESC, project_id LIMIT 16`,
        [beforeDay, skip],
      );
      let row: { project_id: string; day: number } | undefined;
      for (const candidate of candidates.rows) {
        const claim = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock(hashtext('rollup:' || $1::text), $2::int) AS ok", [
          candidate.project_id,
          candidate.day,
        ]);
        if (claim.rows[0]?.ok === true) {
          row = candidate;
          break;
        }
      }
      if (row === undefined) return { refreshed: null, drained: candidates.rows.length === 0 };
      const { project_id: projectId, day } = row;
      // The project's dictionary has one writer at a time, and the build's snapshot, taken after
      // this lock, sees every key a previous holder added: a new key is then new for good. Taken
      // before the day's rows are deleted: an erasure (`rollup-erasure.ts`) takes it and then
      // deletes rollup rows, so holding row locks while waiting for it would deadlock.
      await client.query(KEYS_LOCK_SQL, [projectId]);
      // The keys the day's rows hold before and after its build, when it lost events: those it no
      // longer holds leave the dictionary if no other day holds them, under the lock, so a refresh
      // of another day of the project looks its keys up after this commits.
      const before = (await client.query<{ old: string | null; ids: string[] | null }>(heldIds, [projectId, day, day * DAY_MS, (day + 1) * DAY_MS])).rows[0] ?? {
        old: null,
        ids: null,
      };
      for (const sql of deletes) await client.query(sql, [projectId, day]);
      await client.query(bump, [projectId, day]);
      const built = await client.query<{ events: string }>(build, [projectId, day, day * DAY_MS, (day + 1) * DAY_MS]);
      if (before.ids !== null) await client.query(release, [projectId, day, before.ids]);
      // A delete committed between the look and the build (its own snapshot): the keys it took are
      // not known here, and once the day is clean nothing would look again. Built later instead.
      else if (before.old !== null && Number(built.rows[0]?.events) < Number(before.old)) throw new BuildAgain();
      await client.query(`SELECT pg_advisory_xact_lock(${markLockSql('$1::text', '$2::int')})`, [projectId, day]);
      const unmarked = await client.query(
        'DELETE FROM rollup_dirty WHERE project_id = $1 AND day = $2 AND NOT EXISTS (SELECT 1 FROM rollup_marks WHERE project_id = $1 AND day = $2)',
        [projectId, day],
      );
      // Kept either way (committed): the rows are the day as the snapshot saw it, and a day still marked is read from the events.
      return { refreshed: (unmarked.rowCount ?? 0) === 0 ? { projectId, day, changed: true } : { projectId, day }, drained: false };
    });
  return async (beforeDay, skip) => {
    // A build an erasure dropped is taken again at a later call: the day is still marked.
    const { refreshed, drained } = await refresh(beforeDay, skip).catch((error: unknown) => {
      if (isDroppedBuild(error) || error instanceof BuildAgain) return { refreshed: null, drained: false };
      throw error;
    });
    if (refreshed !== null) {
      run++;
      return refreshed;
    }
    if (!drained) return null;
    // A run of many days (the first build after an upgrade or a bulk load) has filled the tables
    // faster than autovacuum analyzes them: without statistics, the planner took the experiment
    // report's first read at 1M events for a few rows and ran it past the read budget. At most
    // once an hour: many projects' yesterdays also make runs of a week of days.
    const days = run;
    // Before the await: the store's background and a caller may both find none at once.
    run = 0;
    if (days >= ANALYZE_AFTER_DAYS && Date.now() - analyzedAt >= ANALYZE_EVERY_MS) {
      analyzedAt = Date.now();
      await inTransaction(pool, `BEGIN; ${NO_TIMEOUT}`, (client) => client.query(`ANALYZE rollup_keys, ${ROLLUP_TABLES.join(', ')}`)).catch((error: unknown) => {
        // An erasure's cancel meant for the build this connection ran before: analyzed next time.
        if (!isDroppedBuild(error)) throw error;
        analyzedAt = -Infinity;
      });
    }
    return null;
  };
}

/** Days a run of refreshes builds before PostgreSQL's rollup tables are analyzed at its end. */
export const ANALYZE_AFTER_DAYS = 7;
/** How often that happens at most, ms. */
const ANALYZE_EVERY_MS = 3_600_000;
