import type Database from 'better-sqlite3';
import type pg from 'pg';
import { SCHEMA_LOCK_SQL } from '../postgres/postgres-schema.js';
import { PROJECT_SPANS_SQL, type Span, spanDays } from '../shared/project-spans.js';
import { vitalStepSql } from '../shared/vital-steps.js';
import { POSTGRES_DIALECT, SQLITE_DIALECT, type Dialect } from './dialect.js';
import { vitalCountsSql } from './vital-counts.js';

/*
 * The daily rollups of the reports (docs/decisions.md, "Daily rollups"): derived tables, never the
 * truth. They live beside the schema rather than in it: created at every store open by idempotent
 * DDL, with a shape version of their own, so a change of shape drops and rebuilds them without a
 * schema migration. Marks record, in the very transaction that inserts, deletes or updates events,
 * which (project, UTC day) pairs changed: a mark commits or rolls back with the events, survives a
 * crash and is seen by every process. Triggers on `events` set them, except for SQLite's inserts,
 * which the group commit marks itself. A day is served from its rollup only
 * while it has no mark; `rollup-refresh.ts` recomputes a marked day from its raw events and
 * removes the mark.
 */

/**
 * Version of the rollup tables' shape; a database with another one gets them dropped and rebuilt,
 * except from {@link VITALS_ROUNDED_FROM}, {@link VITALS_PACKED_FROM} and
 * {@link EXPOSURES_KEYED_FROM}, whose rollups are converted in place. 9: `rollup_exposures` keeps
 * visitors as ids of the key dictionary, as `rollup_values` does, so that an experiment's
 * exposures meet its conversions on integers.
 */
export const ROLLUP_SHAPE = 9;

/**
 * The shape before `rollup_vitals` counted rounded values (`vital-steps.ts`): its counts are
 * rounded and merged in place, which needs no event read, rather than rebuilt from the events.
 */
const VITALS_ROUNDED_FROM = 6;

/**
 * The shape whose `rollup_vitals` had a row per rounded value, before one row held a day's counts
 * of a page and vital: its rows are packed in place, with no event read.
 */
const VITALS_PACKED_FROM = 7;

/**
 * The statements that pack the rows of `rollup_vitals` of {@link VITALS_PACKED_FROM} (rounded
 * first, from {@link VITALS_ROUNDED_FROM}) into a temporary table, and drop the table they were
 * in; {@link UNPACK_VITALS_SQL} fills the table of the current shape from it.
 */
function packVitalsSql(dialect: Dialect, round: boolean): string[] {
  const value = round ? vitalStepSql('value') : 'value';
  return [
    `CREATE TEMP TABLE packed_vitals AS SELECT project_id, day, is_bot, path, metric, SUM(n) AS n, ${vitalCountsSql(dialect)} AS counts
     FROM (SELECT project_id, day, is_bot, path, metric, ${value} AS value, SUM(n) AS n FROM rollup_vitals
       GROUP BY project_id, day, is_bot, path, metric, ${value}) v
     GROUP BY project_id, day, is_bot, path, metric`,
    'DROP TABLE rollup_vitals',
  ];
}

/** The statements that move the packed rows of {@link packVitalsSql} into `rollup_vitals` of the current shape. */
const UNPACK_VITALS_SQL = [
  'INSERT INTO rollup_vitals (project_id, day, is_bot, path, metric, n, counts) SELECT project_id, day, is_bot, path, metric, n, counts FROM packed_vitals',
  'DROP TABLE packed_vitals',
];

/**
 * The last shape whose `rollup_exposures` held visitors as text; from it (and the shapes before,
 * down to {@link VITALS_ROUNDED_FROM}) the rows get their visitors' ids from the key dictionary in
 * place, with no event read. A key the dictionary no longer holds (erased) is only on a day an
 * erasure marked, which no report reads before its refresh replaces the rows.
 */
const EXPOSURES_KEYED_FROM = 8;

/**
 * The statements that copy `rollup_exposures` of a shape before 9 into a temporary table, each
 * visitor's text replaced by its id, and drop the table; {@link UNKEY_EXPOSURES_SQL} fills the
 * table of the current shape from it.
 */
