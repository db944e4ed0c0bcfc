import type Database from 'better-sqlite3';
import { type AggregateBatch, HOUR_MS, createAggregateBatch } from '../aggregates/aggregate-batch.js';
import { type SketchKit, createSketchKit } from '../aggregates/visitor-sketch.js';
import { ensureSqliteEstimateColumns } from '../aggregates/kept-estimates.js';
import type { CommitAggregates } from './sqlite-event-writer.js';
import { prepareSqliteSessionSummaries } from './sqlite-session-summaries.js';
import { SQLITE_DIALECT } from '../reports/dialect.js';
import { LONG_SESSION_MS, type SessionMoves, createSessionMoves } from '../aggregates/session-moves.js';
import { EVENT_PROJECTS_SQL, nextEventTimeSql } from '../shared/project-spans.js';
import {
  type AggregatesBuildListener,
  aggregateColumnsSql,
  AGGREGATE_COLUMNS,
  AGGREGATE_DIMS,
  AGGREGATE_PAGE_DIMS,
  AGGREGATE_SHAPE,
  AGGREGATE_TABLES,
  convertsInPlace,
  finerOf,
  GRAIN_DAY,
  GRAIN_HOUR,
  GRAIN_WEEK,
  SKETCH_COLUMNS,
  SQLITE_AGGREGATE_DDL,
  WEEK_DAYS,
  weekOfDaySql,
  wholeWeeks,
} from '../aggregates/aggregate-schema.js';

/**
 * Prepares what writes a commit's aggregate groups (`aggregate-batch.ts`) into SQLite's aggregate
 * tables, inside the caller's transaction: one upsert per group into its hour row, its day row and
 * its week row, counts added and sketches merged by `sa_sketch_union`, a function this connection
 * registers. `dims` names the aggregate dimensions by index.
 *
 * It runs in the writer thread, which receives it as source text, so it must stay self-contained:
 * nothing from outside its body and parameters but erased types. 24 and 168 below are the hours
 * in a day and in a week, 0, 1 and 2 the grains (`aggregate-schema.ts`).
 */
export function prepareSqliteAggregates(db: Database.Database, kit: SketchKit, dims: readonly string[]): (batch: AggregateBatch, hoursOnly?: boolean) => void {
  const toBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const union = (a: unknown, b: unknown): unknown => {
    if (a === null) return b;
    if (b === null) return a;
    return toBuffer(kit.unionSketchBytes(a as Uint8Array, b as Uint8Array));
  };
  db.function('sa_sketch_union', { deterministic: true }, union);
  // The union of a column's sketches over rows (a day's from its hours, after retention): one
  // sketch per group merged in place, encoded once at the end, where a union per row
  // decoded and encoded the whole sketch again at every row.
  db.aggregate('sa_sketch_union_all', {
    start: () => null,
    step: (merged: unknown, bytes: unknown): unknown =>
      bytes === null ? merged : ((merged as ReturnType<SketchKit['VisitorSketch']['empty']> | null) ?? kit.VisitorSketch.empty()).mergeBytes(bytes as Uint8Array),
    result: (merged: unknown): unknown => (merged === null ? null : toBuffer((merged as ReturnType<SketchKit['VisitorSketch']['empty']>).toBytes())),
  });
  const upsertValue = db.prepare<unknown[]>(
    `INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views,
       visitors, visitor_hashes, sessions, page_visitors, page_visitor_hashes)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, dim, grain, bucket, value, is_bot) DO UPDATE SET
       events = events + excluded.events, page_views = page_views + excluded.page_views,
       visitors = sa_sketch_union(visitors, excluded.visitors),
       visitor_hashes = sa_sketch_union(visitor_hashes, excluded.visitor_hashes),
       sessions = sa_sketch_union(sessions, excluded.sessions),
       page_visitors = sa_sketch_union(page_visitors, excluded.page_visitors),
       page_visitor_hashes = sa_sketch_union(page_visitor_hashes, excluded.page_visitor_hashes)`,
  );
  const upsertSession = db.prepare<unknown[]>(
    `INSERT INTO agg_sessions (project_id, hour, session_id, is_bot, first_ts, last_ts, events, page_views)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, hour, session_id, is_bot) DO UPDATE SET
       first_ts = MIN(first_ts, excluded.first_ts), last_ts = MAX(last_ts, excluded.last_ts),
       events = events + excluded.events, page_views = page_views + excluded.page_views`,
  );
  // An empty sketch is its 3-byte header alone, and is stored as null. (Asking its estimate ran the
  // whole estimator over every register of an hour's large sketch: a third of an erasure's hours.)
  const bytesOrNull = (sketch: { toBytes(): Uint8Array } | null): Buffer | null => {
    const bytes = sketch === null ? null : sketch.toBytes();
    return bytes === null || bytes.length <= 3 ? null : toBuffer(bytes);
  };
  return (batch, hoursOnly = false) => {
    if (batch.empty()) return;
    for (const g of batch.values()) {
      const sketches = [bytesOrNull(g.visitors), bytesOrNull(g.visitorHashes), bytesOrNull(g.sessions), bytesOrNull(g.pageVisitors), bytesOrNull(g.pageVisitorHashes)];
      const dim = dims[g.dim];
      upsertValue.run(g.project, dim, 0, g.hour, g.value, g.bot, g.events, g.pageViews, ...sketches);
      // The day and week rows are the dense ones: a union there decodes and encodes a full sketch.
      if (hoursOnly) continue;
      upsertValue.run(g.project, dim, 1, Math.floor(g.hour / 24), g.value, g.bot, g.events, g.pageViews, ...sketches);
      upsertValue.run(g.project, dim, 2, Math.floor(g.hour / 168), g.value, g.bot, g.events, g.pageViews, ...sketches);
    }
    for (const s of batch.sessions()) upsertSession.run(s.project, s.hour, s.session, s.bot, s.first, s.last, s.events, s.pageViews);
  };
}

