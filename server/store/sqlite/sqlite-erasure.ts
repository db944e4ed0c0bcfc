import type Database from 'better-sqlite3';
import { aggregateColumnSelects, aggregateColumnsSql, AGGREGATE_COLUMNS, AGGREGATE_EVENT_KEYS, AGGREGATE_DIMS, GRAIN_DAY, GRAIN_HOUR, GRAIN_WEEK, SKETCH_COLUMNS, WEEK_DAYS, weekOfDaySql } from '../aggregates/aggregate-schema.js';
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
  /** What an hour's rebuild reads of each event beside its dimensions: `project_id, event_type, session_id, timestamp, is_bot, visitor_id, anonymous_id`. */
  hourKeys: string;
  /** The select expression of each of {@link columns}: an hour's rebuild reads only those of the values it builds again. */
  hourColumns: readonly string[];
  /** The rest of an hour's read, after its select list (`?` project, from, to). */
  hourFrom: string;
  /** The finer rows a day or week row is merged from (`?` project, dimension, finer grain, first finer bucket, end finer bucket, value, bot flag): counts, then {@link sketchColumns}. */
  readFiner: string;
  /** A row's {@link sketchColumns} (`?` project, dimension, grain, bucket, value, bot flag). */
  readSketches: string;
  /** Writes a row in place, or inserts it (`?` project, dimension, grain, bucket, value, bot flag, events, page views, then {@link sketchColumns}). */
  writeRow: string;
  sketchColumns: readonly string[];
  /** The grains of hour, day and week rows. */
  grains: readonly [number, number, number];
  weekDays: number;
  dims: readonly string[];
  /** The dimension columns a commit's aggregates read, in their order. */
  columns: readonly string[];
  dayMs: number;
  hourMs: number;
}