const KEY_EXPOSURES_SQL = [
  `CREATE TEMP TABLE keyed_exposures AS SELECT e.project_id, e.day, e.is_bot, e.experiment, e.variant, v.id AS visitor, h.id AS visitor_hash, e.first_ts
   FROM rollup_exposures e LEFT JOIN rollup_keys v ON v.project_id = e.project_id AND v.key = e.visitor
   LEFT JOIN rollup_keys h ON h.project_id = e.project_id AND h.key = e.visitor_hash`,
  'DROP TABLE rollup_exposures',
];

/** The statements that move the rows of {@link KEY_EXPOSURES_SQL} into `rollup_exposures` of the current shape. */
const UNKEY_EXPOSURES_SQL = [
  `INSERT INTO rollup_exposures (project_id, day, is_bot, experiment, variant, visitor, visitor_hash, first_ts)
   SELECT project_id, day, is_bot, experiment, variant, visitor, visitor_hash, first_ts FROM keyed_exposures`,
  'DROP TABLE keyed_exposures',
];

/** Whether a database of rollup shape `shape` is brought to the current one in place, and how. */
function inPlace(shape: number | undefined): { vitals: boolean; exposures: boolean } | null {
  if (shape === VITALS_ROUNDED_FROM || shape === VITALS_PACKED_FROM) return { vitals: true, exposures: true };
  if (shape === EXPOSURES_KEYED_FROM) return { vitals: false, exposures: true };
  return null;
}

/** Milliseconds in a UTC day. */
export const DAY_MS = 86_400_000;

/** The UTC day number of a time in ms, floored (also before 1970), in SQL both databases run. */
export const daySql = (ms: string): string => `((${ms}) - (((${ms}) % ${DAY_MS}) + ${DAY_MS}) % ${DAY_MS}) / ${DAY_MS}`;

/** The UTC day number of a time in ms. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** Every rollup table, dropped on a shape change. */
const ROLLUP_TABLES = [
  'rollup_keys', 'rollup_values', 'rollup_errors', 'rollup_vitals', 'rollup_exposures', 'rollup_steps', 'rollup_filtered', 'rollup_filtered_weeks', 'rollup_kept_sessions', 'rollup_kept_spans', 'rollup_versions', 'rollup_dirty', 'rollup_marks', 'rollup_meta',
];

/**
 * SQLite counts the marks of a day: a refresh computes a day outside the write lock and installs it
 * only if the count did not move meanwhile (`rollup-refresh.ts`). Inserts are marked by the group
 * commit itself, once per day it stored events in (`sqlite-event-writer.ts`): a row trigger's upsert
 * per event was a clear share of the writer's cost per event. Every other writer of SQLite
 * events must mark its days the same way (the bench's data generator does). The rare deletes and
 * updates (erasure, retention, the report-column backfill) keep their row triggers.
 */
const sqliteMark = (row: 'NEW' | 'OLD') =>
  `INSERT INTO rollup_dirty (project_id, day) VALUES (${row}.project_id, ${daySql(`${row}.timestamp`)})
   ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1;`;

/**
 * The days a key's events fall in, for an erasure (`rollup-erasure.ts`, step 2) and for a
 * refresh, which takes out of the dictionary the keys a day's rows no longer hold and no other
 * day's do (`rollup-refresh.ts`): the rows of dimension '' by visitor, by session and by daily
 * visitor hash, each an index seek per key rather than a pass over the project's sessions. The
 * hash needs its own: an event is hashed with the salt of the day it was received, so a late one
 * (an offline queue, a beacon sent after midnight) puts its hash on the day of its time, beside
 * another anonymous id than the one the hash has on the later day. Built at the first open of a
 * database without them, like every index here.
 */
export const HOLDER_INDEXES = { visitor: 'rollup_values_visitor_days', session_id: 'rollup_values_session_days', visitor_hash: 'rollup_values_hash_days' } as const;

/** The columns of `rollup_values` that hold a key's id, each with its holder index. */
export const HOLDER_COLUMNS = Object.keys(HOLDER_INDEXES) as ReadonlyArray<keyof typeof HOLDER_INDEXES>;

const HOLDER_INDEXES_DDL = HOLDER_COLUMNS.map(
  (column) => `CREATE INDEX IF NOT EXISTS ${HOLDER_INDEXES[column]} ON rollup_values (project_id, ${column}, day) WHERE dim = '';`,
).join('\n');

