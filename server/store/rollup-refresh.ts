import type Database from 'better-sqlite3';
import type pg from 'pg';
import type { Dialect } from './report-queries.js';
import { FILTER_DIMENSIONS, type FilterDimension } from './report-store.js';
import { DAY_MS } from './rollup-schema.js';

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
}

/** Refreshes the next marked day before `beforeDay` (newest first); null when there is none. */
export type RefreshNext = (beforeDay: number) => Promise<RefreshedDay | null>;

/** The events column of each dimension, by its parameter name. */
export const DIMENSION_COLUMNS: Readonly<Record<FilterDimension, string>> = {
  page: 'path',
  host: 'host',
  referrer: 'referrer_host',
  channel: 'channel',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  browser: 'browser',
  os: 'os',
  device: 'device',
  screen: 'screen_class',
  event_type: 'event_type',
};

/** The vitals of `rollup_vitals`, by their report keys. */
export const VITAL_KEYS = ['lcp', 'inp', 'cls', 'fcp'] as const;

/** Every `dim` of `rollup_values`: '' (all events) and each filter dimension. */
export const ROLLUP_DIMS: readonly string[] = ['', ...FILTER_DIMENSIONS];

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

/** The rollup rows of one day, as INSERT … SELECT from `src` (the day's rows of {@link dayColumns}); `$p`, `$d` name project and day. */
function rollupInserts(src: string, p: string, d: string): string[] {
  const visits = ROLLUP_DIMS.map((dim) => {
    const column = dim === '' ? "''" : DIMENSION_COLUMNS[dim as FilterDimension];
    const where = dim === '' ? '' : ` WHERE ${column} IS NOT NULL`;
    return `SELECT '${dim}' AS dim, ${column} AS value, is_bot, session_id, visitor, visitor_hash, event_type, timestamp FROM ${src}${where}`;
  }).join('\n      UNION ALL ');
  const key = 'is_bot, message, visitor, visitor_hash';
  return [
    `INSERT INTO rollup_values (project_id, dim, day, value, is_bot, session_id, visitor, visitor_hash, events, page_views, first_ts, last_ts)
     SELECT ${p}, dim, ${d}, value, is_bot, session_id, visitor, visitor_hash, COUNT(*),
       SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END), MIN(timestamp), MAX(timestamp)
     FROM (${visits}) v
     GROUP BY dim, value, is_bot, session_id, visitor, visitor_hash ORDER BY dim, value`,
    `INSERT INTO rollup_errors (project_id, day, is_bot, message, visitor, visitor_hash, n, last_ts, last_event_id, last_stack)
     SELECT ${p}, ${d}, is_bot, message, visitor, visitor_hash, n, timestamp, event_id, stack FROM (
       SELECT ${key}, timestamp, event_id, stack,
         ROW_NUMBER() OVER (PARTITION BY ${key} ORDER BY timestamp DESC, event_id DESC) AS rn, COUNT(*) OVER (PARTITION BY ${key}) AS n
       FROM ${src} WHERE event_type = 'error') r WHERE rn = 1`,
    `INSERT INTO rollup_vitals (project_id, day, is_bot, path, metric, value, n)
     SELECT ${p}, ${d}, is_bot, path, metric, value, COUNT(*) FROM (
       SELECT is_bot, path, '' AS metric, 0 AS value FROM ${src} WHERE event_type = 'performance' AND path IS NOT NULL
       ${VITAL_KEYS.map((k) => `UNION ALL SELECT is_bot, path, '${k}', ${k} FROM ${src} WHERE event_type = 'performance' AND path IS NOT NULL AND ${k} IS NOT NULL`).join('\n       ')}) v
     GROUP BY is_bot, path, metric, value`,
    `INSERT INTO rollup_exposures (project_id, day, is_bot, experiment, variant, visitor, visitor_hash, first_ts)
     SELECT ${p}, ${d}, is_bot, experiment, variant, visitor, visitor_hash, MIN(timestamp) FROM ${src}
     WHERE event_type = 'experiment_exposure' AND experiment IS NOT NULL GROUP BY is_bot, experiment, variant, visitor, visitor_hash`,
  ];
}

