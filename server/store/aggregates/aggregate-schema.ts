import { DIMENSION_COLUMNS, FILTER_DIMENSIONS, type FilterDimension } from '../report-store.js';

/*
 * The report aggregates (docs/decisions.md, "Aggregates at ingest"): tables the group commit that
 * stores events also updates, in the same transaction, so they are never rebuilt from the events.
 * Derived, like the daily rollups: created at every store open by idempotent DDL, with a shape
 * version of their own; a database without them (or with another shape) gets them built once from
 * its events at open.
 *
 * agg_values: per project, dimension, grain (0 an hour, 1 a UTC day, 2 a week of seven UTC days),
 * bucket (hours, days or weeks since the epoch), value and bot flag: events, page views, and
 * sketches of the distinct visitors (both keys), sessions and, for page dimensions, visitors of
 * page views (`visitor-sketch.ts`; null is empty). Dimension '' with value '' stands for every
 * event. Rows grow with the distinct values per hour, not with the events. The unique index serves a dimension's rows over a range of
 * buckets (totals, series, top lists); the second one a single value's rows (a filter, and the
 * every-event rows of a series), the bot flag last so that the rows of the other flag are passed
 * over in the index rather than read from the table (half the reads of an hourly series).
 * agg_sessions: per project, hour, session and bot flag: first and last time, events, page views.
 * A range's sessions are read from it by hour, so the sessions panel reads a row per session and
 * hour, not every event.
 */

/**
 * What a store tells about a build of the report aggregates at open: when it starts, and when it
 * is done with the time it took; `source` says what it reads: the events (minutes for millions of
 * them), or the aggregates' own rows (an upgrade that completes them: seconds).
 */
export type AggregatesBuildListener = (phase: 'building' | 'built', elapsedMs: number, source: 'events' | 'aggregates') => void;

/**
 * Version of the aggregate tables' shape; a database with another one gets them dropped and built
 * again, but for the steps {@link convertsInPlace} names. 4: sketches in the format of PostgreSQL's
 * `hll` extension (`visitor-sketch.ts`), and the bot flag in the index by value. 5: week rows.
 * 6: the session sums per first and last day, and the midnights sessions cross.
 */
export const AGGREGATE_SHAPE = 6;

/**
 * Whether a database's aggregates of `shape` become this build's without reading an event: shape
 * 4 lacks the week rows, which are merged from its day rows, and both 4 and 5 the session sums of
 * shape 6, which are summed from the session states.
 */
export const convertsInPlace = (shape: number | undefined): boolean => shape === 4 || shape === 5;

/**
 * The dimension of the errors report: an `error` event's `properties.message` ('' without one),
 * no value for other events. Not a filter: it exists for the errors report's counts and visitors.
 */
export const ERROR_MESSAGE_DIM = 'error_message';

/** An aggregate dimension: '' (every event), a filter dimension, or the errors' message. */
export type AggregateDim = FilterDimension | '' | typeof ERROR_MESSAGE_DIM;

/** The `dim` of each aggregate dimension, by index: '' (every event), the filter dimensions, the errors' message. */
export const AGGREGATE_DIMS: readonly AggregateDim[] = ['', ...FILTER_DIMENSIONS, ERROR_MESSAGE_DIM];

/** What each aggregate dimension after the first reads of an event, as the name of its column in a row of {@link aggregateColumnsSql}, in order. */
export const AGGREGATE_COLUMNS: readonly string[] = [...FILTER_DIMENSIONS.map((d) => DIMENSION_COLUMNS[d]), ERROR_MESSAGE_DIM];

/** Whether each aggregate dimension describes a page load (its top list counts page views). */
export const AGGREGATE_PAGE_DIMS: readonly boolean[] = AGGREGATE_DIMS.map((d) => d !== '' && d !== 'event_type' && d !== ERROR_MESSAGE_DIM);