/*
 * rollup_keys: the project's dictionary of session and visitor keys (session ids, anonymous ids,
 * daily visitor hashes, in one namespace), each an integer id assigned by the refresh of the first
 * day that holds it. A key is removed by an erasure, which rebuilds every day that held it
 * (`rollup-erasure.ts`), and by the refresh of a day whose rows no longer hold it (its events
 * deleted by retention) when no other day's rows do (`rollup-refresh.ts`): the dictionary grows with
 * the events kept, not with every key a project ever had. An id is given again only once no row holds it, so an id in
 * a rollup row means one key while the row exists, and distinct counts over many days compare integers.
 * rollup_values: per project, day, dimension and value (dimension '' with value '' stands for every
 * event), bot flag, session and visitor (both keys, as ids of rollup_keys): events, page views,
 * first and last time. Fine enough to count distinct visitors and sessions over many days exactly,
 * and to get each session's span and page views; one dimension at a time, which is what the
 * default view and a single filter ask. On PostgreSQL one index ends with the value, so the rows of
 * one value (a filter, an experiment's conversion event) are picked out in the index, not read from
 * the table. On both, an index covers what the series, totals and top lists read (all but the hash
 * visitor and the times), so they need not read the table: on PostgreSQL an index-only scan of a
 * month's rows once autovacuum has marked the pages all-visible, where it chose a parallel scan of
 * the whole table before (bench/RESULTS.md, "Report panels"). On PostgreSQL a partial index of the
 * rows of dimension '' covers what the sessions panel reads of them (the times too); created by
 * `IF NOT EXISTS` like the rest, a database of an earlier version builds it at its next open, with
 * no rollup rebuilt (docs/decisions.md, "Daily rollups").
 * rollup_errors: per day, message and visitor, the count and the latest error with its stack.
 * rollup_vitals: one row per day, vital, page and bot flag: `n` samples, and in `counts` how many
 * of them had each value (rounded, `shared/vital-steps.ts`), as `value:count` pairs in value order,
 * comma-separated (`1250:3,1300:1`); as vital '', how many performance events the page had (`n`,
 * and `counts` their one value `0:n`). A percentile over many days merges the rows' counts and
 * walks them in value order (`vital-counts.ts`). One row for a day's values rather than a row per
 * value: a page and vital have a few hundred values, and a long range's panel spent nearly all of
 * its time grouping a row per (day, page, vital, value) (docs/decisions.md, "Daily rollups"). As
 * text: both databases build it in the refresh's own SQL (an ordered `group_concat` or
 * `string_agg`) and write a number as text that reads back as the same double, so Node walks the
 * very values the SQL rounded and compared, where arrays or JSON are built and read differently
 * on each. The key starts with (project, vital, day): the vital '' rows of a range, which pick
 * the top pages, are one contiguous read that passes over the other vitals' counts, and each
 * vital's rows another; a refresh deletes a day's rows one vital at a time, as `rollup_values`
 * one dimension at a time. On SQLite the table is clustered by that key: a range of days is a
 * contiguous read, where a secondary index by day cost a key lookup per row (bench/RESULTS.md,
 * "Report panels").
 * rollup_exposures: per day, experiment, variant and visitor (ids of the key dictionary), the first
 * exposure.
 * rollup_steps: what a funnel reads of each event with a session, keyed by what a step can match
 * (kind 0: a page view, value its path; kind 1: a page view without a path, value ''; kind 2:
 * any other event, value its type): a funnel reads only the rows of its steps' keys, one index
 * range per day and key, instead of every event of the range (docs/decisions.md, "Daily rollups").
 * The event id ends the key (SQLite's primary key, PostgreSQL's `rollup_steps_by_event`), so that
 * an erasure deletes its events' rows by seeks: through the key without it, PostgreSQL filtered
 * about 15,000 rows of a popular page's day per erased event at 10M events (bench/RESULTS.md).
 * rollup_filtered: per day, filter (a dimension and its value), top-list dimension, bot flag and
 * value, what that top list counts (page views for a page dimension, else events) and sketches of
 * their visitors, with one row of value null marking the (day, filter, dimension) as kept: written
 * by the first top list with that filter that reads the day, or ahead of it in the background for a
 * frequent value (`filtered-ahead.ts`), for every dimension, not by the refresh (`filtered-tops.ts`),
 * so a dashboard filtered the same way again reads a row per value and day (per week, below).
 * A refresh of the day deletes them (and an erasure those of the days it marks).
 * rollup_filtered_weeks: the same per week (`aggregate-schema.ts`'s weeks of seven days) of a
 * (filter, dimension) whose seven days are all kept, counts summed and sketches merged from them, with
 * its marker row of value null: a range reads a row per value and whole week inside it, not per
 * day (a filter's overview lists merged a sketch per value and day, and grew with the traffic:
 * bench/RESULTS.md). Written by the keep that keeps a week's last day, or asked for by a report
 * that finds a week kept day by day (days kept by a version before); never while a day of the week
 * is marked. A refresh of a day and an erasure delete its week's rows with the day's, and a keep of
 * a day its week's before merging it again; a report reads a week only with its seven days kept.
 * rollup_kept_sessions: per day, report over sessions (a funnel, the sessions report with one
 * filter: `session-days.ts`) and bot choice, a row of session null with the report's `total` over
 * the day's sessions that lie wholly inside it (comma-separated numbers) and in `spans` how many
 * such sessions there were then, every event counted (`c` and the number; a digest of a version
 * before is never taken for one), and a row per session that spans days with an event of the
 * report that day, its `piece` of the day: written by the first read of the report that reads the
 * day, not by the refresh. Deleted with the filtered rows.
 * rollup_kept_spans: per report and bot choice, the report's `total` over the sessions that span
 * from `first_day` to `last_day` (every event counted), with how many they were and the sum of
 * those days' versions then: written by a read that took them whole, so that the next range
 * holding them reads one row, not their pieces. Taken only while both still hold (a refresh raises
 * a version; a session that comes to span further leaves the count) and no day of it is marked;
 * deleted by a refresh of a day it covers.
 * rollup_versions: per day, how many times a refresh has built its rollups. Filtered rows computed
 * from a snapshot are kept only if the day's version is still the one that snapshot saw.
 */
