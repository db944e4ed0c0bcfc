import type Database from 'better-sqlite3';
import { aggregateColumnsSql, AGGREGATE_COLUMNS, AGGREGATE_DIMS, GRAIN_DAY, GRAIN_HOUR, GRAIN_WEEK, WEEK_DAYS, weekOfDaySql } from '../aggregates/aggregate-schema.js';
import { sqliteMergeSql } from './sqlite-aggregates.js';
import { HOUR_MS } from '../aggregates/aggregate-batch.js';
import type { DeletedUser } from '../event-store.js';
import { erasureRollupSql } from '../reports/rollup-erasure.js';
import { SQLITE_DIALECT } from '../reports/dialect.js';
import { DAY_MS } from '../reports/rollup-schema.js';
import type { CommitAggregates } from './sqlite-event-writer.js';

/*
 * The erasure of a user on SQLite, as one program that runs where the group commits run: on the
 * writer thread, which holds the database's only write connection of this process. On the request
 * thread an erasure stopped every HTTP request for as long as it took (bench/RESULTS.md, "Reads
 * beside writes"); on the writer thread the group commits queued behind it wait instead, while
 * the request thread keeps reading, validating and answering. Its cost grows with the user's
 * events and the hours they fall in, not with the project's events or sessions:
 *
 * - the user's events are found through `events_by_user` (`sqlite-schema.ts`, version 8);
 * - the aggregate rows (`sqlite-aggregates.ts`) the erased events were counted in, and only those,
 *   are built again: each hour row from the events its hour keeps, each day row merged again from
 *   its 24 hour rows, each week row from its 7 day rows;
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
  /** The days whose rollups hold one of the keys (`@p`, `@keys` as a JSON array), one per row. */
  holderDays: string;
  /** Marks those days (`@p`, `@holders` as a JSON array). */
  markHolders: string;
  /** Adds a mark to every marked day of the project (`@p`): a refresh in flight then drops its result. */
  markMarked: string;
  /** Deletes one `rollup_steps` row by its key (`?` project, day, kind, value, event id). */
  deleteStep: string;
  /** Deletes the rows that name a key as text (`@p`, `@keys`, `@days` as JSON arrays). */
  textKeyDeletes: string[];
  /** Deletes the rows of the user's days and the holders' (`@p`, `@touched` as a JSON array). */
  dayDeletes: string[];
  /** Takes the keys out of the dictionary (`@p`, `@keys`). */
  forgetKeys: string;
  /** Deletes one row of the aggregates (`?` project, dimension, grain, bucket, value, bot flag). */
  removeRow: string;
  /** Deletes one session row of an hour (`?` project, hour, session, bot flag). */
  removeSessionRow: string;
  /** The events of an hour for its aggregates (`?` project, from, to), with the columns below. */
  readHour: string;
  /**
   * Inserts one row merged from the finer rows it covers (`?` grain, bucket, project, dimension,
   * finer grain, first finer bucket, end finer bucket, value, bot flag): a day's from its hours, a
   * week's from its days.
   */
  mergeRow: string;
  /** The grains of hour, day and week rows. */
  grains: readonly [number, number, number];
  weekDays: number;
  dims: readonly string[];
  /** The dimension columns a commit's aggregates read, in their order. */
  columns: readonly string[];
  dayMs: number;
  hourMs: number;
}

/** What a commit's aggregates read of each event (`aggregate-batch.ts`'s `add`), with the dimension columns in their order. */
const AGGREGATE_EVENT_COLUMNS = `project_id, event_type, session_id, timestamp, is_bot, visitor_id, anonymous_id, ${aggregateColumnsSql(SQLITE_DIALECT.textProperty('message'))}`;