/**
 * The SQL of an error's message as the errors report groups it, given the store's expression of
 * `properties.message` as text: the value of {@link ERROR_MESSAGE_DIM}.
 */
export const errorMessageSql = (message: string): string => `CASE WHEN event_type = 'error' THEN COALESCE(${message}, '') END`;

/**
 * What an aggregate build reads of each event beside its dimension columns (`aggregate-batch.ts`'s
 * `add`), in the order the stores' erasure and builds read them.
 */
export const AGGREGATE_EVENT_KEYS = 'project_id, event_type, session_id, timestamp, is_bot, visitor_id, anonymous_id';

/** The select expression of each of {@link AGGREGATE_COLUMNS} over `events`, in order, given the store's expression of `properties.message` as text. */
export const aggregateColumnSelects = (message: string): string[] => [...FILTER_DIMENSIONS.map((d) => DIMENSION_COLUMNS[d]), `${errorMessageSql(message)} AS ${ERROR_MESSAGE_DIM}`];

/** The select list of {@link AGGREGATE_COLUMNS} over `events`, given the store's expression of `properties.message` as text. */
export const aggregateColumnsSql = (message: string): string => aggregateColumnSelects(message).join(', ');

/**
 * An error's message as {@link errorMessageSql} reads it from the stored properties' JSON, for the
 * commits that add events to the aggregates from their values rather than from SQL: a string as
 * it is, none as '', any other JSON value as its text.
 */
export function errorMessageOf(properties: Readonly<Record<string, unknown>>): string {
  const message = properties.message;
  if (message === undefined || message === null) return '';
  return typeof message === 'string' ? message : JSON.stringify(message);
}

/** The grain of an hour row: its bucket counts hours since the epoch. */
export const GRAIN_HOUR = 0;
/** The grain of a day row: its bucket counts UTC days since the epoch. */
export const GRAIN_DAY = 1;
/**
 * The grain of a week row: its bucket counts weeks of seven UTC days since the epoch (a week's
 * days are `7 × bucket` to `7 × bucket + 6`; week 0 starts on Thursday 1970-01-01). Reports that
 * need no per-day split (totals, top lists, errors) read a range's whole weeks from these rows:
 * 90 whole days are at most 18 day and week rows per value rather than 90.
 */
export const GRAIN_WEEK = 2;
/** Days in a week row. */
export const WEEK_DAYS = 7;

/** The weeks `[first, end)` wholly inside the days `[firstDay, endDay)` (none when `end <= first`). */
export const wholeWeeks = (firstDay: number, endDay: number): [number, number] => [Math.ceil(firstDay / WEEK_DAYS), Math.floor(endDay / WEEK_DAYS)];

/** The grain a row of `grain` (a day, a week) is merged from, and how many of its rows it covers: a day's 24 hours, a week's 7 days. */
export const finerOf = (grain: typeof GRAIN_DAY | typeof GRAIN_WEEK): readonly [number, number] => (grain === GRAIN_DAY ? [GRAIN_HOUR, 24] : [GRAIN_DAY, WEEK_DAYS]);

/** The week row bucket of a day row bucket, as SQL over its expression (floor division, as `Math.floor(day / 7)`, negative days too). */
export const weekOfDaySql = (day: string): string => `((${day}) - ((((${day}) % ${WEEK_DAYS}) + ${WEEK_DAYS}) % ${WEEK_DAYS})) / ${WEEK_DAYS}`;

/** Every aggregate table, dropped on a shape change. */
export const AGGREGATE_TABLES = ['agg_values', 'agg_sessions', 'agg_session_state', 'agg_session_days', 'agg_session_midnights', 'agg_meta'] as const;

/** The sketch columns of `agg_values`, in the order the stores write them. */
export const SKETCH_COLUMNS = ['visitors', 'visitor_hashes', 'sessions', 'page_visitors', 'page_visitor_hashes'] as const;