const SQLITE_ROLLUP_DDL = `
CREATE TABLE IF NOT EXISTS rollup_meta (shape INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rollup_dirty (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, marks INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (project_id, day)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_keys (id INTEGER PRIMARY KEY, project_id TEXT NOT NULL, key TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS rollup_keys_by_key ON rollup_keys (project_id, key);
CREATE TABLE IF NOT EXISTS rollup_values (
  project_id TEXT NOT NULL, dim TEXT NOT NULL, day INTEGER NOT NULL, value TEXT NOT NULL, is_bot INTEGER NOT NULL,
  session_id INTEGER, visitor INTEGER, visitor_hash INTEGER,
  events INTEGER NOT NULL, page_views INTEGER NOT NULL, first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rollup_values_by_day ON rollup_values (project_id, dim, day, is_bot, value, visitor, session_id, page_views, events);
${HOLDER_INDEXES_DDL}
CREATE TABLE IF NOT EXISTS rollup_errors (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, is_bot INTEGER NOT NULL, message NOT NULL, visitor TEXT, visitor_hash TEXT,
  n INTEGER NOT NULL, last_ts INTEGER NOT NULL, last_event_id TEXT NOT NULL, last_stack);
CREATE INDEX IF NOT EXISTS rollup_errors_by_day ON rollup_errors (project_id, day);
CREATE TABLE IF NOT EXISTS rollup_vitals (
  project_id TEXT NOT NULL, metric TEXT NOT NULL, day INTEGER NOT NULL, path TEXT NOT NULL, is_bot INTEGER NOT NULL,
  n INTEGER NOT NULL, counts TEXT NOT NULL, PRIMARY KEY (project_id, metric, day, path, is_bot)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_exposures (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, is_bot INTEGER NOT NULL, experiment, variant NOT NULL,
  visitor INTEGER, visitor_hash INTEGER, first_ts INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rollup_exposures_by_day ON rollup_exposures (project_id, day);
CREATE TABLE IF NOT EXISTS rollup_steps (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, kind INTEGER NOT NULL, value TEXT NOT NULL, event_id TEXT NOT NULL,
  is_bot INTEGER NOT NULL, session_id TEXT NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (project_id, day, kind, value, event_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_filtered (
  project_id TEXT NOT NULL, filter_dim TEXT NOT NULL, filter_value TEXT NOT NULL, dim TEXT NOT NULL, day INTEGER NOT NULL, is_bot INTEGER NOT NULL,
  value TEXT, n INTEGER NOT NULL, visitors BLOB, visitor_hashes BLOB);
CREATE INDEX IF NOT EXISTS rollup_filtered_key ON rollup_filtered (project_id, filter_dim, filter_value, dim, day);
CREATE INDEX IF NOT EXISTS rollup_filtered_by_day ON rollup_filtered (project_id, day);
CREATE TABLE IF NOT EXISTS rollup_filtered_weeks (
  project_id TEXT NOT NULL, filter_dim TEXT NOT NULL, filter_value TEXT NOT NULL, dim TEXT NOT NULL, week INTEGER NOT NULL, is_bot INTEGER NOT NULL,
  value TEXT, n INTEGER NOT NULL, visitors BLOB, visitor_hashes BLOB);
CREATE INDEX IF NOT EXISTS rollup_filtered_weeks_key ON rollup_filtered_weeks (project_id, filter_dim, filter_value, dim, week);
CREATE INDEX IF NOT EXISTS rollup_filtered_weeks_by_week ON rollup_filtered_weeks (project_id, week);
CREATE TABLE IF NOT EXISTS rollup_kept_sessions (
  project_id TEXT NOT NULL, report TEXT NOT NULL, with_bots INTEGER NOT NULL, day INTEGER NOT NULL, session_id TEXT, piece TEXT, total TEXT, spans TEXT);
CREATE INDEX IF NOT EXISTS rollup_kept_sessions_key ON rollup_kept_sessions (project_id, report, with_bots, day);
CREATE INDEX IF NOT EXISTS rollup_kept_sessions_by_day ON rollup_kept_sessions (project_id, day);
CREATE INDEX IF NOT EXISTS rollup_kept_sessions_by_session ON rollup_kept_sessions (project_id, report, with_bots, session_id, day);
CREATE TABLE IF NOT EXISTS rollup_kept_spans (
  project_id TEXT NOT NULL, report TEXT NOT NULL, with_bots INTEGER NOT NULL, first_day INTEGER NOT NULL, last_day INTEGER NOT NULL,
  sessions INTEGER NOT NULL, versions INTEGER NOT NULL, total TEXT NOT NULL, PRIMARY KEY (project_id, report, with_bots, first_day, last_day)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rollup_kept_spans_by_day ON rollup_kept_spans (project_id, last_day);
CREATE TABLE IF NOT EXISTS rollup_versions (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (project_id, day)) WITHOUT ROWID;
DROP TRIGGER IF EXISTS rollup_mark_insert;
CREATE TRIGGER IF NOT EXISTS rollup_mark_delete AFTER DELETE ON events BEGIN ${sqliteMark('OLD')} END;
CREATE TRIGGER IF NOT EXISTS rollup_mark_update AFTER UPDATE ON events BEGIN ${sqliteMark('OLD')} ${sqliteMark('NEW')} END;`;