/** The statements of the erasure program for this build's schema. */
export function sqliteErasureSql(): SqliteErasureSql {
  const list = (name: string) => `(SELECT value FROM json_each(@${name}))`;
  const rollups = erasureRollupSql(() => '?', {
    p: '@p',
    keys: list('keys'),
    days: list('days'),
    touched: list('touched'),
    touchedWeeks: `(SELECT ${weekOfDaySql('value')} FROM json_each(@touched))`,
  });
  return {
    // What the rollups need of each of the user's events, and what the aggregates need.
    userEvents: rollups.userEvents.replace(/^SELECT /, `SELECT path, is_bot, ${AGGREGATE_EVENT_COLUMNS}, `),
    // Only the chunks uploaded under the user's id. Not the sessions the user's events name: the
    // client chooses session ids, so one event naming another's session would erase that person's
    // recording. The project's chunks, far fewer rows than its events, are scanned.
    deleteChunks: 'DELETE FROM recording_chunks WHERE project_id = ? AND user_id = ?',
    deleteEvents: 'DELETE FROM events WHERE project_id = ? AND user_id = ?',
    holderDays: rollups.holderDays,
    markHolders: `INSERT INTO rollup_dirty (project_id, day) SELECT @p, value FROM json_each(@holders) WHERE true
      ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1`,
    // A refresh in flight installs only if its day's marks did not move (`rollup-refresh.ts`); a day
    // in its first build has no rows the holders' query could find, yet its computed rows may hold
    // an erased key's id: every marked day of the project moves, so no such install lands.
    markMarked: 'UPDATE rollup_dirty SET marks = marks + 1 WHERE project_id = @p',
    deleteStep: 'DELETE FROM rollup_steps WHERE project_id = ? AND day = ? AND kind = ? AND value = ? AND event_id = ?',
    textKeyDeletes: rollups.textKeyDeletes,
    dayDeletes: rollups.dayDeletes,
    // A tombstone, not a delete: a new id is the largest plus one, and an erased key's id may still
    // sit in rows of marked days until their refresh (`rollup-erasure.ts`, step 4).
    forgetKeys: `UPDATE rollup_keys SET key = char(0) || 'erased:' || id WHERE project_id = @p AND key IN (SELECT value FROM json_each(@keys))`,
    removeRow: 'DELETE FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ? AND bucket = ? AND value = ? AND is_bot = ?',
    removeSessionRow: 'DELETE FROM agg_sessions WHERE project_id = ? AND hour = ? AND session_id = ? AND is_bot = ?',
    readHour: `SELECT ${AGGREGATE_EVENT_COLUMNS} FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?`,
    mergeRow: sqliteMergeSql('?', '?', 'project_id = ? AND dim = ? AND grain = ? AND bucket >= ? AND bucket < ? AND value = ? AND is_bot = ?', 'value, is_bot'),
    grains: [GRAIN_HOUR, GRAIN_DAY, GRAIN_WEEK],
    weekDays: WEEK_DAYS,
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
  const holderDays = db.prepare(sql.holderDays).pluck();
  const markHolders = db.prepare(sql.markHolders);
  const markMarked = db.prepare(sql.markMarked);
  const deleteStep = db.prepare(sql.deleteStep);
  const textKeyDeletes = sql.textKeyDeletes.map((text) => db.prepare(text));
  const dayDeletes = sql.dayDeletes.map((text) => db.prepare(text));
  const forgetKeys = db.prepare(sql.forgetKeys);
  const removeRow = db.prepare(sql.removeRow);
  const removeSessionRow = db.prepare(sql.removeSessionRow);
  const readHour = db.prepare(sql.readHour);
  const mergeRow = db.prepare(sql.mergeRow);
  const [hourGrain, dayGrain, weekGrain] = sql.grains;
  type Row = Record<string, string | number | null>;
  type Batch = ReturnType<CommitAggregates['begin']>;
  const dimValues = new Array<string | null>(sql.columns.length);
  /** Adds an event; with `only`, its values of other dimensions are left out (`${dim}\0${value}`, dimension indexes from 1). */
  const add = (batch: Batch, row: Row, only?: Set<string>) => {
    for (let k = 0; k < sql.columns.length; k++) {
      const value = row[sql.columns[k] as string] as string | null;
      dimValues[k] = only === undefined || (value !== null && only.has(`${k + 1}\u0000${value}`)) ? value : null;
    }
    const bot = row.is_bot === 1 ? 1 : 0;
    batch.add(String(row.project_id), String(row.event_type), row.session_id as string | null, Number(row.timestamp), bot, row.visitor_id as string | null, row.anonymous_id as string | null, dimValues);
  };
  const valueKey = (dim: number, hour: number, value: string, bot: number) => `${dim}\u0000${hour}\u0000${bot}\u0000${value}`;
  const sessionKey = (hour: number, session: string, bot: number) => `${hour}\u0000${bot}\u0000${session}`;

  /**
   * The aggregate rows the erased events were counted in, and only those, built again: each from
   * the events its hour keeps (a sketch cannot forget a key), then its day row merged again from
   * its 24 hour rows, and its week row from its 7 day rows. `erased` holds the erased events' own
   * groups, which name those rows.
   */
  const rebuildAggregates = (projectId: string, erased: Batch) => {
    const values = new Set<string>();
    const sessions = new Set<string>();
    /** The dimension values each hour's rebuild needs: the events' other values count in no row it replaces. */
    const hours = new Map<number, Set<string>>();
    const dayRows = new Map<string, [number, number, string, number]>();
    const weekRows = new Map<string, [number, number, string, number]>();
    for (const g of erased.values()) {
      values.add(valueKey(g.dim, g.hour, g.value, g.bot));
      let needed = hours.get(g.hour);
      if (needed === undefined) hours.set(g.hour, (needed = new Set()));
      if (g.dim > 0) needed.add(`${g.dim}\u0000${g.value}`);
      const day = Math.floor((g.hour * sql.hourMs) / sql.dayMs);
      dayRows.set(valueKey(g.dim, day, g.value, g.bot), [g.dim, day, g.value, g.bot]);
      const week = Math.floor(day / sql.weekDays);
      weekRows.set(valueKey(g.dim, week, g.value, g.bot), [g.dim, week, g.value, g.bot]);
      removeRow.run(projectId, sql.dims[g.dim], hourGrain, g.hour, g.value, g.bot);
    }
    for (const s of erased.sessions()) {
      sessions.add(sessionKey(s.hour, s.session, s.bot));
      removeSessionRow.run(projectId, s.hour, s.session, s.bot);
    }
    for (const [hour, needed] of hours) {
      const batch = aggregates.begin();
      for (const row of readHour.iterate(projectId, hour * sql.hourMs, (hour + 1) * sql.hourMs) as Iterable<Row>) add(batch, row, needed);
      // Only the hour rows just deleted: the hour's other rows never counted an erased event, and
      // their day and week rows are merged below.
      const kept = batch.values().filter((g) => values.has(valueKey(g.dim, g.hour, g.value, g.bot)));
      const keptSessions = batch.sessions().filter((s) => sessions.has(sessionKey(s.hour, s.session, s.bot)));
      aggregates.applyHours({ ...batch, empty: () => kept.length === 0 && keptSessions.length === 0, values: () => kept, sessions: () => keptSessions });
    }
    aggregates.recountSessions(projectId, new Set(erased.sessions().map((s) => s.session)));
    const hoursPerDay = sql.dayMs / sql.hourMs;
    for (const [dim, day, value, bot] of dayRows.values()) {
      removeRow.run(projectId, sql.dims[dim], dayGrain, day, value, bot);
      mergeRow.run(dayGrain, day, projectId, sql.dims[dim], hourGrain, day * hoursPerDay, (day + 1) * hoursPerDay, value, bot);
    }
    for (const [dim, week, value, bot] of weekRows.values()) {
      removeRow.run(projectId, sql.dims[dim], weekGrain, week, value, bot);
      mergeRow.run(weekGrain, week, projectId, sql.dims[dim], dayGrain, week * sql.weekDays, (week + 1) * sql.weekDays, value, bot);
    }
  };

  const erase = db.transaction((projectId: string, userId: string): DeletedUser => {
    const keys = new Set<string>();
    const days = new Set<number>();
    const steps: Array<[number, number, string, string]> = [];
    const erasedGroups = aggregates.begin();
    for (const row of userEvents.iterate(projectId, userId) as Iterable<Row>) {
      add(erasedGroups, row);
      for (const key of [row.session_id, row.anonymous_id, row.visitor_id]) if (typeof key === 'string') keys.add(key);
      const day = Math.floor(Number(row.timestamp) / sql.dayMs);
      days.add(day);
      if (row.session_id === null) continue;
      const page = row.event_type === 'page_view';
      steps.push([day, page ? (row.path === null ? 1 : 0) : 2, page ? String(row.path ?? '') : String(row.event_type), String(row.event_id)]);
    }
    const erased = { recordings: deleteChunks.run(projectId, userId).changes, events: deleteEvents.run(projectId, userId).changes };
    rebuildAggregates(projectId, erasedGroups);
    if (keys.size > 0) {
      const values = { p: projectId, keys: JSON.stringify([...keys]), days: JSON.stringify([...days]) };
      // Read once (a seek per key): the marks and the day deletes take the same days.
      const holders = holderDays.all({ p: values.p, keys: values.keys }) as number[];
      markHolders.run({ p: values.p, holders: JSON.stringify(holders) });
      markMarked.run({ p: values.p });
      for (const [day, kind, value, eventId] of steps) deleteStep.run(projectId, day, kind, value, eventId);
      for (const statement of textKeyDeletes) statement.run(values);
      // `touchedDays` of rollup-erasure.ts, written here: the program travels as source text.
      const touched = JSON.stringify([...new Set([...days, ...holders])]);
      for (const statement of dayDeletes) statement.run({ p: values.p, touched });
      forgetKeys.run({ p: values.p, keys: values.keys });
    }
    return erased;
  });
  return (projectId, userId) => erase.immediate(projectId, userId);
}