/** Deletes of a day's rollup rows; `rollup_values` through its index, one `dim` at a time. */
function rollupDeletes(p: string, d: string): string[] {
  return [
    `DELETE FROM rollup_values WHERE project_id = ${p} AND dim IN (${ROLLUP_DIMS.map((dim) => `'${dim}'`).join(', ')}) AND day = ${d}`,
    ...['rollup_errors', 'rollup_vitals', 'rollup_exposures'].map((table) => `DELETE FROM ${table} WHERE project_id = ${p} AND day = ${d}`),
  ];
}

/**
 * The SQLite refresh, on the store's own connection. One write transaction per day: SQLite has a
 * single writer, so no commit can fall between the day's read and the removal of its mark. The
 * day's rows are read once, through the time index, into a temporary table.
 */
export function createSqliteRollupRefresh(db: Database.Database, dialect: Dialect): RefreshNext {
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS rollup_day AS SELECT ${dayColumns(dialect)} FROM events WHERE 0`);
  const next = db.prepare<[number]>('SELECT project_id, day FROM rollup_dirty WHERE day < ? ORDER BY day DESC, project_id LIMIT 1');
  const unmark = db.prepare('DELETE FROM rollup_dirty WHERE project_id = ? AND day = ?');
  const clear = db.prepare('DELETE FROM temp.rollup_day');
  const load = db.prepare(`INSERT INTO temp.rollup_day SELECT ${dayColumns(dialect)} FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?`);
  const deletes = rollupDeletes('@p', '@d').map((sql) => db.prepare(sql));
  const inserts = rollupInserts('temp.rollup_day', '@p', '@d').map((sql) => db.prepare(sql));
  const refresh = db.transaction((beforeDay: number): RefreshedDay | null => {
    const row = next.get(beforeDay) as { project_id: string; day: number } | undefined;
    if (row === undefined) return null;
    const { project_id: projectId, day } = row;
    unmark.run(projectId, day);
    clear.run();
    load.run(projectId, day * DAY_MS, (day + 1) * DAY_MS);
    for (const statement of deletes) statement.run({ p: projectId, d: day });
    for (const statement of inserts) statement.run({ p: projectId, d: day });
    clear.run();
    return { projectId, day };
  });
  return async (beforeDay) => refresh.immediate(beforeDay);
}

/**
 * The PostgreSQL refresh: the mark is taken `FOR UPDATE SKIP LOCKED`, so several processes refresh
 * different days at once, and a commit touching the day waits on the mark until the refresh
 * committed (the trigger's upsert, `rollup-schema.ts`) and then marks it again. Reading the day
 * and writing every rollup is one statement, so the events are read once.
 */
export function createPostgresRollupRefresh(pool: pg.Pool, dialect: Dialect): RefreshNext {
  const build = `WITH src AS MATERIALIZED (SELECT ${dayColumns(dialect)} FROM events WHERE project_id = $1 AND timestamp >= $3 AND timestamp < $4),
    ${rollupInserts('src', '$1::text', '$2::int')
      .map((sql, i) => `w${i} AS (${sql})`)
      .join(',\n    ')}
    SELECT 1`;
  const deletes = rollupDeletes('$1', '$2');
  return async (beforeDay) => {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ project_id: string; day: number }>(
        'SELECT project_id, day FROM rollup_dirty WHERE day < $1::bigint ORDER BY day DESC, project_id LIMIT 1 FOR UPDATE SKIP LOCKED',
        [beforeDay],
      );
      const row = rows[0];
      if (row === undefined) {
        await client.query('COMMIT');
        return null;
      }
      const { project_id: projectId, day } = row;
      await client.query('DELETE FROM rollup_dirty WHERE project_id = $1 AND day = $2', [projectId, day]);
      for (const sql of deletes) await client.query(sql, [projectId, day]);
      await client.query(build, [projectId, day, day * DAY_MS, (day + 1) * DAY_MS]);
      await client.query('COMMIT');
      return { projectId, day };
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw error;
    } finally {
      client.release(broken);
    }
  };
}