/*
 * On PostgreSQL the marks are set once per statement from its transition table, and writers never
 * update a shared row: each marking appends a row per (project, day) to `rollup_marks` (insert-only)
 * and makes sure the day's row in `rollup_dirty`, the set of marked days that reports read, exists
 * (`ON CONFLICT DO NOTHING` on a committed row takes no lock). A counter per day, updated by every
 * writer, made every group commit of the day wait for the one before it to commit: two server
 * processes were no faster than one. The refresh (`rollup-refresh.ts`) deletes the marks its
 * snapshot saw and removes the day from `rollup_dirty` only if no mark is left; the shared advisory
 * lock per (project, day) that a marking holds until its commit lets the refresh wait, at that
 * moment only, for markings in flight. Days are locked in (project, day) order.
 */

/** The advisory lock key of a (project, day)'s marks, as SQL over the two expressions. */
export const markLockSql = (project: string, day: string): string => `hashtext('rollup-mark:' || ${project}), ${day}`;

/** The call of `rollup_mark_days` over the distinct (project, day) pairs of `rows`, in lock order. */
const markCall = (rows: string): string =>
  `rollup_mark_days(array_agg(project_id ORDER BY project_id, day), array_agg(day ORDER BY project_id, day))
   FROM (SELECT DISTINCT project_id, (${daySql('timestamp')})::int AS day FROM ${rows}) d`;

