import type Database from 'better-sqlite3';
import { AGGREGATE_COLUMNS, AGGREGATE_DIMS, GRAIN_DAY, GRAIN_HOUR, SKETCH_COLUMNS } from '../aggregates/aggregate-schema.js';
import { HOUR_MS } from '../aggregates/aggregate-batch.js';
import type { DeletedUser } from '../event-store.js';
import { erasureRollupSql } from '../reports/rollup-erasure.js';
import { DAY_MS } from '../reports/rollup-schema.js';
import type { CommitAggregates } from './sqlite-event-writer.js';

/*
 * The erasure of a user on SQLite, as one program that runs where the group commits run: on the
 * writer thread, which holds the database's only write connection of this process. On the request
 * thread an erasure stopped every HTTP request for as long as it took (bench/RESULTS.md, "Reads
 * beside writes"); on the writer thread the group commits queued behind it wait instead, while
 * the request thread keeps reading, validating and answering. Its cost grows with the user's
 * events, the hours they fall in and the project's sessions, not with the project's events:
 *
 * - the user's events are found through `events_by_user` (`sqlite-schema.ts`, version 8);
 * - the aggregates (`sqlite-aggregates.ts`) of each hour that held one of them are built again
 *   from the events that hour keeps, and those hours' day rows merged again from their hour rows;
 * - the daily rollups lose every trace of the user's keys (`reports/rollup-erasure.ts`).
 *
 * The program travels as source text (`sqlite-writer.ts`), so it stays self-contained: every
 * statement arrives as text in {@link SqliteErasureSql}.
 */

/** The statements and constants of the erasure program, as data. */
export interface SqliteErasureSql {
  /** The user's events (`?` project, `?` user): `event_id, event_type, path, session_id, anonymous_id, visitor_id, timestamp`. */
  userEvents: string;
  deleteChunks: string;
  deleteEvents: string;
  /** Marks the days whose rollups hold one of the keys (`@p`, `@keys` as a JSON array). */
  markHolders: string;
  /** Deletes one `rollup_steps` row by its key (`?` project, day, kind, value, event id). */
  deleteStep: string;
  /** Deletes the rows that name a key as text (`@p`, `@keys`, `@days` as JSON arrays). */
  textKeyDeletes: string[];
  /** Takes the keys out of the dictionary (`@p`, `@keys`). */
  forgetKeys: string;
  /** Deletes an hour's aggregate rows of one dimension (`?` project, dimension, hour). */
  removeHour: string;
  /** Deletes an hour's session rows (`?` project, hour). */
  removeHourSessions: string;
  /** The events of an hour for its aggregates (`?` project, from, to), with the columns below. */
  readHour: string;
  /** Deletes a day's aggregate rows of one dimension (`?` project, dimension, day). */
  removeDay: string;
  /** Inserts a day's rows of one dimension merged from its hour rows (`?` day, project, dimension, first hour, end hour). */
  mergeDay: string;
  dims: readonly string[];
  /** The dimension columns a commit's aggregates read, in their order. */
  columns: readonly string[];
  dayMs: number;
  hourMs: number;
}

/** The statements of the erasure program for this build's schema. */
export function sqliteErasureSql(): SqliteErasureSql {
  const rollups = erasureRollupSql(() => '?', { p: '@p', keys: '(SELECT value FROM json_each(@keys))', days: '(SELECT value FROM json_each(@days))' });
  return {
    userEvents: rollups.userEvents,
    // Only the chunks uploaded under the user's id. Not the sessions the user's events name: the
    // client chooses session ids, so one event naming another's session would erase that person's
    // recording. The project's chunks, far fewer rows than its events, are scanned.
    deleteChunks: 'DELETE FROM recording_chunks WHERE project_id = ? AND user_id = ?',
    deleteEvents: 'DELETE FROM events WHERE project_id = ? AND user_id = ?',
    markHolders: `INSERT INTO rollup_dirty (project_id, day) SELECT DISTINCT @p, day FROM (${rollups.holderDays}) WHERE true
      ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1`,
    deleteStep: 'DELETE FROM rollup_steps WHERE project_id = ? AND day = ? AND kind = ? AND value = ? AND event_id = ?',
    textKeyDeletes: rollups.textKeyDeletes,
    // A tombstone, not a delete: a new id is the largest plus one, and an erased key's id may still
    // sit in rows of marked days until their refresh (`rollup-erasure.ts`, step 4).
    forgetKeys: `UPDATE rollup_keys SET key = char(0) || 'erased:' || id WHERE project_id = @p AND key IN (SELECT value FROM json_each(@keys))`,
    removeHour: `DELETE FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ${GRAIN_HOUR} AND bucket = ?`,
    removeHourSessions: 'DELETE FROM agg_sessions WHERE project_id = ? AND hour = ?',
    readHour: `SELECT project_id, event_type, session_id, timestamp, is_bot, visitor_id, anonymous_id, ${AGGREGATE_COLUMNS.join(', ')}
      FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?`,
    removeDay: `DELETE FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ${GRAIN_DAY} AND bucket = ?`,
    mergeDay: `INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')})
      SELECT project_id, dim, ${GRAIN_DAY}, ?, value, is_bot, SUM(events), SUM(page_views), ${SKETCH_COLUMNS.map((c) => `sa_sketch_union_all(${c})`).join(', ')}
      FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ${GRAIN_HOUR} AND bucket >= ? AND bucket < ? GROUP BY value, is_bot`,
    dims: AGGREGATE_DIMS,
    columns: AGGREGATE_COLUMNS,
    dayMs: DAY_MS,
    hourMs: HOUR_MS,
  };
}