/** {@link AGGREGATE_EVENT_KEYS} with the dimension columns in their order. */
const AGGREGATE_EVENT_COLUMNS = `${AGGREGATE_EVENT_KEYS}, ${aggregateColumnsSql(SQLITE_DIALECT.textProperty('message'))}`;

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
    hourKeys: AGGREGATE_EVENT_KEYS,
    hourColumns: aggregateColumnSelects(SQLITE_DIALECT.textProperty('message')),
    hourFrom: 'FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?',
    readFiner: `SELECT events, page_views, ${SKETCH_COLUMNS.join(', ')} FROM agg_values
      WHERE project_id = ? AND dim = ? AND grain = ? AND bucket >= ? AND bucket < ? AND value = ? AND is_bot = ?`,
    readSketches: `SELECT ${SKETCH_COLUMNS.join(', ')} FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ? AND bucket = ? AND value = ? AND is_bot = ?`,
    // In place: the row keeps its rowid and its index entries, where a delete and an insert
    // rewrote both indexes. The estimates' trigger clears the row's kept estimates.
    writeRow: `INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')})
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${SKETCH_COLUMNS.map(() => '?').join(', ')})
      ON CONFLICT (project_id, dim, grain, bucket, value, is_bot) DO UPDATE SET events = excluded.events, page_views = excluded.page_views,
        ${SKETCH_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    sketchColumns: SKETCH_COLUMNS,
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
 * aggregates (`aggregates.kit` merges the day and week rows again). Each call is one IMMEDIATE
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
  const readFiner = db.prepare(sql.readFiner).raw(true);
  const readSketches = db.prepare(sql.readSketches).raw(true);
  const writeRow = db.prepare(sql.writeRow);
  /** An hour's read by the dimension columns it needs (their indexes, joined): rows as arrays, the keys first. */
  const hourReads = new Map<string, Database.Statement>();
  const hourRead = (columns: readonly number[]): Database.Statement => {
    const key = columns.join(',');
    let statement = hourReads.get(key);
    if (statement === undefined) {
      // A few shapes repeat (the dimensions one user's events have values of); the cache stays small.
      if (hourReads.size >= 64) hourReads.clear();
      statement = db.prepare(`SELECT ${sql.hourKeys}${columns.map((k) => `, ${sql.hourColumns[k]}`).join('')} ${sql.hourFrom}`).raw(true);
      hourReads.set(key, statement);
    }
    return statement;
  };
  const toBuffer = (bytes: Uint8Array | null): Buffer | null => (bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const [hourGrain, dayGrain, weekGrain] = sql.grains;
  type Row = Record<string, string | number | null>;
  type Batch = ReturnType<CommitAggregates['begin']>;
  const dimValues = new Array<string | null>(sql.columns.length);
  /** Adds an event (the user's own, read whole). */
  const add = (batch: Batch, row: Row) => {
    for (let k = 0; k < sql.columns.length; k++) dimValues[k] = row[sql.columns[k] as string] as string | null;
    const bot = row.is_bot === 1 ? 1 : 0;
    batch.add(String(row.project_id), String(row.event_type), row.session_id as string | null, Number(row.timestamp), bot, row.visitor_id as string | null, row.anonymous_id as string | null, dimValues);
  };
  /**
   * Adds an event of an hour read by {@link hourRead} of `columns`, its values of other
   * dimensions and other values left out (`only`: `${dim}\0${value}`, dimension indexes from 1).
   */
  const addHourRow = (batch: Batch, row: unknown[], columns: readonly number[], only: Set<string>) => {
    dimValues.fill(null);
    for (let j = 0; j < columns.length; j++) {
      const k = columns[j] as number;
      const value = row[7 + j] as string | null;
      if (value !== null && only.has(`${k + 1}\u0000${value}`)) dimValues[k] = value;
    }
    batch.add(String(row[0]), String(row[1]), row[2] as string | null, Number(row[3]), row[4] === 1 ? 1 : 0, row[5] as string | null, row[6] as string | null, dimValues);
  };
  const valueKey = (dim: number, hour: number, value: string, bot: number) => `${dim}\u0000${hour}\u0000${bot}\u0000${value}`;
  const sessionKey = (hour: number, session: string, bot: number) => `${hour}\u0000${bot}\u0000${session}`;

  /**
   * Merges a day row again from its hour rows, or a week row from its day rows (`finer` grain,
   * `span` of them): sums, and each sketch by `unionWithout`, which reads of the finer sketches
   * only the registers the erased keys (`erased`: the erased events' own sketches of the row)
   * hash to. Written in place; deleted when no finer row is left.
   */
  const mergeAgain = (projectId: string, grain: number, finer: number, span: number, [dim, bucket, value, bot]: [number, number, string, number], erased: Uint8Array[]) => {
    const rows = readFiner.all(projectId, sql.dims[dim], finer, bucket * span, (bucket + 1) * span, value, bot) as unknown[][];
    if (rows.length === 0) {
      removeRow.run(projectId, sql.dims[dim], grain, bucket, value, bot);
      return;
    }
    const previous = readSketches.get(projectId, sql.dims[dim], grain, bucket, value, bot) as Array<Uint8Array | null> | undefined;
    let events = 0;
    let pageViews = 0;
    for (const row of rows) {
      events += row[0] as number;
      pageViews += row[1] as number;
    }
    const sketches = sql.sketchColumns.map((_, c) =>
      toBuffer(aggregates.kit.unionWithout(previous?.[c] ?? null, rows.map((row) => row[2 + c] as Uint8Array | null), erased)),
    );
    writeRow.run(projectId, sql.dims[dim], grain, bucket, value, bot, events, pageViews, ...sketches);
  };

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
    /** The dimension columns each hour's read needs (indexes into `sql.columns`). */
    const hourColumns = new Map<number, Set<number>>();
    /** Day and week rows to merge again, with the erased events' sketches of each. */
    const dayRows = new Map<string, { row: [number, number, string, number]; erased: Uint8Array[] }>();
    const weekRows = new Map<string, { row: [number, number, string, number]; erased: Uint8Array[] }>();
    const note = (rows: typeof dayRows, row: [number, number, string, number], sketches: Uint8Array[]) => {
      const key = valueKey(...row);
      const noted = rows.get(key);
      if (noted === undefined) rows.set(key, { row, erased: [...sketches] });
      else noted.erased.push(...sketches);
    };
    for (const g of erased.values()) {
      values.add(valueKey(g.dim, g.hour, g.value, g.bot));
      let needed = hours.get(g.hour);
      let columns = hourColumns.get(g.hour);
      if (needed === undefined || columns === undefined) {
        hours.set(g.hour, (needed = new Set()));
        hourColumns.set(g.hour, (columns = new Set()));
      }
      if (g.dim > 0) {
        needed.add(`${g.dim}\u0000${g.value}`);
        columns.add(g.dim - 1);
      }
      // Every register an erased key sets, in any of the row's sketches: a few dozen for one user.
      const sketches = [g.visitors, g.visitorHashes, g.sessions, g.pageVisitors, g.pageVisitorHashes].flatMap((sketch) => (sketch === null ? [] : [sketch.toBytes()]));
      const day = Math.floor((g.hour * sql.hourMs) / sql.dayMs);
      note(dayRows, [g.dim, day, g.value, g.bot], sketches);
      note(weekRows, [g.dim, Math.floor(day / sql.weekDays), g.value, g.bot], sketches);
      removeRow.run(projectId, sql.dims[g.dim], hourGrain, g.hour, g.value, g.bot);
    }
    for (const s of erased.sessions()) {
      sessions.add(sessionKey(s.hour, s.session, s.bot));
      removeSessionRow.run(projectId, s.hour, s.session, s.bot);
    }
    for (const [hour, needed] of hours) {
      const batch = aggregates.begin();
      // Only the columns of the values built again, as arrays: most of an hour's read was making
      // an object of every column of every event.
      const columns = [...(hourColumns.get(hour) as Set<number>)].sort((a, b) => a - b);
      for (const row of hourRead(columns).iterate(projectId, hour * sql.hourMs, (hour + 1) * sql.hourMs) as Iterable<unknown[]>) addHourRow(batch, row, columns, needed);
      // Only the hour rows just deleted: the hour's other rows never counted an erased event, and
      // their day and week rows are merged below.
      const kept = batch.values().filter((g) => values.has(valueKey(g.dim, g.hour, g.value, g.bot)));
      const keptSessions = batch.sessions().filter((s) => sessions.has(sessionKey(s.hour, s.session, s.bot)));
      aggregates.applyHours({ ...batch, empty: () => kept.length === 0 && keptSessions.length === 0, values: () => kept, sessions: () => keptSessions });
    }
    aggregates.recountSessions(projectId, new Set(erased.sessions().map((s) => s.session)));
    const hoursPerDay = sql.dayMs / sql.hourMs;
    for (const { row, erased: sketches } of dayRows.values()) mergeAgain(projectId, dayGrain, hourGrain, hoursPerDay, row, sketches);
    for (const { row, erased: sketches } of weekRows.values()) mergeAgain(projectId, weekGrain, dayGrain, sql.weekDays, row, sketches);
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