/** What the aggregates of a commit need, as the writer thread gets them: each a self-contained function. */
export interface AggregateParts {
  createKit: () => SketchKit;
  prepare: typeof prepareSqliteAggregates;
  createBatch: (kit: SketchKit, dimCount: number, pageDims: readonly boolean[]) => AggregateBatch;
  prepareSessions: typeof prepareSqliteSessionSummaries;
  createMoves: () => SessionMoves;
  dims: readonly string[];
  pageDims: readonly boolean[];
}

/** The aggregates of the group commits on `db` (self-contained too: the writer thread gets it as source). */
export function openSqliteAggregates(db: Database.Database, parts: AggregateParts): CommitAggregates {
  const kit = parts.createKit();
  const apply = parts.prepare(db, kit, parts.dims);
  const summaries = parts.prepareSessions(db, parts.createMoves());
  return {
    kit,
    begin: () => parts.createBatch(kit, parts.dims.length, parts.pageDims),
    apply(batch, withSummaries = true) {
      apply(batch);
      if (withSummaries && !batch.empty()) summaries.add(batch.sessions());
    },
    applyHours: (batch) => apply(batch, true),
    recountSessions: (projectId, sessions) => summaries.recount(projectId, sessions),
  };
}

/** Milliseconds in a UTC day. */
const DAY_MS = 86_400_000;

/**
 * Creates the aggregate tables, or rebuilds them when their shape changed (`aggregate-schema.ts`):
 * a database of an earlier version gets its aggregates built from its events once, here, in one
 * transaction, before the writer starts. From then on only the group commits write them.
 */
export function ensureSqliteAggregates(db: Database.Database, open: () => CommitAggregates, onBuild?: AggregatesBuildListener): CommitAggregates {
  return db.transaction((): CommitAggregates => {
    const meta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agg_meta'").get();
    const shape = meta === undefined ? undefined : (db.prepare('SELECT shape FROM agg_meta').pluck().get() as number | undefined);
    if (shape === AGGREGATE_SHAPE || convertsInPlace(shape)) {
      const summarized = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agg_session_state'").get() !== undefined;
      // The day sums of shapes 4 and 5 hold only the sessions inside one day, under another key.
      if (shape !== AGGREGATE_SHAPE) db.exec('DROP TABLE IF EXISTS agg_session_days; DROP TABLE IF EXISTS agg_session_midnights');
      db.exec(SQLITE_AGGREGATE_DDL);
      ensureSqliteEstimateColumns(db);
      const started = performance.now();
      const told = onBuild !== undefined && (!summarized || shape !== AGGREGATE_SHAPE) && db.prepare('SELECT 1 FROM agg_sessions LIMIT 1').get() !== undefined;
      if (told) onBuild('building', 0, 'aggregates');
      if (!summarized) buildSessionSummaries(db);
      else if (shape !== AGGREGATE_SHAPE) buildSessionSums(db);
      const aggregates = open();
      if (shape === 4) addSqliteWeekRows(db);
      if (shape !== AGGREGATE_SHAPE) db.prepare('UPDATE agg_meta SET shape = ?').run(AGGREGATE_SHAPE);
      if (told) onBuild('built', performance.now() - started, 'aggregates');
      return aggregates;
    }
    const started = performance.now();
    // Said only when there are events to build from: a new database builds nothing.
    const told = onBuild !== undefined && db.prepare('SELECT 1 FROM events LIMIT 1').get() !== undefined;
    if (told) onBuild('building', 0, 'events');
    for (const table of AGGREGATE_TABLES) db.exec(`DROP TABLE IF EXISTS ${table}`);
    db.exec(SQLITE_AGGREGATE_DDL);
    ensureSqliteEstimateColumns(db);
    const aggregates = open();
    // Day by day, each day's rows written once: in insertion order, every slice of events touched
    // most days again and merged its sketches into theirs.
    const next = db.prepare(nextEventTimeSql(() => '?')).pluck();
    for (const projectId of db.prepare(EVENT_PROJECTS_SQL).pluck().all() as string[]) {
      for (let t = next.get(projectId, -Number.MAX_SAFE_INTEGER) as number | null; t !== null; ) {
        const day = Math.floor(t / DAY_MS);
        rebuildSqliteAggregateDays(db, aggregates, projectId, [day]);
        t = next.get(projectId, (day + 1) * DAY_MS) as number | null;
      }
    }
    // From the session rows, once: cheaper than a state read and written per session and day.
    buildSessionSummaries(db);
    db.prepare('INSERT INTO agg_meta (shape) VALUES (?)').run(AGGREGATE_SHAPE);
    if (told) onBuild('built', performance.now() - started, 'events');
    return aggregates;
  }).immediate();
}