/**
 * The statement that marks the (project, day) pairs of a set of rows with `project_id` and
 * `timestamp` columns (a table or a parenthesized query with an alias), inside the transaction
 * that changed them: what the triggers do, for what changes events without firing them (dropping
 * a partition).
 */
export const markDaysSql = (rows: string): string => `SELECT ${markCall(rows)}`;

/** The same in a trigger function's body. */
const markFrom = (table: string) => `PERFORM ${markCall(table)};`;

const POSTGRES_ROLLUP_DDL = `
CREATE TABLE IF NOT EXISTS rollup_meta (shape INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rollup_dirty (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, marks BIGINT NOT NULL DEFAULT 1, PRIMARY KEY (project_id, day));
CREATE TABLE IF NOT EXISTS rollup_marks (project_id TEXT NOT NULL, day INTEGER NOT NULL);
CREATE OR REPLACE FUNCTION rollup_mark_days(projects TEXT[], days INTEGER[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(${markLockSql('m.p', 'm.d')}) FROM unnest(projects, days) AS m(p, d);
  INSERT INTO rollup_marks (project_id, day) SELECT * FROM unnest(projects, days);
  INSERT INTO rollup_dirty (project_id, day) SELECT * FROM unnest(projects, days) ON CONFLICT DO NOTHING;
END $$;
CREATE TABLE IF NOT EXISTS rollup_keys (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, project_id TEXT NOT NULL, key TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS rollup_keys_by_key ON rollup_keys (project_id, key);
CREATE TABLE IF NOT EXISTS rollup_values (
  project_id TEXT NOT NULL, dim TEXT NOT NULL, day INTEGER NOT NULL, value TEXT NOT NULL, is_bot BOOLEAN NOT NULL,
  session_id BIGINT, visitor BIGINT, visitor_hash BIGINT,
  events INTEGER NOT NULL, page_views INTEGER NOT NULL, first_ts BIGINT NOT NULL, last_ts BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS rollup_values_by_day ON rollup_values (project_id, dim, day, value);
CREATE INDEX IF NOT EXISTS rollup_values_cover ON rollup_values (project_id, dim, day, is_bot, value, visitor, session_id, page_views, events);
CREATE INDEX IF NOT EXISTS rollup_values_sessions ON rollup_values (project_id, day) INCLUDE (is_bot, session_id, page_views, first_ts, last_ts)
  WHERE dim = '';
${HOLDER_INDEXES_DDL}
CREATE TABLE IF NOT EXISTS rollup_errors (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, is_bot BOOLEAN NOT NULL, message TEXT NOT NULL, visitor TEXT, visitor_hash TEXT,
  n INTEGER NOT NULL, last_ts BIGINT NOT NULL, last_event_id TEXT NOT NULL, last_stack TEXT);
CREATE INDEX IF NOT EXISTS rollup_errors_by_day ON rollup_errors (project_id, day);
CREATE TABLE IF NOT EXISTS rollup_vitals (
  project_id TEXT NOT NULL, metric TEXT NOT NULL, day INTEGER NOT NULL, path TEXT NOT NULL, is_bot BOOLEAN NOT NULL,
  n INTEGER NOT NULL, counts TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rollup_vitals_by_metric ON rollup_vitals (project_id, metric, day);
CREATE TABLE IF NOT EXISTS rollup_exposures (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, is_bot BOOLEAN NOT NULL, experiment TEXT NOT NULL, variant TEXT NOT NULL,
  visitor BIGINT, visitor_hash BIGINT, first_ts BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS rollup_exposures_by_day ON rollup_exposures (project_id, day);
CREATE TABLE IF NOT EXISTS rollup_steps (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, kind SMALLINT NOT NULL, value TEXT NOT NULL, event_id TEXT NOT NULL,
  is_bot BOOLEAN NOT NULL, session_id TEXT NOT NULL, ts BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS rollup_steps_by_event ON rollup_steps (project_id, day, kind, value, event_id);
DROP INDEX IF EXISTS rollup_steps_by_key;
CREATE TABLE IF NOT EXISTS rollup_filtered (
  project_id TEXT NOT NULL, filter_dim TEXT NOT NULL, filter_value TEXT NOT NULL, dim TEXT NOT NULL, day INTEGER NOT NULL, is_bot BOOLEAN NOT NULL,
  value TEXT COLLATE "C", n BIGINT NOT NULL, visitors BYTEA, visitor_hashes BYTEA);
CREATE INDEX IF NOT EXISTS rollup_filtered_key ON rollup_filtered (project_id, filter_dim, filter_value, dim, day);
CREATE INDEX IF NOT EXISTS rollup_filtered_by_day ON rollup_filtered (project_id, day);
CREATE TABLE IF NOT EXISTS rollup_filtered_weeks (
  project_id TEXT NOT NULL, filter_dim TEXT NOT NULL, filter_value TEXT NOT NULL, dim TEXT NOT NULL, week INTEGER NOT NULL, is_bot BOOLEAN NOT NULL,
  value TEXT COLLATE "C", n BIGINT NOT NULL, visitors BYTEA, visitor_hashes BYTEA);
CREATE INDEX IF NOT EXISTS rollup_filtered_weeks_key ON rollup_filtered_weeks (project_id, filter_dim, filter_value, dim, week);
CREATE INDEX IF NOT EXISTS rollup_filtered_weeks_by_week ON rollup_filtered_weeks (project_id, week);
CREATE TABLE IF NOT EXISTS rollup_kept_sessions (
  project_id TEXT NOT NULL, report TEXT NOT NULL, with_bots SMALLINT NOT NULL, day INTEGER NOT NULL, session_id TEXT, piece TEXT, total TEXT, spans TEXT);
CREATE INDEX IF NOT EXISTS rollup_kept_sessions_key ON rollup_kept_sessions (project_id, report, with_bots, day);
CREATE INDEX IF NOT EXISTS rollup_kept_sessions_by_day ON rollup_kept_sessions (project_id, day);
CREATE INDEX IF NOT EXISTS rollup_kept_sessions_by_session ON rollup_kept_sessions (project_id, report, with_bots, session_id, day);
CREATE TABLE IF NOT EXISTS rollup_kept_spans (
  project_id TEXT NOT NULL, report TEXT NOT NULL, with_bots SMALLINT NOT NULL, first_day INTEGER NOT NULL, last_day INTEGER NOT NULL,
  sessions BIGINT NOT NULL, versions BIGINT NOT NULL, total TEXT NOT NULL, PRIMARY KEY (project_id, report, with_bots, first_day, last_day));
CREATE INDEX IF NOT EXISTS rollup_kept_spans_by_day ON rollup_kept_spans (project_id, last_day);
CREATE TABLE IF NOT EXISTS rollup_versions (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, version BIGINT NOT NULL, PRIMARY KEY (project_id, day));
CREATE OR REPLACE FUNCTION rollup_mark_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN ${markFrom('rollup_new_rows')} RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION rollup_mark_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN ${markFrom('rollup_old_rows')} RETURN NULL; END $$;
CREATE OR REPLACE FUNCTION rollup_mark_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN ${markFrom('(SELECT project_id, timestamp FROM rollup_old_rows UNION SELECT project_id, timestamp FROM rollup_new_rows) AS changed')} RETURN NULL; END $$;
CREATE OR REPLACE TRIGGER rollup_mark_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS rollup_new_rows FOR EACH STATEMENT EXECUTE FUNCTION rollup_mark_new();
CREATE OR REPLACE TRIGGER rollup_mark_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS rollup_old_rows FOR EACH STATEMENT EXECUTE FUNCTION rollup_mark_old();
CREATE OR REPLACE TRIGGER rollup_mark_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS rollup_old_rows NEW TABLE AS rollup_new_rows FOR EACH STATEMENT EXECUTE FUNCTION rollup_mark_changed();`;