/**
 * The session summaries on SQLite (`sqlite/sqlite-session-summaries.ts`, docs/decisions.md): a state row per session,
 * counted twice (over humans' events, `h_*`, null times when it has none; over every event), with an index of
 * the few sessions whose span crosses a UTC day boundary (by start, and by end with the start, which
 * the reports kept per day seek from a range's first day: `reports/session-days.ts`); the sums of
 * the sessions per first and last UTC day, for each way of counting (`with_bots`), so that a range
 * of whole days sums the sessions wholly inside it a row per day or so, however many there are;
 * and a row per midnight a session's span over every event crosses (`day` the UTC day it starts),
 * through which a range finds the few sessions that cross its ends, but for the sessions of 30
 * days or more (`LONG_SESSION_MS` in `session-moves.ts`: a wrong clock, a bot), which have an
 * index of their own instead.
 */
export const SQLITE_SESSION_SUMMARY_DDL = `
CREATE TABLE IF NOT EXISTS agg_session_state (
  project_id TEXT NOT NULL, session_id TEXT NOT NULL,
  h_first INTEGER, h_last INTEGER, h_events INTEGER NOT NULL, h_page_views INTEGER NOT NULL,
  first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL, events INTEGER NOT NULL, page_views INTEGER NOT NULL,
  PRIMARY KEY (project_id, session_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS agg_session_spans ON agg_session_state (project_id, first_ts) WHERE first_ts / 86400000 <> last_ts / 86400000;
CREATE INDEX IF NOT EXISTS agg_session_spans_by_end ON agg_session_state (project_id, last_ts, first_ts) WHERE first_ts / 86400000 <> last_ts / 86400000;
CREATE INDEX IF NOT EXISTS agg_session_long ON agg_session_state (project_id, first_ts) WHERE last_ts - first_ts >= 2592000000;
CREATE TABLE IF NOT EXISTS agg_session_days (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, last_day INTEGER NOT NULL, with_bots INTEGER NOT NULL,
  sessions INTEGER NOT NULL, bounces INTEGER NOT NULL, duration INTEGER NOT NULL, page_views INTEGER NOT NULL,
  PRIMARY KEY (project_id, day, last_day, with_bots)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS agg_session_midnights (
  project_id TEXT NOT NULL, day INTEGER NOT NULL, session_id TEXT NOT NULL,
  PRIMARY KEY (project_id, day, session_id)) WITHOUT ROWID;`;

/** The aggregate tables on SQLite: a key index a commit upserts through, one row per key. */
export const SQLITE_AGGREGATE_DDL = `
CREATE TABLE IF NOT EXISTS agg_meta (shape INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS agg_values (
  project_id TEXT NOT NULL, dim TEXT NOT NULL, grain INTEGER NOT NULL, bucket INTEGER NOT NULL, value TEXT NOT NULL, is_bot INTEGER NOT NULL,
  events INTEGER NOT NULL, page_views INTEGER NOT NULL,
  visitors BLOB, visitor_hashes BLOB, sessions BLOB, page_visitors BLOB, page_visitor_hashes BLOB);
CREATE UNIQUE INDEX IF NOT EXISTS agg_values_key ON agg_values (project_id, dim, grain, bucket, value, is_bot);
CREATE INDEX IF NOT EXISTS agg_values_by_value ON agg_values (project_id, dim, value, grain, bucket, is_bot);
CREATE TABLE IF NOT EXISTS agg_sessions (
  project_id TEXT NOT NULL, hour INTEGER NOT NULL, session_id TEXT NOT NULL, is_bot INTEGER NOT NULL,
  first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL, events INTEGER NOT NULL, page_views INTEGER NOT NULL,
  PRIMARY KEY (project_id, hour, session_id, is_bot)) WITHOUT ROWID;
${SQLITE_SESSION_SUMMARY_DDL}`;

