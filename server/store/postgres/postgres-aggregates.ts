import type pg from 'pg';
import { type AggregateBatch, HOUR_MS, type SessionGroup, type ValueGroup, createAggregateBatch } from '../aggregates/aggregate-batch.js';
import { ESTIMATE_COLUMNS, ensurePostgresEstimateColumns } from '../aggregates/kept-estimates.js';
import {
  type AggregatesBuildListener,
  AGGREGATE_COLUMNS,
  aggregateColumnSelects,
  AGGREGATE_EVENT_KEYS,
  errorMessageOf,
  AGGREGATE_DIMS,
  AGGREGATE_PAGE_DIMS,
  AGGREGATE_SHAPE,
  convertsInPlace,
  finerOf,
  GRAIN_DAY,
  GRAIN_HOUR,
  GRAIN_WEEK,
  POSTGRES_AGGREGATE_DDL,
  POSTGRES_AGGREGATE_TABLES,
  SKETCH_COLUMNS,
  WEEK_DAYS,
  weekOfDaySql,
  wholeWeeks,
} from '../aggregates/aggregate-schema.js';
import { type VisitorSketch, createSketchKit } from '../aggregates/visitor-sketch.js';
import type { KeyRegisterSql } from './postgres-hll.js';
import type { SketchUnionSql } from '../aggregates/aggregate-queries.js';
import type { StoredEvent } from '../event-store.js';
import { SCHEMA_LOCK_SQL } from './postgres-schema.js';
import { POSTGRES_DIALECT } from '../reports/dialect.js';
import { inTransaction } from './postgres-transaction.js';
import { EVENT_PROJECTS_SQL, nextEventTimeSql } from '../shared/project-spans.js';
import { cleanText } from '../shared/sanitize.js';
import { addPostgresSessionSummaries, buildPostgresSessionSummaries, buildPostgresSessionSums, recountPostgresSessions } from './postgres-session-summaries.js';

/*
 * The report aggregates on PostgreSQL (`aggregates/aggregate-schema.ts`), written in the group
 * commit's transaction as *parts*: a commit inserts its own rows, one per key it touches, and
 * never updates a row. A sketch merge is a read, a merge here and a write; done by every commit on
 * the rows it shares with the others (the project's current hour has one key every commit
 * touches), it made the commits of a project wait on each other from that read to their commit,
 * and halved the ingest rate (bench/RESULTS.md). Reports sum and merge whatever parts a key has,
 * as they merge the rows of many days, so several parts per key answer the same numbers; the
 * compaction below merges a key's parts into one in the background, so reads stay short.
 *
 * Commits take the project's aggregate lock shared (they do not wait for each other); what builds
 * days again from the events (erasure, retention) takes it exclusive, so no commit's parts fall
 * between its read of the events and its write of the rows.
 */

const DAY_MS = 86_400_000;

/** The sketch code of this process's commits; one kit, so that its sketches merge with each other. */
const POSTGRES_KIT = createSketchKit();
const Sketch = POSTGRES_KIT.VisitorSketch;

/** The advisory lock of a project's aggregates, as SQL over the project expression. */
const LOCK_KEY = (project: string) => `hashtext('agg:' || ${project})`;