/**
 * Creates the SQLite rollup tables and triggers, or rebuilds them when their shape changed. A new
 * rollup starts with every day of existing events marked, so an upgraded database is built in the
 * background while reports read those days from the events; the marks and triggers are created in
 * one transaction, so no write falls between them.
 */
export function ensureSqliteRollups(db: Database.Database): void {
  db.transaction(() => {
    const meta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rollup_meta'").get();
    const shape = meta === undefined ? undefined : (db.prepare('SELECT shape FROM rollup_meta').pluck().get() as number | undefined);
    const convert = inPlace(shape);
    if (convert?.vitals === true) for (const sql of packVitalsSql(SQLITE_DIALECT, shape === VITALS_ROUNDED_FROM)) db.exec(sql);
    if (convert?.exposures === true) for (const sql of KEY_EXPOSURES_SQL) db.exec(sql);
    if (shape === ROLLUP_SHAPE || convert !== null) {
      db.exec(SQLITE_ROLLUP_DDL);
      if (convert !== null) {
        for (const sql of [...(convert.vitals ? UNPACK_VITALS_SQL : []), ...UNKEY_EXPOSURES_SQL]) db.exec(sql);
        db.prepare('UPDATE rollup_meta SET shape = ?').run(ROLLUP_SHAPE);
      }
      return;
    }
    for (const trigger of ['rollup_mark_insert', 'rollup_mark_delete', 'rollup_mark_update']) db.exec(`DROP TRIGGER IF EXISTS ${trigger}`);
    for (const table of ROLLUP_TABLES) db.exec(`DROP TABLE IF EXISTS ${table}`);
    db.exec(SQLITE_ROLLUP_DDL);
    const mark = db.prepare('INSERT OR IGNORE INTO rollup_dirty (project_id, day) VALUES (?, ?)');
    for (const [projectId, day] of spanDays(db.prepare(PROJECT_SPANS_SQL).all() as Span[])) mark.run(projectId, day);
    db.prepare('INSERT INTO rollup_meta (shape) VALUES (?)').run(ROLLUP_SHAPE);
  }).immediate();
}