/**
 * On PostgreSQL a commit inserts its rows as parts, several per key until the compaction merges
 * them (`postgres-aggregates.ts` says why); reports merge them as they merge rows of many days.
 * The session summaries as on SQLite (above), their day sums as parts too; a session's state is
 * one row, read and written under the session's advisory lock (`postgres-session-summaries.ts`).
 * `agg_compaction` holds where the compaction got to, so that a process started later goes on from
 * there rather than reading every part again.
 */
export const POSTGRES_AGGREGATE_DDL = `
CREATE TABLE IF NOT EXISTS agg_meta (shape INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS agg_values (
  part BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id TEXT NOT NULL, dim TEXT NOT NULL, grain SMALLINT NOT NULL, bucket BIGINT NOT NULL, value TEXT COLLATE "C" NOT NULL, is_bot BOOLEAN NOT NULL,
  events BIGINT NOT NULL, page_views BIGINT NOT NULL,
  visitors BYTEA, visitor_hashes BYTEA, sessions BYTEA, page_visitors BYTEA, page_visitor_hashes BYTEA);
CREATE INDEX IF NOT EXISTS agg_values_key ON agg_values (project_id, dim, grain, bucket, value, is_bot) INCLUDE (events, page_views);
CREATE INDEX IF NOT EXISTS agg_values_by_value ON agg_values (project_id, dim, value, grain, bucket, is_bot);
CREATE TABLE IF NOT EXISTS agg_sessions (
  part BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id TEXT NOT NULL, hour BIGINT NOT NULL, session_id TEXT NOT NULL, is_bot BOOLEAN NOT NULL,
  first_ts BIGINT NOT NULL, last_ts BIGINT NOT NULL, events BIGINT NOT NULL, page_views BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS agg_sessions_key ON agg_sessions (project_id, hour, session_id, is_bot);
CREATE TABLE IF NOT EXISTS agg_session_state (
  project_id TEXT NOT NULL, session_id TEXT NOT NULL,
  h_first BIGINT, h_last BIGINT, h_events BIGINT NOT NULL, h_page_views BIGINT NOT NULL,
  first_ts BIGINT NOT NULL, last_ts BIGINT NOT NULL, events BIGINT NOT NULL, page_views BIGINT NOT NULL,
  PRIMARY KEY (project_id, session_id));
CREATE INDEX IF NOT EXISTS agg_session_spans ON agg_session_state (project_id, first_ts) WHERE first_ts / 86400000 <> last_ts / 86400000;
CREATE INDEX IF NOT EXISTS agg_session_spans_by_end ON agg_session_state (project_id, last_ts) INCLUDE (first_ts, session_id) WHERE first_ts / 86400000 <> last_ts / 86400000;
CREATE INDEX IF NOT EXISTS agg_session_long ON agg_session_state (project_id, first_ts) WHERE last_ts - first_ts >= 2592000000;
CREATE TABLE IF NOT EXISTS agg_session_days (
  part BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id TEXT NOT NULL, day BIGINT NOT NULL, last_day BIGINT NOT NULL, with_bots SMALLINT NOT NULL,
  sessions BIGINT NOT NULL, bounces BIGINT NOT NULL, duration BIGINT NOT NULL, page_views BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS agg_session_days_key ON agg_session_days (project_id, with_bots, day, last_day);
CREATE TABLE IF NOT EXISTS agg_session_midnights (
  project_id TEXT NOT NULL, day BIGINT NOT NULL, session_id TEXT NOT NULL,
  PRIMARY KEY (project_id, day, session_id));
CREATE TABLE IF NOT EXISTS agg_compaction (
  id SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  values_part BIGINT NOT NULL, sessions_part BIGINT NOT NULL, session_days_part BIGINT NOT NULL);`;

/** The PostgreSQL aggregate tables, dropped on a shape change: {@link AGGREGATE_TABLES} and where the parts' compaction got to. */
export const POSTGRES_AGGREGATE_TABLES = [...AGGREGATE_TABLES, 'agg_compaction'] as const;