/**
 * The INSERT of `agg_values` rows merged from other rows of it, grouped by `groupBy`: counts
 * summed and sketches unioned by `sa_sketch_union_all`, which a connection's aggregates register
 * (`prepareSqliteAggregates`). `grain` and `bucket` are SQL of the rows written, `where` selects
 * the rows merged. What merges a day from its hours, a week from its days (retention) and the week
 * rows of a database of shape 4 (an erasure merges its rows by `unionWithout`, `sqlite-erasure.ts`).
 */
export const sqliteMergeSql = (grain: string, bucket: string, where: string, groupBy: string): string =>
  `INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')})
   SELECT project_id, dim, ${grain}, ${bucket}, value, is_bot, SUM(events), SUM(page_views), ${SKETCH_COLUMNS.map((c) => `sa_sketch_union_all(${c})`).join(', ')}
   FROM agg_values WHERE ${where} GROUP BY ${groupBy}`;

/**
 * The week rows of a database of shape 4, merged from its day rows, in the caller's transaction,
 * on a connection whose aggregates are open. Any week row there is goes first (one written by a
 * process of this version while a process of the one before rebuilt the aggregates), so that no
 * day counts twice.
 */
function addSqliteWeekRows(db: Database.Database): void {
  db.prepare(`DELETE FROM agg_values WHERE grain = ${GRAIN_WEEK}`).run();
  db.exec(sqliteMergeSql(`${GRAIN_WEEK}`, weekOfDaySql('bucket'), `grain = ${GRAIN_DAY}`, `project_id, dim, ${weekOfDaySql('bucket')}, value, is_bot`));
}

/**
 * The session summaries of a database whose aggregates came before them, built once from its
 * session hour rows (a row per session and hour, far fewer than its events), in the caller's
 * transaction: each session's two countings, then the sums and midnights ({@link buildSessionSums}).
 */
function buildSessionSummaries(db: Database.Database): void {
  db.exec(`INSERT INTO agg_session_state (project_id, session_id, h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views)
    SELECT project_id, session_id,
      MIN(CASE WHEN is_bot = 0 THEN first_ts END), MAX(CASE WHEN is_bot = 0 THEN last_ts END),
      COALESCE(SUM(CASE WHEN is_bot = 0 THEN events END), 0), COALESCE(SUM(CASE WHEN is_bot = 0 THEN page_views END), 0),
      MIN(first_ts), MAX(last_ts), SUM(events), SUM(page_views)
    FROM agg_sessions GROUP BY project_id, session_id`);
  buildSessionSums(db);
}

/**
 * The sums of the sessions per first and last day and the midnights they cross, from the session
 * states, in the caller's transaction, in place of what those tables hold: what a database of
 * aggregate shape 4 or 5 (`aggregate-schema.ts`) lacks.
 */