/** The PostgreSQL counterpart of {@link ensureSqliteRollups}, under the schema's advisory lock. */
export async function ensurePostgresRollups(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(SCHEMA_LOCK_SQL);
    const meta = await client.query<{ found: boolean }>("SELECT to_regclass('rollup_meta') IS NOT NULL AS found");
    const shape = meta.rows[0]?.found ? (await client.query<{ shape: number }>('SELECT shape FROM rollup_meta')).rows[0]?.shape : undefined;
    const convert = inPlace(shape);
    if (convert?.vitals === true) for (const sql of packVitalsSql(POSTGRES_DIALECT, shape === VITALS_ROUNDED_FROM)) await client.query(sql);
    if (convert?.exposures === true) for (const sql of KEY_EXPOSURES_SQL) await client.query(sql);
    const rebuild = shape !== ROLLUP_SHAPE && convert === null;
    if (rebuild) {
      for (const trigger of ['rollup_mark_insert', 'rollup_mark_delete', 'rollup_mark_update']) await client.query(`DROP TRIGGER IF EXISTS ${trigger} ON events`);
      await client.query(`DROP TABLE IF EXISTS ${ROLLUP_TABLES.join(', ')}`);
    }
    await client.query(POSTGRES_ROLLUP_DDL);
    if (convert !== null) {
      for (const sql of [...(convert.vitals ? UNPACK_VITALS_SQL : []), ...UNKEY_EXPOSURES_SQL]) await client.query(sql);
      // A new table has no statistics until autovacuum comes: the planner took the experiment
      // report's 415,000 exposures at 10M events for one row and sorted them on disk (1.5 s against 0.8 s).
      await client.query('ANALYZE rollup_exposures');
      await client.query('UPDATE rollup_meta SET shape = $1', [ROLLUP_SHAPE]);
    }
    if (rebuild) {
      const pairs = [...spanDays((await client.query<Span>(PROJECT_SPANS_SQL)).rows)];
      if (pairs.length > 0) {
        await client.query('INSERT INTO rollup_dirty (project_id, day) SELECT * FROM unnest($1::text[], $2::int[]) ON CONFLICT DO NOTHING', [
          pairs.map((p) => p[0]),
          pairs.map((p) => p[1]),
        ]);
      }
      await client.query('INSERT INTO rollup_meta (shape) VALUES ($1)', [ROLLUP_SHAPE]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