/** Takes the aggregate lock of a project exclusive: no commit writes parts until this transaction ends. */
async function lockExclusive(client: pg.PoolClient, projectId: string): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(${LOCK_KEY('$1::text')})`, [projectId]);
}

/** One `agg_values` row of a commit: a group's counts and sketches at one grain (or, merged again by an erasure, their stored bytes). */
interface RowDelta<S extends VisitorSketch | Uint8Array = VisitorSketch | Uint8Array> {
  project: string;
  dim: string;
  grain: number;
  bucket: number;
  value: string;
  bot: boolean;
  events: number;
  pageViews: number;
  sketches: Array<S | null>;
}

const sketchesOf = (g: ValueGroup): Array<VisitorSketch | null> => [g.visitors, g.visitorHashes, g.sessions, g.pageVisitors, g.pageVisitorHashes];

/** The commit's rows, a group's hour, day and week rows each, groups of one day (week) merged into its day (week) row. */
function rowDeltas(groups: readonly ValueGroup[]): RowDelta<VisitorSketch>[] {
  const rows = new Map<string, RowDelta<VisitorSketch>>();
  for (const g of groups) {
    const dim = AGGREGATE_DIMS[g.dim] as string;
    for (const [grain, bucket] of [
      [GRAIN_HOUR, g.hour],
      [GRAIN_DAY, Math.floor(g.hour / 24)],
      [GRAIN_WEEK, Math.floor(g.hour / (24 * WEEK_DAYS))],
    ] as const) {
      const key = `${g.project}\u0000${dim}\u0000${grain}\u0000${bucket}\u0000${g.value}\u0000${g.bot}`;
      const row = rows.get(key);
      if (row === undefined) {
        rows.set(key, { project: g.project, dim, grain, bucket, value: g.value, bot: g.bot === 1, events: g.events, pageViews: g.pageViews, sketches: sketchesOf(g) });
        continue;
      }
      row.events += g.events;
      row.pageViews += g.pageViews;
      row.sketches = row.sketches.map((s, i) => {
        const other = sketchesOf(g)[i] ?? null;
        if (s === null) return other === null ? null : Sketch.empty().merge(other);
        // A copy: the group's own sketch may also stand in its hour row.
        return other === null ? s : Sketch.empty().merge(s).merge(other);
      });
    }
  }
  return [...rows.values()];
}

/** The bytes of a sketch as stored: none for an empty one (3 bytes, its header). */
const storedBytes = (bytes: Uint8Array | null): Buffer | null =>
  bytes === null || bytes.length <= 3 ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const bytesOrNull = (sketch: VisitorSketch | Uint8Array | null): Buffer | null => storedBytes(sketch === null || sketch instanceof Uint8Array ? sketch : sketch.toBytes());


/**
 * Inserts a commit's groups as parts, in the caller's transaction, with the projects' aggregate
 * locks taken shared in the same statement (see the top of the file), and adds its sessions to
 * the session summaries; with `summaries` false (retention writing an hour again) those are left
 * to a recount.
 */
export async function applyPostgresAggregates(client: pg.PoolClient, batch: AggregateBatch, summaries = true): Promise<void> {
  if (batch.empty()) return;
  await insertParts(client, rowDeltas(batch.values()), batch.sessions());
  if (summaries) await addPostgresSessionSummaries(client, batch.sessions());
}

/** Named where it runs (each connection then parses and plans it once): every group commit runs it. */
const PARTS_SQL = `WITH locked AS (SELECT count(pg_advisory_xact_lock_shared(${LOCK_KEY('p')})) AS n FROM unnest($1::text[]) AS p),
     v AS (
       INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')})
       SELECT u.* FROM unnest($2::text[], $3::text[], $4::int2[], $5::bigint[], $6::text[], $7::bool[], $8::bigint[], $9::bigint[],
         $10::bytea[], $11::bytea[], $12::bytea[], $13::bytea[], $14::bytea[]) AS u, locked),
     s AS (
       INSERT INTO agg_sessions (project_id, hour, session_id, is_bot, first_ts, last_ts, events, page_views)
       SELECT u.* FROM unnest($15::text[], $16::bigint[], $17::text[], $18::bool[], $19::bigint[], $20::bigint[], $21::bigint[], $22::bigint[]) AS u, locked)
     SELECT n FROM locked`;

/** Inserts rows and session rows as parts, with their projects' aggregate locks taken shared in the same statement. */
async function insertParts(client: pg.PoolClient, deltas: readonly RowDelta[], sessions: readonly SessionGroup[]): Promise<void> {
  const projects = [...new Set([...deltas.map((d) => d.project), ...sessions.map((s) => s.project)])].sort();
  if (projects.length === 0) return;
  await client.query({
    name: 'agg-parts',
    text: PARTS_SQL,
    values: [
      projects,
      deltas.map((d) => d.project),
      deltas.map((d) => d.dim),
      deltas.map((d) => d.grain),
      deltas.map((d) => d.bucket),
      deltas.map((d) => d.value),
      deltas.map((d) => d.bot),
      deltas.map((d) => d.events),
      deltas.map((d) => d.pageViews),
      ...SKETCH_COLUMNS.map((_, i) => deltas.map((d) => bytesOrNull(d.sketches[i] ?? null))),
      sessions.map((s) => s.project),
      sessions.map((s) => s.hour),
      sessions.map((s) => s.session),
      sessions.map((s) => s.bot === 1),
      sessions.map((s) => s.first),
      sessions.map((s) => s.last),
      sessions.map((s) => s.events),
      sessions.map((s) => s.pageViews),
    ],
  });
}

/** Takes the aggregate locks of `projects` shared, in one order: what a compaction holds while it merges their parts. */
async function lockShared(client: pg.PoolClient, projects: Iterable<string>): Promise<void> {
  for (const project of [...new Set(projects)].sort()) await client.query(`SELECT pg_advisory_xact_lock_shared(${LOCK_KEY('$1::text')})`, [project]);
}

/** Keys merged per compaction transaction. */
const COMPACT_KEYS = 500;

/** Where a compaction got to: the parts up to `part` were seen. */
export interface CompactionMark {
  values: number;
  sessions: number;
  sessionDays: number;
}

/**
 * Where the compaction got to, as saved by {@link saveCompactionMark} (all zero before any). A mark
 * past its table's newest part is of a table made again since (its parts numbered from 1 again; a
 * process of the numbering before may have saved it after the drop): that table starts from 0.
 */
export async function savedCompactionMark(pool: pg.Pool): Promise<CompactionMark> {
  const { rows } = await pool.query<Record<'values_part' | 'sessions_part' | 'session_days_part' | 'values_last' | 'sessions_last' | 'session_days_last', string | null>>(
    `SELECT c.values_part, c.sessions_part, c.session_days_part,
       (SELECT max(part) FROM agg_values) AS values_last, (SELECT max(part) FROM agg_sessions) AS sessions_last,
       (SELECT max(part) FROM agg_session_days) AS session_days_last
     FROM agg_compaction c`,
  );
  const row = rows[0];
  const within = (mark: string | null | undefined, last: string | null | undefined) => (Number(mark ?? 0) <= Number(last ?? 0) ? Number(mark ?? 0) : 0);
  return {
    values: within(row?.values_part, row?.values_last),
    sessions: within(row?.sessions_part, row?.sessions_last),
    sessionDays: within(row?.session_days_part, row?.session_days_last),
  };
}

/**
 * Saves where the compaction got to: a process started later begins there. Without it each start
 * read every part of `agg_values` and `agg_sessions` from the first to find the keys with more
 * than one (3.6 and 3.3 s at 10M events), the sessions' round under the projects' aggregate locks
 * taken shared, so that an erasure right after a start waited for it. A part another process
 * committed more than a round late, below a saved mark, stays a part until its key gets another
 * (a start no longer sweeps it up): reads sum every part, so only their cost changes.
 */
export async function saveCompactionMark(pool: pg.Pool, mark: CompactionMark): Promise<void> {
  await pool.query(
    `INSERT INTO agg_compaction (id, values_part, sessions_part, session_days_part) VALUES (1, $1, $2, $3)
     ON CONFLICT (id) DO UPDATE SET values_part = excluded.values_part, sessions_part = excluded.sessions_part, session_days_part = excluded.session_days_part`,
    [mark.values, mark.sessions, mark.sessionDays],
  );
}

/**
 * Merges the parts of the keys that got new parts since `mark` into one row per key, and returns
 * the new mark. Each part is locked (`SKIP LOCKED`: a part another process is merging is left to
 * it), deleted, and its key's merged row inserted, in one transaction per slice of keys; a
 * commit's parts inserted meanwhile are not touched, and wait for the next round.
 */
export async function compactPostgresAggregates(pool: pg.Pool, mark: CompactionMark): Promise<CompactionMark> {
  const next = { ...mark };
  const newestValue = await pool.query<{ last: string | null }>('SELECT max(part) AS last FROM agg_values');
  next.values = Math.max(mark.values, Number(newestValue.rows[0]?.last ?? 0));
  // The keys that got a part since the mark and have more than one: a key's single part is left alone.
  const keys = await pool.query<Record<string, unknown>>(
    `WITH touched AS (SELECT DISTINCT project_id, dim, grain, bucket, value, is_bot FROM agg_values WHERE part > $1 AND part <= $2)
     SELECT t.project_id, t.dim, t.grain, t.bucket, t.value, t.is_bot FROM touched t
       JOIN agg_values a USING (project_id, dim, grain, bucket, value, is_bot)
     GROUP BY t.project_id, t.dim, t.grain, t.bucket, t.value, t.is_bot HAVING count(*) > 1`,
    [mark.values, next.values],
  );
  for (let start = 0; start < keys.rows.length; start += COMPACT_KEYS) {
    const slice = keys.rows.slice(start, start + COMPACT_KEYS);
    await inTransaction(pool, 'BEGIN', async (client) => {
      // Shared, as a commit's: a rebuild (exclusive) must not delete the parts this merges between
      // their merge and its own read, which would keep the merged part beside the rebuilt rows.
      await lockShared(client, slice.map((k) => String(k.project_id)));
      const { rows } = await client.query<Record<string, unknown>>(
        `SELECT a.part, a.project_id, a.dim, a.grain, a.bucket, a.value, a.is_bot, a.events, a.page_views, ${SKETCH_COLUMNS.map((c) => `a.${c}`).join(', ')}
         FROM agg_values a JOIN unnest($1::text[], $2::text[], $3::int2[], $4::bigint[], $5::text[], $6::bool[]) AS k(p, d, g, b, v, bot)
           ON a.project_id = k.p AND a.dim = k.d AND a.grain = k.g AND a.bucket = k.b AND a.value = k.v AND a.is_bot = k.bot
         FOR UPDATE OF a SKIP LOCKED`,
        ['project_id', 'dim', 'grain', 'bucket', 'value', 'is_bot'].map((c) => slice.map((k) => k[c])),
      );
      const merged = new Map<string, { key: Record<string, unknown>; parts: number[]; events: number; pageViews: number; sketches: Array<VisitorSketch | null> }>();
      for (const r of rows) {
        const id = `${r.project_id}\u0000${r.dim}\u0000${r.grain}\u0000${r.bucket}\u0000${r.value}\u0000${r.is_bot}`;
        let m = merged.get(id);
        if (m === undefined) merged.set(id, (m = { key: r, parts: [], events: 0, pageViews: 0, sketches: SKETCH_COLUMNS.map(() => null) }));
        m.parts.push(Number(r.part));
        m.events += Number(r.events);
        m.pageViews += Number(r.page_views);
        m.sketches = m.sketches.map((sketch, i) => {
          const bytes = r[SKETCH_COLUMNS[i] as string];
          if (!(bytes instanceof Uint8Array)) return sketch;
          return (sketch ?? Sketch.empty()).mergeBytes(bytes);
        });
      }
      const many = [...merged.values()].filter((m) => m.parts.length > 1);
      if (many.length > 0) {
        await client.query('DELETE FROM agg_values WHERE part = ANY($1::bigint[])', [many.flatMap((m) => m.parts)]);
        await client.query(
          `INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')})
           SELECT * FROM unnest($1::text[], $2::text[], $3::int2[], $4::bigint[], $5::text[], $6::bool[], $7::bigint[], $8::bigint[],
             $9::bytea[], $10::bytea[], $11::bytea[], $12::bytea[], $13::bytea[])`,
          [
            ...['project_id', 'dim', 'grain', 'bucket', 'value', 'is_bot'].map((c) => many.map((m) => m.key[c])),
            many.map((m) => m.events),
            many.map((m) => m.pageViews),
            ...SKETCH_COLUMNS.map((_, i) => many.map((m) => bytesOrNull(m.sketches[i] ?? null))),
          ],
        );
      }
    });
  }
  // Sessions merge in SQL: a part is only counts and times. Under the projects' locks taken shared,
  // as above.
  const newest = await pool.query<{ last: string | null }>('SELECT max(part) AS last FROM agg_sessions');
  const last = Number(newest.rows[0]?.last ?? mark.sessions);
  await inTransaction(pool, 'BEGIN', async (client) => {
    const touched = await client.query<{ project_id: string }>('SELECT DISTINCT project_id FROM agg_sessions WHERE part > $1 AND part <= $2', [mark.sessions, last]);
    await lockShared(client, touched.rows.map((row) => row.project_id));
    await client.query(
      `WITH touched AS (SELECT DISTINCT project_id, hour, session_id, is_bot FROM agg_sessions WHERE part > $1 AND part <= $2),
       keys AS (SELECT project_id, hour, session_id, is_bot FROM agg_sessions JOIN touched USING (project_id, hour, session_id, is_bot)
         GROUP BY project_id, hour, session_id, is_bot HAVING count(*) > 1),
       parts AS (SELECT s.part FROM agg_sessions s JOIN keys USING (project_id, hour, session_id, is_bot) FOR UPDATE OF s SKIP LOCKED),
       moved AS (DELETE FROM agg_sessions d USING parts WHERE d.part = parts.part RETURNING d.*)
       INSERT INTO agg_sessions (project_id, hour, session_id, is_bot, first_ts, last_ts, events, page_views)
       SELECT project_id, hour, session_id, is_bot, min(first_ts), max(last_ts), sum(events), sum(page_views) FROM moved
       GROUP BY project_id, hour, session_id, is_bot`,
      [mark.sessions, last],
    );
  });
  next.sessions = Math.max(next.sessions, last);
  // The session summaries' day sums, as the session rows.
  const newestDay = await pool.query<{ last: string | null }>('SELECT max(part) AS last FROM agg_session_days');
  const lastDay = Number(newestDay.rows[0]?.last ?? mark.sessionDays);
  await inTransaction(pool, 'BEGIN', async (client) => {
    const touched = await client.query<{ project_id: string }>('SELECT DISTINCT project_id FROM agg_session_days WHERE part > $1 AND part <= $2', [mark.sessionDays, lastDay]);
    await lockShared(client, touched.rows.map((row) => row.project_id));
    await client.query(
      `WITH touched AS (SELECT DISTINCT project_id, with_bots, day, last_day FROM agg_session_days WHERE part > $1 AND part <= $2),
       keys AS (SELECT project_id, with_bots, day, last_day FROM agg_session_days JOIN touched USING (project_id, with_bots, day, last_day)
         GROUP BY project_id, with_bots, day, last_day HAVING count(*) > 1),
       parts AS (SELECT d.part FROM agg_session_days d JOIN keys USING (project_id, with_bots, day, last_day) FOR UPDATE OF d SKIP LOCKED),
       moved AS (DELETE FROM agg_session_days d USING parts WHERE d.part = parts.part RETURNING d.*)
       INSERT INTO agg_session_days (project_id, day, last_day, with_bots, sessions, bounces, duration, page_views)
       SELECT project_id, day, last_day, with_bots, sum(sessions), sum(bounces), sum(duration), sum(page_views) FROM moved
       GROUP BY project_id, day, last_day, with_bots`,
      [mark.sessionDays, lastDay],
    );
  });
  next.sessionDays = Math.max(next.sessionDays, lastDay);
  return next;
}

/** The groups of the events a commit stored (`inserted[i]`), their text cleaned as the insert stores it. */
export function batchOfStored(events: readonly StoredEvent[], inserted: readonly boolean[]): AggregateBatch {
  const batch = newBatch();
  const dimValues = new Array<string | null>(AGGREGATE_COLUMNS.length);
  const clean = (value: string | null): string | null => (value === null ? null : cleanText(value));
  for (let i = 0; i < events.length; i++) {
    if (inserted[i] !== true) continue;
    const e = events[i] as StoredEvent;
    const d = e.dimensions;
    const type = cleanText(e.eventType);
    // `AGGREGATE_COLUMNS` order: the filter dimensions, the event type, an error's message.
    const values = d === undefined ? [] : [d.path, d.host, d.referrerHost, d.channel, d.utmSource, d.utmMedium, d.utmCampaign, d.browser, d.os, d.device, d.screenClass, d.country];
    for (let k = 0; k < 12; k++) dimValues[k] = clean(values[k] ?? null);
    dimValues[12] = type;
    dimValues[13] = type === 'error' ? cleanText(errorMessageOf(e.properties)) : null;
    batch.add(cleanText(e.projectId), type, clean(e.sessionId), Math.round(e.timestamp), e.isBot ? 1 : 0, clean(e.visitorId), clean(d?.anonymousId ?? null), dimValues);
  }
  return batch;
}

/** A batch of this process's sketch kit. */
function newBatch(): AggregateBatch {
  return createAggregateBatch(POSTGRES_KIT, AGGREGATE_DIMS.length, AGGREGATE_PAGE_DIMS);
}

/** The select expression of each dimension column ({@link AGGREGATE_COLUMNS}), in order. */
const READ_DIMENSIONS = aggregateColumnSelects(POSTGRES_DIALECT.textProperty('message'));

/** The columns an aggregate build reads of each event. */
const READ_COLUMNS = `${AGGREGATE_EVENT_KEYS}, ${READ_DIMENSIONS.join(', ')}`;

/** Adds rows of {@link READ_COLUMNS} to a batch. */
function addRows(batch: AggregateBatch, rows: ReadonlyArray<Record<string, unknown>>, only?: ReadonlySet<string>): void {
  const dimValues = new Array<string | null>(AGGREGATE_COLUMNS.length);
  for (const row of rows) {
    for (let k = 0; k < AGGREGATE_COLUMNS.length; k++) {
      const value = (row[AGGREGATE_COLUMNS[k] as string] as string | null) ?? null;
      // With `only`, the values of other dimensions are left out: they count in no row being rebuilt.
      dimValues[k] = only === undefined || (value !== null && only.has(`${k + 1}\u0000${value}`)) ? value : null;
    }
    batch.add(
      row.project_id as string,
      row.event_type as string,
      (row.session_id as string | null) ?? null,
      Number(row.timestamp),
      row.is_bot === true ? 1 : 0,
      (row.visitor_id as string | null) ?? null,
      (row.anonymous_id as string | null) ?? null,
      dimValues,
    );
  }
}

/** Deletes a project's aggregate rows of the whole UTC days `[first, end)` and of the weeks wholly inside them, per dimension through the key index. */
async function deleteDays(client: pg.PoolClient, projectId: string, first: number, end: number): Promise<void> {
  await client.query(
    `DELETE FROM agg_values WHERE project_id = $1 AND dim = ANY($2::text[])
       AND ((grain = ${GRAIN_DAY} AND bucket >= $3::bigint AND bucket < $4::bigint) OR (grain = ${GRAIN_HOUR} AND bucket >= $3::bigint * 24 AND bucket < $4::bigint * 24)
         OR (grain = ${GRAIN_WEEK} AND bucket >= $5::bigint AND bucket < $6::bigint))`,
    [projectId, AGGREGATE_DIMS, first, end, ...wholeWeeks(first, end)],
  );
  await client.query('DELETE FROM agg_sessions WHERE project_id = $1 AND hour >= $2::bigint * 24 AND hour < $3::bigint * 24', [projectId, first, end]);
}

/** Writes the aggregates of one UTC day of a project from the events it holds. */
async function buildDay(client: pg.PoolClient, projectId: string, day: number): Promise<void> {
  const { rows } = await client.query<Record<string, unknown>>(`SELECT ${READ_COLUMNS} FROM events WHERE project_id = $1 AND timestamp >= $2 AND timestamp < $3`, [
    projectId,
    day * DAY_MS,
    (day + 1) * DAY_MS,
  ]);
  const batch = newBatch();
  addRows(batch, rows);
  // The session summaries come after the last day, from the session rows (a state read and
  // written per session, and its lock held to the end of this one transaction, would not fit in
  // PostgreSQL's lock table at a few hundred thousand sessions).
  await applyPostgresAggregates(client, batch, false);
}

/** The lowest day number the aggregates can hold a row of: where "everything before" starts. */
const FIRST_DAY = -10_000_000;

/**
 * Retention's part, in the caller's transaction, once the events before `cutoff` are deleted (as
 * on SQLite, `sqlite-aggregates.ts`): the rows of the hours before the cut-off's hour go, the hour
 * it cuts is built again from the events it keeps, the cut day's rows are merged again from its
 * hour rows and the cut week's from its day rows.
 */
export async function cutPostgresAggregatesAt(client: pg.PoolClient, projectId: string, cutoff: number, union: SketchUnionSql | null): Promise<void> {
  await lockExclusive(client, projectId);
  const cutHour = Math.floor(cutoff / HOUR_MS);
  const cutDay = Math.floor(cutHour / 24);
  const cut = cutoff > cutHour * HOUR_MS;
  const endHour = cut ? cutHour + 1 : cutHour;
  // The sessions the cut reaches, counted again once their hour rows are.
  const touched = await client.query<{ session_id: string }>('SELECT DISTINCT session_id FROM agg_sessions WHERE project_id = $1 AND hour < $2', [projectId, endHour]);
  await deleteDays(client, projectId, FIRST_DAY, cutDay);
  await client.query(`DELETE FROM agg_values WHERE project_id = $1 AND dim = ANY($2::text[]) AND grain = ${GRAIN_HOUR} AND bucket >= $3 AND bucket < $4`, [
    projectId,
    AGGREGATE_DIMS,
    cutDay * 24,
    endHour,
  ]);
  await client.query('DELETE FROM agg_sessions WHERE project_id = $1 AND hour >= $2 AND hour < $3', [projectId, cutDay * 24, endHour]);
  if (cut) {
    const { rows } = await client.query<Record<string, unknown>>(`SELECT ${READ_COLUMNS} FROM events WHERE project_id = $1 AND timestamp >= $2 AND timestamp < $3`, [
      projectId,
      cutHour * HOUR_MS,
      (cutHour + 1) * HOUR_MS,
    ]);
    const batch = newBatch();
    addRows(batch, rows);
    // Writes the hour's parts, and day parts that the merge below replaces.
    await applyPostgresAggregates(client, batch, false);
  }
  await mergeFromFiner(client, projectId, GRAIN_DAY, cutDay, union);
  await mergeFromFiner(client, projectId, GRAIN_WEEK, Math.floor(cutDay / WEEK_DAYS), union);
  // A session across the cut-off now starts on a later day, which nothing else marks: the reports
  // kept per day count the sessions that start on each (`reports/session-days.ts`).
  const moved = await recountPostgresSessions(client, projectId, touched.rows.map((row) => row.session_id));
  if (moved.length > 0) await client.query('SELECT rollup_mark_days($1::text[], $2::int[])', [moved.map(() => projectId), moved]);
  await client.query('DELETE FROM agg_session_days WHERE project_id = $1 AND day < $2', [projectId, cutDay]);
}

/**
 * Replaces the rows (all their parts) of `grain` (a day, a week) at `bucket` by the merge of the
 * finer rows it covers (its hours, its days): sums and sketch unions, never the events. With
 * `union`, the database merges them ({@link mergedRowsSql}).
 */
async function mergeFromFiner(client: pg.PoolClient, projectId: string, grain: typeof GRAIN_DAY | typeof GRAIN_WEEK, bucket: number, union: SketchUnionSql | null): Promise<void> {
  const [finer, per] = finerOf(grain);
  await client.query(`DELETE FROM agg_values WHERE project_id = $1 AND dim = ANY($2::text[]) AND grain = ${grain} AND bucket = $3`, [projectId, AGGREGATE_DIMS, bucket]);
  const finerRows = `FROM agg_values a WHERE a.project_id = $1 AND a.dim = ANY($2::text[]) AND a.grain = ${finer} AND a.bucket >= $3 AND a.bucket < $4`;
  const values = [projectId, AGGREGATE_DIMS, bucket * per, bucket * per + per];
  if (union !== null) {
    await client.query(mergedRowsSql(union, grain, '$5::bigint', finerRows), [...values, bucket]);
    return;
  }
  const rows = await client.query<Record<string, unknown>>(`SELECT a.dim, a.value, a.is_bot, a.events, a.page_views, ${SKETCH_COLUMNS.map((c) => `a.${c}`).join(', ')} ${finerRows}`, values);
  await insertParts(client, mergeRows(projectId, grain, rows.rows.map((row) => ({ ...row, target: bucket }))), []);
}

/**
 * Inserts the rows of `grain` merged in the database from the finer rows `a` that `from` reads
 * (`$1` the project; `target` the bucket each merges into, as SQL: a column or a parameter, never
 * a number, which GROUP BY would take for a column's position), one per (dim, target, value, bot
 * flag): sums, and sketch unions by `union`. What {@link mergeRows} and a write do, without
 * the finer rows' sketches going to Node and the merged ones back: retention's, which merges
 * every value of the cut day and week (an erasure patches only its values' rows, in Node:
 * {@link mergeRowsAgain}). The caller holds the project's aggregate lock exclusive, so the rows
 * need no lock of their own.
 */
const mergedRowsSql = (union: SketchUnionSql, grain: number, target: string, from: string): string =>
  `INSERT INTO agg_values (project_id, dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')})
   SELECT $1, a.dim, ${grain}, ${target}, a.value, a.is_bot, sum(a.events), sum(a.page_views), ${SKETCH_COLUMNS.map((c) => union(`a.${c}`)).join(', ')}
   ${from} GROUP BY a.dim, a.value, a.is_bot, ${target}`;

/** Rows of `agg_values` (with a `target` column: the bucket they merge into) merged per (dim, target, value, bot flag) into rows of `grain`: sums and sketch unions. */
function mergeRows(projectId: string, grain: number, rows: ReadonlyArray<Record<string, unknown>>): RowDelta<VisitorSketch>[] {
  const merged = new Map<string, RowDelta<VisitorSketch>>();
  for (const row of rows) {
    const key = `${row.dim}\u0000${row.target}\u0000${row.value}\u0000${row.is_bot}`;
    let into = merged.get(key);
    if (into === undefined) {
      into = { project: projectId, dim: String(row.dim), grain, bucket: Number(row.target), value: String(row.value), bot: row.is_bot === true, events: 0, pageViews: 0, sketches: SKETCH_COLUMNS.map(() => null) };
      merged.set(key, into);
    }
    into.events += Number(row.events);
    into.pageViews += Number(row.page_views);
    into.sketches = into.sketches.map((sketch, i) => {
      const bytes = row[SKETCH_COLUMNS[i] as string];
      return bytes instanceof Uint8Array ? (sketch ?? Sketch.empty()).mergeBytes(bytes) : sketch;
    });
  }
  return [...merged.values()];
}

/** The columns an erasure reads of the user's events for {@link rebuildPostgresAggregatesOf}. */
export const ERASURE_AGGREGATE_COLUMNS = READ_COLUMNS;

/**
 * An erasure's part, in its transaction, once the user's events are deleted (as on SQLite,
 * `sqlite/sqlite-erasure.ts`): the rows the erased events were counted in, and only those, are
 * made again. Each hour row is patched ({@link patchedHourRow}): its counts less the erased
 * events', its sketches without the erased keys, told from the hour's events whose keys hash to a
 * register an erased key sets (`keyRegister`, the `hll` extension's hash in SQL; a few dozen
 * events of an hour's thousands); a row that cannot be patched so, and every row without the
 * extension, is built from all its hour's events (a sketch cannot forget a key). Each day row is
 * then merged again from its hour rows and each week row from its day rows ({@link mergeRowsAgain}).
 * A cost that grows with the user's events and hours, not with the project's. `erasedRows` are the
 * user's events as {@link ERASURE_AGGREGATE_COLUMNS}, as the delete returned them.
 */
export async function rebuildPostgresAggregatesOf(
  client: pg.PoolClient,
  projectId: string,
  erasedRows: ReadonlyArray<Record<string, unknown>>,
  keyRegister: KeyRegisterSql | null,
): Promise<void> {
  if (erasedRows.length === 0) return;
  await lockExclusive(client, projectId);
  const erased = newBatch();
  addRows(erased, erasedRows);
  const sessionKey = (hour: number, session: string, bot: number) => `${hour}\u0000${bot}\u0000${session}`;
  /** Per hour, its erased groups and the dimension values of those (`dim\0value`, dimension indexes from 1). */
  const hours = new Map<number, { groups: ValueGroup[]; needed: Set<string> }>();
  /** Day and week rows to merge again, with the erased events' sketches of each. */
  const dayRows = new Map<string, MergedRow>();
  const weekRows = new Map<string, MergedRow>();
  const note = (rows: Map<string, MergedRow>, key: MergedKey, sketches: ReadonlyArray<Uint8Array | null>) => {
    const id = `${key.dim}\u0000${key.bucket}\u0000${key.bot}\u0000${key.value}`;
    let noted = rows.get(id);
    if (noted === undefined) rows.set(id, (noted = { key, erased: SKETCH_COLUMNS.map(() => []) }));
    sketches.forEach((sketch, c) => {
      if (sketch !== null) noted.erased[c]?.push(sketch);
    });
  };
  const groups = erased.values();
  for (const g of groups) {
    let hour = hours.get(g.hour);
    if (hour === undefined) hours.set(g.hour, (hour = { groups: [], needed: new Set() }));
    hour.groups.push(g);
    if (g.dim > 0) hour.needed.add(`${g.dim}\u0000${g.value}`);
    // The registers an erased key sets, per sketch column: a few dozen for one user.
    const sketches = sketchesOf(g).map((sketch) => (sketch === null ? null : sketch.toBytes()));
    const day = Math.floor(g.hour / 24);
    const dim = AGGREGATE_DIMS[g.dim] as string;
    note(dayRows, { dim, bucket: day, value: g.value, bot: g.bot === 1 }, sketches);
    note(weekRows, { dim, bucket: Math.floor(day / WEEK_DAYS), value: g.value, bot: g.bot === 1 }, sketches);
  }
  const hourKeys = groups.map((g) => ({ dim: AGGREGATE_DIMS[g.dim] as string, bucket: g.hour, value: g.value, bot: g.bot === 1 }));
  // The rows as they are (before the erasure: the user's events counted in them), then gone: each is written again whole.
  const previous = keyRegister === null ? [] : await readMerged(client, projectId, GRAIN_HOUR, hourKeys);
  const previousOf = new Map(groups.map((g, i) => [valueKey(g), previous[i]]));
  await client.query(
    `DELETE FROM agg_values a USING ${KEYED}
     WHERE a.project_id = $1 AND a.dim = k.dim AND a.grain = ${GRAIN_HOUR} AND a.bucket = k.bucket AND a.value = k.value AND a.is_bot = k.is_bot`,
    [projectId, ...keyValues(hourKeys)],
  );
  const erasedSessions = new Set(erased.sessions().map((x) => sessionKey(x.hour, x.session, x.bot)));
  const sessionRows = erased.sessions();
  await client.query(
    `DELETE FROM agg_sessions a USING unnest($2::bigint[], $3::text[], $4::bool[]) AS k(hour, session_id, is_bot)
     WHERE a.project_id = $1 AND a.hour = k.hour AND a.session_id = k.session_id AND a.is_bot = k.is_bot`,
    [projectId, sessionRows.map((s) => s.hour), sessionRows.map((s) => s.session), sessionRows.map((s) => s.bot === 1)],
  );
  /** The registers the erased keys of each hour set. */
  const registers = new Map<number, Set<number>>();
  for (const row of erasedRows) {
    const hour = Math.floor(Number(row.timestamp) / HOUR_MS);
    let set = registers.get(hour);
    if (set === undefined) registers.set(hour, (set = new Set()));
    const visitor = (row.visitor_id as string | null) ?? null;
    for (const key of [(row.anonymous_id as string | null) ?? visitor, visitor, (row.session_id as string | null) ?? null]) if (key !== null) set.add(POSTGRES_KIT.registerOfKey(key));
  }
  const hourSql = `FROM events WHERE project_id = $1 AND timestamp >= $2 AND timestamp < $3`;
  /** The key columns and the dimension columns of `needed` (`addRows` reads a missing one as null). */
  const columnsOf = (needed: ReadonlySet<string>) =>
    `${AGGREGATE_EVENT_KEYS}${[...new Set([...needed].map((key) => Number(key.slice(0, key.indexOf('\u0000'))) - 1))]
      .sort((a, b) => a - b)
      .map((k) => `, ${READ_DIMENSIONS[k]}`)
      .join('')}`;
  for (const [hour, { groups: hourGroups, needed }] of hours) {
    const span = [projectId, hour * HOUR_MS, (hour + 1) * HOUR_MS];
    const written: RowDelta[] = [];
    let whole = hourGroups;
    let keys: AggregateBatch | null = null;
    if (keyRegister !== null) {
      // Every event of the hour whose visitor, visitor hash or session hashes to a register an
      // erased key sets: each key left there, so every erased session's other events too.
      const at = [...(registers.get(hour) ?? [])];
      const { rows } = await client.query<Record<string, unknown>>(
        `SELECT ${columnsOf(needed)} ${hourSql}
           AND (${keyRegister('coalesce(anonymous_id, visitor_id)')} = ANY($4::int[]) OR ${keyRegister('visitor_id')} = ANY($4::int[]) OR ${keyRegister('session_id')} = ANY($4::int[]))`,
        [...span, at],
      );
      keys = newBatch();
      addRows(keys, rows, needed);
      const kept = new Map(keys.values().map((g) => [valueKey(g), g]));
      whole = [];
      for (const g of hourGroups) {
        const row = patchedHourRow(projectId, g, previousOf.get(valueKey(g)), kept.get(valueKey(g)));
        if (row === undefined) whole.push(g);
        else if (row !== null) written.push(row);
      }
    }
    if (whole.length > 0 || keys === null) {
      const only = new Set(whole.filter((g) => g.dim > 0).map((g) => `${g.dim}\u0000${g.value}`));
      const wanted = new Set(whole.map(valueKey));
      const { rows } = await client.query<Record<string, unknown>>(`SELECT ${columnsOf(only)} ${hourSql}`, span);
      const batch = newBatch();
      addRows(batch, rows, only);
      // Only the hour rows just deleted (their day rows are merged again below).
      written.push(...rowDeltas(batch.values().filter((g) => wanted.has(valueKey(g)))).filter((d) => d.grain === GRAIN_HOUR));
      keys ??= batch;
    }
    await insertParts(client, written, keys.sessions().filter((x) => erasedSessions.has(sessionKey(x.hour, x.session, x.bot))));
  }
  await recountPostgresSessions(client, projectId, sessionRows.map((x) => x.session));
  await mergeRowsAgain(client, projectId, GRAIN_DAY, [...dayRows.values()]);
  await mergeRowsAgain(client, projectId, GRAIN_WEEK, [...weekRows.values()]);
}

/** A group's key among an erasure's hour rows. */
const valueKey = (g: ValueGroup): string => `${g.dim}\u0000${g.hour}\u0000${g.bot}\u0000${g.value}`;

/** Keys of `agg_values` rows of one project and grain as `k`, numbered from 1 (`n`), from parameters `$2`–`$5` ({@link keyValues}). */
const KEYED = 'unnest($2::text[], $3::bigint[], $4::text[], $5::bool[]) WITH ORDINALITY AS k(dim, bucket, value, is_bot, n)';

/** The parameters `$2`–`$5` of {@link KEYED}. */
const keyValues = (keys: readonly MergedKey[]): unknown[] => [keys.map((k) => k.dim), keys.map((k) => k.bucket), keys.map((k) => k.value), keys.map((k) => k.bot)];

/** A row of `agg_values` as its parts merge: counts summed, sketches as stored bytes united. */
interface StoredRow {
  events: number;
  pageViews: number;
  sketches: StoredSketches;
}

/** Two sketches as stored bytes (null for none) united, as the parts of one row merge. */
const unionStored = (a: Uint8Array | null, b: Uint8Array | null): Uint8Array | null => (b === null ? a : a === null ? b : POSTGRES_KIT.unionSketchBytes(a, b));

/** The rows of `grain` at `keys`, each its parts merged (undefined for a key with none), in the order of `keys`. */
async function readMerged(client: pg.PoolClient, projectId: string, grain: number, keys: readonly MergedKey[]): Promise<Array<StoredRow | undefined>> {
  const { rows } = await client.query<unknown[]>({
    text: `SELECT k.n::int, a.events, a.page_views, ${SKETCH_COLUMNS.map((c) => `a.${c}`).join(', ')} FROM ${KEYED}
       JOIN agg_values a ON a.project_id = $1 AND a.dim = k.dim AND a.grain = ${grain} AND a.bucket = k.bucket AND a.value = k.value AND a.is_bot = k.is_bot`,
    values: [projectId, ...keyValues(keys)],
    rowMode: 'array',
  });
  const merged = keys.map((): StoredRow | undefined => undefined);
  for (const row of rows) {
    const at = (row[0] as number) - 1;
    const into = (merged[at] ??= { events: 0, pageViews: 0, sketches: SKETCH_COLUMNS.map(() => null) });
    into.events += Number(row[1]);
    into.pageViews += Number(row[2]);
    into.sketches = into.sketches.map((union, c) => unionStored(union, (row[3 + c] as Uint8Array | null) ?? null));
  }
  return merged;
}

/**
 * The hour row of erased group `g` with the group taken out: `previous` (the row as stored) less
 * its counts, each sketch without its keys (`withoutKeys` in `aggregates/visitor-sketch.ts`), told
 * from `kept`, the group of the hour's events left whose keys hash to a register the erased keys
 * set. Null when no event is left; undefined when a sketch cannot be told so (the keys left may be
 * an exact set again): the caller builds the row from all its hour's events.
 */
function patchedHourRow(projectId: string, g: ValueGroup, previous: StoredRow | undefined, kept: ValueGroup | undefined): RowDelta | null | undefined {
  if (previous === undefined) return undefined;
  const events = previous.events - g.events;
  if (events <= 0) return null;
  const keptSketches = kept === undefined ? [] : sketchesOf(kept);
  const sketches: Array<Uint8Array | null> = [];
  for (const [c, erasedSketch] of sketchesOf(g).entries()) {
    const keptBytes = keptSketches[c]?.toBytes() ?? null;
    const patched = POSTGRES_KIT.withoutKeys(previous.sketches[c] ?? null, keptBytes, [erasedSketch === null ? null : erasedSketch.toBytes()]);
    if (patched === undefined) return undefined;
    sketches.push(storedBytes(patched));
  }
  return { project: projectId, dim: AGGREGATE_DIMS[g.dim] as string, grain: GRAIN_HOUR, bucket: g.hour, value: g.value, bot: g.bot === 1, events, pageViews: previous.pageViews - g.pageViews, sketches };
}

/** One row of `agg_values` (all its parts) an erasure merges again. */
interface MergedKey {
  dim: string;
  bucket: number;
  value: string;
  bot: boolean;
}

/** A row an erasure merges again, and the erased events' own sketches of it per sketch column (the registers that may change). */
interface MergedRow {
  key: MergedKey;
  erased: Uint8Array[][];
}

/** Rows merged again per round of reads and writes: what one erasure holds in memory, and sends in one statement, stays bounded. */
const MERGE_SLICE = 200;

/** A sketch column's stored bytes, or null. */
type StoredSketches = Array<Uint8Array | null>;

/**
 * Merges rows of `grain` (a day, a week) again from the finer rows each covers (its hours, its
 * days) of the same value, after an erasure took keys out of those: the counts summed again, and
 * each sketch patched at the registers the erased keys hash to (`unionWithout` in
 * `aggregates/visitor-sketch.ts`), the rest of it as it was. Merged here and not by the `hll`
 * extension, whose `hll_union_agg` decodes every register of every finer row: at 10M events that
 * was over half of an erasure (bench/RESULTS.md).
 *
 * A row of one part (the compaction's work) is updated in place, its sketches that did not change
 * left alone: most of a busy row's registers are set by other keys, and a sketch written again
 * is kilobytes stored out of line. It gets a new part number, and the estimates of the sketches
 * that changed go, so a keep of estimates read before cannot write to it (`kept-estimates.ts`).
 * A row of several parts is written again as one; a row no finer row is left under goes.
 */
async function mergeRowsAgain(client: pg.PoolClient, projectId: string, grain: typeof GRAIN_DAY | typeof GRAIN_WEEK, rows: readonly MergedRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += MERGE_SLICE) await mergeSliceAgain(client, projectId, grain, rows.slice(i, i + MERGE_SLICE));
}

/** {@link mergeRowsAgain} for up to {@link MERGE_SLICE} rows. */
async function mergeSliceAgain(client: pg.PoolClient, projectId: string, grain: typeof GRAIN_DAY | typeof GRAIN_WEEK, rows: readonly MergedRow[]): Promise<void> {
  if (rows.length === 0) return;
  const [finer, per] = finerOf(grain);
  const keys = rows.map((row) => row.key);
  const values = [projectId, ...keyValues(keys)];
  const sketches = SKETCH_COLUMNS.map((c) => `a.${c}`).join(', ');
  const previous = await client.query<unknown[]>({
    text: `SELECT k.n::int, a.part, ${sketches} FROM ${KEYED}
       JOIN agg_values a ON a.project_id = $1 AND a.dim = k.dim AND a.grain = ${grain} AND a.bucket = k.bucket AND a.value = k.value AND a.is_bot = k.is_bot`,
    values,
    rowMode: 'array',
  });
  const finerRows = await client.query<unknown[]>({
    text: `SELECT k.n::int, a.events, a.page_views, ${sketches} FROM ${KEYED}
       JOIN agg_values a ON a.project_id = $1 AND a.dim = k.dim AND a.grain = ${finer} AND a.bucket >= k.bucket * ${per} AND a.bucket < k.bucket * ${per} + ${per}
         AND a.value = k.value AND a.is_bot = k.is_bot`,
    values,
    rowMode: 'array',
  });
  const byRow = <T>(found: ReadonlyArray<readonly unknown[]>, take: (row: readonly unknown[]) => T): T[][] => {
    const out = rows.map((): T[] => []);
    for (const row of found) out[(row[0] as number) - 1]?.push(take(row));
    return out;
  };
  const sketchesAt = (row: readonly unknown[], at: number): StoredSketches => SKETCH_COLUMNS.map((_, c) => (row[at + c] as Uint8Array | null) ?? null);
  const partsOf = byRow(previous.rows, (row) => ({ part: String(row[1]), sketches: sketchesAt(row, 2) }));
  const finerOfRow = byRow(finerRows.rows, (row) => ({ events: Number(row[1]), pageViews: Number(row[2]), sketches: sketchesAt(row, 3) }));
  /** Parts deleted: of rows with no finer row left, or written again as one. */
  const gone: string[] = [];
  const written: RowDelta[] = [];
  const updated: Array<{ part: string; events: number; pageViews: number; sketches: StoredSketches }> = [];
  rows.forEach(({ key, erased }, i) => {
    const parts = partsOf[i] as Array<{ part: string; sketches: StoredSketches }>;
    const under = finerOfRow[i] as Array<{ events: number; pageViews: number; sketches: StoredSketches }>;
    if (under.length === 0 || parts.length !== 1) gone.push(...parts.map((p) => p.part));
    if (under.length === 0) return;
    const events = under.reduce((sum, f) => sum + f.events, 0);
    const pageViews = under.reduce((sum, f) => sum + f.pageViews, 0);
    const merged = SKETCH_COLUMNS.map((_, c) => {
      // The row's parts as one sketch: what its finer rows merged to before the erasure.
      const before = parts.reduce<Uint8Array | null>((union, p) => unionStored(union, p.sketches[c] ?? null), null);
      const after = storedBytes(POSTGRES_KIT.unionWithout(before, under.map((f) => f.sketches[c] ?? null), erased[c] ?? []));
      return { before, after };
    });
    const only = parts.length === 1 ? parts[0] : undefined;
    if (only === undefined) {
      written.push({ project: projectId, dim: key.dim, grain, bucket: key.bucket, value: key.value, bot: key.bot, events, pageViews, sketches: merged.map((m) => m.after) });
      return;
    }
    // Null where the sketch did not change: the update keeps the stored one.
    const changed = merged.map((m) => (sameBytes(m.before, m.after) ? null : (m.after ?? EMPTY_SKETCH)));
    updated.push({ part: only.part, events, pageViews, sketches: changed });
  });
  if (gone.length > 0) await client.query('DELETE FROM agg_values WHERE part = ANY($1::bigint[])', [gone]);
  if (updated.length > 0) {
    // The changed sketches as one binary parameter, each column's by offset and length (-1 for
    // unchanged): an array of bytea goes as text, every byte written and read as two hex digits.
    const blob: Uint8Array[] = [];
    let offset = 0;
    const offsets = SKETCH_COLUMNS.map((): number[] => []);
    const lengths = SKETCH_COLUMNS.map((): number[] => []);
    for (const u of updated) {
      u.sketches.forEach((bytes, i) => {
        offsets[i]?.push(offset);
        lengths[i]?.push(bytes === null ? -1 : bytes.length);
        if (bytes === null) return;
        blob.push(bytes);
        offset += bytes.length;
      });
    }
    const set = SKETCH_COLUMNS.map((c, i) => `${c} = CASE WHEN u.l${i} < 0 THEN a.${c} WHEN u.l${i} <= 3 THEN NULL ELSE substring($4::bytea FROM u.o${i} + 1 FOR u.l${i}) END`);
    const estimates = Object.entries(ESTIMATE_COLUMNS).map(([c, e]) => `${e} = CASE WHEN u.l${SKETCH_COLUMNS.indexOf(c as (typeof SKETCH_COLUMNS)[number])} < 0 THEN a.${e} END`);
    await client.query(
      `UPDATE agg_values a SET part = DEFAULT, events = u.events, page_views = u.page_views, ${[...set, ...estimates].join(', ')}
       FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], ${SKETCH_COLUMNS.map((_, i) => `$${5 + 2 * i}::int[], $${6 + 2 * i}::int[]`).join(', ')})
         AS u(part, events, page_views, ${SKETCH_COLUMNS.map((_, i) => `o${i}, l${i}`).join(', ')})
       WHERE a.part = u.part`,
      [updated.map((u) => u.part), updated.map((u) => u.events), updated.map((u) => u.pageViews), Buffer.concat(blob), ...SKETCH_COLUMNS.flatMap((_, i) => [offsets[i], lengths[i]])],
    );
  }
  await insertParts(client, written, []);
}

/** The stored form of a sketch that became empty, in an update: told from "unchanged" (null), stored as null. */
const EMPTY_SKETCH = new Uint8Array(3);

const sameBytes = (a: Uint8Array | null, b: Uint8Array | null): boolean => (a === null || b === null ? a === b : Buffer.compare(a, b) === 0);

/** Days of day rows merged into week rows per read, when a database of shape 4 gets its week rows: a bounded read at any size. */
const WEEK_ROWS_READ_DAYS = 2 * WEEK_DAYS;

/**
 * The week rows of a database of shape 4 (`aggregate-schema.ts`), merged from its day rows, in the
 * caller's transaction, a few weeks per read. Any week row there is goes first (one written by a
 * process of this version while a process of the one before rebuilt the aggregates), so that no
 * day counts twice.
 */
async function addWeekRows(client: pg.PoolClient): Promise<void> {
  await client.query(`DELETE FROM agg_values WHERE grain = ${GRAIN_WEEK}`);
  const spans = await client.query<{ project_id: string; first: string; last: string }>(
    `SELECT project_id, min(bucket) AS first, max(bucket) AS last FROM agg_values WHERE dim = '' AND grain = ${GRAIN_DAY} GROUP BY project_id`,
  );
  for (const span of spans.rows) {
    const end = Number(span.last) + 1;
    for (let first = Math.floor(Number(span.first) / WEEK_DAYS) * WEEK_DAYS; first < end; first += WEEK_ROWS_READ_DAYS) {
      const { rows } = await client.query<Record<string, unknown>>(
        `SELECT dim, ${weekOfDaySql('bucket')} AS target, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')} FROM agg_values
         WHERE project_id = $1 AND dim = ANY($2::text[]) AND grain = ${GRAIN_DAY} AND bucket >= $3 AND bucket < $4`,
        [span.project_id, AGGREGATE_DIMS, first, first + WEEK_ROWS_READ_DAYS],
      );
      await insertParts(client, mergeRows(span.project_id, GRAIN_WEEK, rows), []);
    }
  }
}

/**
 * The sketch columns stored out of line without compression (`EXTERNAL`), in a short transaction
 * of its own after the aggregates are ready; altered only where not yet, since the change takes
 * the table's exclusive lock, and given up after 2 s waiting for it (another process's long read)
 * rather than hold every commit behind it: the caller reports the error and serves, and the next
 * start tries again. A sketch is register values as good as random, which PostgreSQL's compression
 * tried at every write of one past 2 kB and never shrank: at 10M events, writing an erasure's day
 * and week rows took half as long without it (bench/RESULTS.md). Rows already stored are not
 * rewritten; they were stored uncompressed anyway.
 */
export async function ensurePostgresSketchStorage(pool: pg.Pool): Promise<void> {
  await inTransaction(pool, 'BEGIN', async (client) => {
    await client.query("SET LOCAL lock_timeout = '2s'");
    const { rows } = await client.query<{ name: string }>(
      "SELECT attname AS name FROM pg_attribute WHERE attrelid = 'agg_values'::regclass AND attname = ANY($1::text[]) AND attstorage <> 'e'",
      [SKETCH_COLUMNS],
    );
    if (rows.length > 0) await client.query(`ALTER TABLE agg_values ${rows.map((row) => `ALTER COLUMN ${row.name} SET STORAGE EXTERNAL`).join(', ')}`);
  });
}

/**
 * Creates the aggregate tables, or builds them again when their shape changed, from the events,
 * once, under the schema's advisory lock: a database of an earlier version is built at its first
 * open, before the store serves.
 */
export async function ensurePostgresAggregates(pool: pg.Pool, onBuild?: AggregatesBuildListener): Promise<void> {
  await inTransaction(pool, 'BEGIN', async (client) => {
    await client.query(SCHEMA_LOCK_SQL);
    const meta = await client.query<{ found: boolean }>("SELECT to_regclass('agg_meta') IS NOT NULL AS found");
    const shape = meta.rows[0]?.found ? (await client.query<{ shape: number }>('SELECT shape FROM agg_meta')).rows[0]?.shape : undefined;
    if (shape === AGGREGATE_SHAPE || convertsInPlace(shape)) {
      const summarized = (await client.query<{ found: boolean }>("SELECT to_regclass('agg_session_state') IS NOT NULL AS found")).rows[0]?.found === true;
      // The day sums of shapes 4 and 5 hold only the sessions inside one day, under another key.
      if (shape !== AGGREGATE_SHAPE) await client.query('DROP TABLE IF EXISTS agg_session_days, agg_session_midnights');
      await client.query(POSTGRES_AGGREGATE_DDL);
      await ensurePostgresEstimateColumns(client);
      // The day sums' parts are numbered from 1 again, and a mark there is from before the
      // conversion (left by a rebuild of a later version, run back): the compaction starts over.
      if (shape !== AGGREGATE_SHAPE) await client.query('DELETE FROM agg_compaction');
      const started = performance.now();
      const told = onBuild !== undefined && (!summarized || shape !== AGGREGATE_SHAPE) && (await client.query('SELECT 1 FROM agg_sessions LIMIT 1')).rows.length > 0;
      if (told) onBuild('building', 0, 'aggregates');
      // Aggregates from before the session summaries: those are built from the session rows.
      if (!summarized) await buildPostgresSessionSummaries(client);
      else if (shape !== AGGREGATE_SHAPE) await buildPostgresSessionSums(client);
      if (shape === 4) await addWeekRows(client);
      if (shape !== AGGREGATE_SHAPE) await client.query('UPDATE agg_meta SET shape = $1', [AGGREGATE_SHAPE]);
      if (told) onBuild('built', performance.now() - started, 'aggregates');
      return;
    }
    const started = performance.now();
    // Said only when there are events to build from: a new database builds nothing.
    const told = onBuild !== undefined && (await client.query('SELECT 1 FROM events LIMIT 1')).rows.length > 0;
    if (told) onBuild('building', 0, 'events');
    await client.query(`DROP TABLE IF EXISTS ${POSTGRES_AGGREGATE_TABLES.join(', ')}`);
    await client.query(POSTGRES_AGGREGATE_DDL);
    await ensurePostgresEstimateColumns(client);
    // Day by day (as on SQLite, sqlite-aggregates.ts): each day's rows written once.
    const projects = await client.query<{ project_id: string }>(EVENT_PROJECTS_SQL);
    const nextSql = nextEventTimeSql((n) => `$${n}`);
    for (const { project_id: projectId } of projects.rows) {
      const next = async (from: number) => {
        const t = (await client.query<{ t: string | null }>(nextSql, [projectId, from])).rows[0]?.t;
        return t === null || t === undefined ? null : Number(t);
      };
      for (let t = await next(-Number.MAX_SAFE_INTEGER); t !== null; ) {
        const day = Math.floor(t / DAY_MS);
        await buildDay(client, projectId, day);
        t = await next((day + 1) * DAY_MS);
      }
    }
    await buildPostgresSessionSummaries(client);
    await client.query('INSERT INTO agg_meta (shape) VALUES ($1)', [AGGREGATE_SHAPE]);
    if (told) onBuild('built', performance.now() - started, 'events');
  });
}