function buildSessionSums(db: Database.Database): void {
  db.exec('DELETE FROM agg_session_days; DELETE FROM agg_session_midnights');
  for (const [withBots, first, last, pageViews] of [
    [0, 'h_first', 'h_last', 'h_page_views'],
    [1, 'first_ts', 'last_ts', 'page_views'],
  ] as const) {
    db.exec(`INSERT INTO agg_session_days (project_id, day, last_day, with_bots, sessions, bounces, duration, page_views)
      SELECT project_id, ${first} / ${DAY_MS}, ${last} / ${DAY_MS}, ${withBots}, COUNT(*), SUM(CASE WHEN ${pageViews} <= 1 THEN 1 ELSE 0 END), SUM(${last} - ${first}), SUM(${pageViews})
      FROM agg_session_state WHERE ${first} IS NOT NULL GROUP BY project_id, ${first} / ${DAY_MS}, ${last} / ${DAY_MS}`);
  }
  db.exec(`WITH RECURSIVE m (project_id, day, last_day, session_id) AS (
      SELECT project_id, first_ts / ${DAY_MS} + 1, last_ts / ${DAY_MS}, session_id FROM agg_session_state
        WHERE first_ts / ${DAY_MS} <> last_ts / ${DAY_MS} AND last_ts - first_ts < ${LONG_SESSION_MS}
      UNION ALL SELECT project_id, day + 1, last_day, session_id FROM m WHERE day < last_day)
    INSERT INTO agg_session_midnights (project_id, day, session_id) SELECT project_id, day, session_id FROM m`);
}

/** The aggregate parts of this process, for a commit on the calling thread (an in-memory database). */
export const SQLITE_AGGREGATE_PARTS: AggregateParts = {
  createKit: createSketchKit,
  prepare: prepareSqliteAggregates,
  createBatch: createAggregateBatch,
  prepareSessions: prepareSqliteSessionSummaries,
  createMoves: createSessionMoves,
  dims: AGGREGATE_DIMS,
  pageDims: AGGREGATE_PAGE_DIMS,
};

/** The same as source text of a function from a connection to its {@link CommitAggregates}, for the writer thread. */
export const SQLITE_AGGREGATES_SOURCE = `(db) => (${openSqliteAggregates.toString()})(db, {
  createKit: ${createSketchKit.toString()},
  prepare: ${prepareSqliteAggregates.toString()},
  createBatch: ${createAggregateBatch.toString()},
  prepareSessions: ${prepareSqliteSessionSummaries.toString()},
  createMoves: ${createSessionMoves.toString()},
  dims: ${JSON.stringify(AGGREGATE_DIMS)},
  pageDims: ${JSON.stringify(AGGREGATE_PAGE_DIMS)},
})`;

/**
 * The aggregate rows of whole UTC days `[first, end)` of a project, and of the weeks wholly inside
 * them: what a day's rebuild or retention deletes, per dimension through the key index.
 */
function deleteDays(db: Database.Database, projectId: string, first: number, end: number): void {
  const values = db.prepare<unknown[]>('DELETE FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ? AND bucket >= ? AND bucket < ?');
  for (const dim of AGGREGATE_DIMS) {
    values.run(projectId, dim, GRAIN_WEEK, ...wholeWeeks(first, end));
    values.run(projectId, dim, GRAIN_DAY, first, end);
    values.run(projectId, dim, GRAIN_HOUR, first * 24, end * 24);
  }
  db.prepare('DELETE FROM agg_sessions WHERE project_id = ? AND hour >= ? AND hour < ?').run(projectId, first * 24, end * 24);
}

/**
 * Builds the aggregates of some UTC days of a project from the events they hold, inside the
 * caller's transaction: what the first open of a database without aggregates does, day by day,
 * without the session summaries, which it builds after the last day. Each day adds to its week's
 * rows, which must hold none of its events yet.
 */
function rebuildSqliteAggregateDays(db: Database.Database, aggregates: CommitAggregates, projectId: string, days: Iterable<number>): void {
  const read = db.prepare<unknown[]>(`SELECT ${REBUILD_COLUMNS} FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?`);
  for (const day of days) {
    deleteDays(db, projectId, day, day + 1);
    const batch = aggregates.begin();
    addRows(batch, read.iterate(projectId, day * DAY_MS, (day + 1) * DAY_MS) as Iterable<Record<string, string | number | null>>);
    // The session summaries are built after the last day (`ensureSqliteAggregates`).
    aggregates.apply(batch, false);
  }
}

/** What a rebuild reads of each event. */
const REBUILD_COLUMNS = `project_id, event_type, session_id, timestamp, is_bot, visitor_id, anonymous_id, ${aggregateColumnsSql(SQLITE_DIALECT.textProperty('message'))}`;