/**
 * Prepares the erasure program on `db`, the connection the group commits write on, with their
 * aggregates (whose connection registered `sa_sketch_union_all`). Each call is one IMMEDIATE
 * transaction. Self-contained: nothing from outside its body and parameters but erased types.
 */
export function prepareSqliteUserErasure(
  db: Database.Database,
  aggregates: CommitAggregates,
  sql: SqliteErasureSql,
): (projectId: string, userId: string) => DeletedUser {
  const userEvents = db.prepare(sql.userEvents);
  const deleteChunks = db.prepare(sql.deleteChunks);
  const deleteEvents = db.prepare(sql.deleteEvents);
  const markHolders = db.prepare(sql.markHolders);
  const deleteStep = db.prepare(sql.deleteStep);
  const textKeyDeletes = sql.textKeyDeletes.map((text) => db.prepare(text));
  const forgetKeys = db.prepare(sql.forgetKeys);
  const removeHour = db.prepare(sql.removeHour);
  const removeHourSessions = db.prepare(sql.removeHourSessions);
  const readHour = db.prepare(sql.readHour);
  const removeDay = db.prepare(sql.removeDay);
  const mergeDay = db.prepare(sql.mergeDay);
  type Row = Record<string, string | number | null>;
  const dimValues = new Array<string | null>(sql.columns.length);

  const rebuildHour = (projectId: string, hour: number) => {
    for (const dim of sql.dims) removeHour.run(projectId, dim, hour);
    removeHourSessions.run(projectId, hour);
    const batch = aggregates.begin();
    for (const row of readHour.iterate(projectId, hour * sql.hourMs, (hour + 1) * sql.hourMs) as Iterable<Row>) {
      for (let k = 0; k < sql.columns.length; k++) dimValues[k] = row[sql.columns[k] as string] as string | null;
      const bot = row.is_bot === 1 ? 1 : 0;
      batch.add(String(row.project_id), String(row.event_type), row.session_id as string | null, Number(row.timestamp), bot, row.visitor_id as string | null, row.anonymous_id as string | null, dimValues);
    }
    // Writes the hour's rows, and adds to its day's rows, which the merge replaces.
    aggregates.apply(batch);
  };

  const erase = db.transaction((projectId: string, userId: string): DeletedUser => {
    const keys = new Set<string>();
    const days = new Set<number>();
    const hours = new Set<number>();
    const steps: Array<[number, number, string, string]> = [];
    for (const row of userEvents.iterate(projectId, userId) as Iterable<Row>) {
      for (const key of [row.session_id, row.anonymous_id, row.visitor_id]) if (typeof key === 'string') keys.add(key);
      const time = Number(row.timestamp);
      const day = Math.floor(time / sql.dayMs);
      days.add(day);
      hours.add(Math.floor(time / sql.hourMs));
      if (row.session_id === null) continue;
      const page = row.event_type === 'page_view';
      steps.push([day, page ? (row.path === null ? 1 : 0) : 2, page ? String(row.path ?? '') : String(row.event_type), String(row.event_id)]);
    }
    const erased = { recordings: deleteChunks.run(projectId, userId).changes, events: deleteEvents.run(projectId, userId).changes };
    for (const hour of hours) rebuildHour(projectId, hour);
    for (const day of new Set([...hours].map((hour) => Math.floor((hour * sql.hourMs) / sql.dayMs)))) {
      const hoursPerDay = sql.dayMs / sql.hourMs;
      for (const dim of sql.dims) {
        removeDay.run(projectId, dim, day);
        mergeDay.run(day, projectId, dim, day * hoursPerDay, (day + 1) * hoursPerDay);
      }
    }
    if (keys.size > 0) {
      const values = { p: projectId, keys: JSON.stringify([...keys]), days: JSON.stringify([...days]) };
      markHolders.run({ p: values.p, keys: values.keys });
      for (const [day, kind, value, eventId] of steps) deleteStep.run(projectId, day, kind, value, eventId);
      for (const statement of textKeyDeletes) statement.run(values);
      forgetKeys.run({ p: values.p, keys: values.keys });
    }
    return erased;
  });
  return (projectId, userId) => erase.immediate(projectId, userId);
}