/** Adds events read as {@link REBUILD_COLUMNS} to a commit's groups. */
function addRows(batch: AggregateBatch, rows: Iterable<Record<string, string | number | null>>): void {
  const dimValues = new Array<string | null>(AGGREGATE_COLUMNS.length);
  for (const row of rows) {
    for (let k = 0; k < AGGREGATE_COLUMNS.length; k++) dimValues[k] = row[AGGREGATE_COLUMNS[k] as string] as string | null;
    batch.add(
      row.project_id as string,
      row.event_type as string,
      row.session_id as string | null,
      row.timestamp as number,
      row.is_bot === 1 ? 1 : 0,
      row.visitor_id as string | null,
      row.anonymous_id as string | null,
      dimValues,
    );
  }
}

/** The lowest day number the aggregates can hold a row of: where "everything before" starts. */
const FIRST_DAY = -10_000_000;

/**
 * Retention's part, inside the caller's transaction, once the events before `cutoff` are deleted:
 * the rows of the hours before the cut-off's hour go, the hour it cuts is built again from the
 * events it keeps (an hour of events at most), the cut day's rows are merged again from its hour
 * rows and the cut week's from its day rows, sums and sketch unions, never from the events.
 */
export function cutSqliteAggregatesAt(db: Database.Database, aggregates: CommitAggregates, projectId: string, cutoff: number): void {
  const cutHour = Math.floor(cutoff / HOUR_MS);
  const cutDay = Math.floor(cutHour / 24);
  const cut = cutoff > cutHour * HOUR_MS;
  // The sessions the cut reaches, counted again once their hour rows are.
  const touched = db
    .prepare<unknown[]>('SELECT DISTINCT session_id FROM agg_sessions WHERE project_id = ? AND hour < ?')
    .pluck()
    .all(projectId, cut ? cutHour + 1 : cutHour) as string[];
  deleteDays(db, projectId, FIRST_DAY, cutDay);
  const hours = db.prepare<unknown[]>('DELETE FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ? AND bucket >= ? AND bucket < ?');
  const sessions = db.prepare<unknown[]>('DELETE FROM agg_sessions WHERE project_id = ? AND hour >= ? AND hour < ?');
  for (const dim of AGGREGATE_DIMS) hours.run(projectId, dim, GRAIN_HOUR, cutDay * 24, cut ? cutHour + 1 : cutHour);
  sessions.run(projectId, cutDay * 24, cut ? cutHour + 1 : cutHour);
  if (cut) {
    const read = db.prepare<unknown[]>(`SELECT ${REBUILD_COLUMNS} FROM events WHERE project_id = ? AND timestamp >= ? AND timestamp < ?`);
    const batch = aggregates.begin();
    addRows(batch, read.iterate(projectId, cutHour * HOUR_MS, (cutHour + 1) * HOUR_MS) as Iterable<Record<string, string | number | null>>);
    // The hour's rows only: its day's and week's are merged below.
    aggregates.applyHours(batch);
  }
  mergeFromFiner(db, projectId, GRAIN_DAY, [cutDay]);
  mergeFromFiner(db, projectId, GRAIN_WEEK, [Math.floor(cutDay / WEEK_DAYS)]);
  // A session across the cut-off now starts on a later day, which nothing else marks: the reports
  // kept per day count the sessions that start on each (`reports/session-days.ts`).
  const mark = db.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1');
  for (const day of aggregates.recountSessions(projectId, touched)) mark.run(projectId, day);
  db.prepare('DELETE FROM agg_session_days WHERE project_id = ? AND day < ?').run(projectId, cutDay);
}

/**
 * Replaces the rows of `grain` (a day, a week) in `buckets` by the merge of the finer rows they
 * cover (its hours, its days): sums, and sketch unions, never the events.
 */
function mergeFromFiner(db: Database.Database, projectId: string, grain: typeof GRAIN_DAY | typeof GRAIN_WEEK, buckets: Iterable<number>): void {
  const [finer, per] = finerOf(grain);
  const remove = db.prepare<unknown[]>(`DELETE FROM agg_values WHERE project_id = ? AND dim = ? AND grain = ${grain} AND bucket = ?`);
  const merge = db.prepare<unknown[]>(sqliteMergeSql(`${grain}`, '?', `project_id = ? AND dim = ? AND grain = ${finer} AND bucket >= ? AND bucket < ?`, 'value, is_bot'));
  for (const bucket of buckets) {
    for (const dim of AGGREGATE_DIMS) {
      remove.run(projectId, dim, bucket);
      merge.run(bucket, projectId, dim, bucket * per, bucket * per + per);
    }
  }
}
