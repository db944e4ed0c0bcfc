import { type Dialect, type RunQuery, Values } from '../reports/dialect.js';
import { LONG_SESSION_MS } from './session-moves.js';
import {
  BUILT_IN_EVENT_TYPES,
  DIMENSION_COLUMNS,
  type ErrorGroup,
  type FilterDimension,
  type ReportQuery,
  type SeriesPoint,
  type SessionStats,
  type TopDimension,
  type TopRow,
  type Totals,
} from '../report-store.js';
import { type AggregateDim, ERROR_MESSAGE_DIM, GRAIN_DAY, GRAIN_HOUR, GRAIN_WEEK, WEEK_DAYS, errorMessageSql, wholeWeeks } from './aggregate-schema.js';
import { HOUR_MS } from './aggregate-batch.js';
import { VisitorSketch, estimateSketchBytes, hashKey } from './visitor-sketch.js';
import { ESTIMATE_COLUMNS, type KeepEstimates } from './kept-estimates.js';
import { byteCompare, bytesOf, num, numOrNull } from '../shared/row-values.js';

/*
 * The reports the aggregates answer (docs/decisions.md, "Aggregates at ingest"): a range is read
 * as its whole UTC days from the day rows (its whole weeks from week rows where no report needs
 * the days apart: totals, top lists, errors), the whole hours at either end from the hour rows, and
 * the pieces of an hour left at either end (at most two, under two hours of events) from the
 * events, merged on this side: counts are summed, unique visitors and sessions are the estimate of
 * the merged sketches (exact up to the sketch's exact threshold). What a report reads therefore
 * grows with the distinct values per day of the range, not with the events it covers.
 */

const DAY_MS = 86_400_000;

/** Which part of a range comes from where. */
export interface RangePlan {
  /** Whole UTC days `[first, end)` read from day rows. */
  days: [number, number] | null;
  /** Whole hours `[first, end)` read from hour rows. */
  hours: Array<[number, number]>;
  /** Ranges `[from, to)` of ms read from the events. */
  raw: Array<[number, number]>;
}

/** Splits `[from, to)` into whole days (when `days`), whole hours and the rest. */
export function planRange(from: number, to: number, days: boolean): RangePlan {
  const h0 = Math.ceil(from / HOUR_MS);
  const h1 = Math.floor(to / HOUR_MS);
  if (h1 <= h0) return { days: null, hours: [], raw: to > from ? [[from, to]] : [] };
  const raw: Array<[number, number]> = [];
  if (from < h0 * HOUR_MS) raw.push([from, h0 * HOUR_MS]);
  if (h1 * HOUR_MS < to) raw.push([h1 * HOUR_MS, to]);
  const d0 = Math.ceil(h0 / 24);
  const d1 = Math.floor(h1 / 24);
  if (!days || d1 <= d0) return { days: null, hours: [[h0, h1]], raw };
  const hours: Array<[number, number]> = [];
  if (h0 < d0 * 24) hours.push([h0, d0 * 24]);
  if (d1 * 24 < h1) hours.push([d1 * 24, h1]);
  return { days: [d0, d1], hours, raw };
}

/** A stored row's sketches as a read sends them: bytes (null: empty), or where the row keeps its estimates and is its group's only row, those alone. */
interface StoredSketches {
  visitors: Uint8Array | null;
  sessions: Uint8Array | null;
  /** Each sketch's kept estimate (`kept-estimates.ts`), sent instead of its bytes; null where the bytes are sent. */
  kept: [number | null, number | null] | null;
}

/** Whether a row was read by a kept estimate, without the bytes a merge needs. */
const isKept = (stored: StoredSketches): boolean => stored.kept !== null && (stored.kept[0] !== null || stored.kept[1] !== null);

/** A read sends a kept estimate only for a row alone in its group: anything else is a fault of the statement. */
const NOT_ALONE = 'A row read by its kept estimates is not the only one of its group.';

/** One group of counts with its sketches, merged across rows and events. */
class Group {
  events = 0;
  pageViews = 0;
  #visitors: VisitorSketch | null = null;
  #sessions: VisitorSketch | null = null;
  /**
   * The stored sketches of the group's only row so far. Most groups of a series are one row (an
   * hour's or a day's, without bots): estimated from its bytes or its kept estimates, it is never
   * decoded into a sketch of its own, which was most of an hourly series' time over 90 days.
   */
  #only: StoredSketches | null = null;

  get visitors(): VisitorSketch {
    return this.#merged()[0];
  }

  get sessions(): VisitorSketch {
    return this.#merged()[1];
  }

  /** Adds a stored row's sketches. */
  addStored(stored: StoredSketches): void {
    if (this.#visitors === null && this.#only === null) {
      this.#only = stored;
      return;
    }
    if (isKept(stored)) throw new Error(NOT_ALONE);
    const [v, s] = this.#merged();
    if (stored.visitors !== null) v.mergeBytes(stored.visitors);
    if (stored.sessions !== null) s.mergeBytes(stored.sessions);
  }

  /** The estimates of the distinct visitors and sessions, once the group is complete. */
  estimates(): [number, number] {
    this.#estimates ??= this.#estimate();
    return this.#estimates;
  }

  #estimates: [number, number] | null = null;

  #estimate(): [number, number] {
    const only = this.#only;
    if (this.#visitors === null && only !== null) return [only.kept?.[0] ?? estimateSketchBytes(only.visitors), only.kept?.[1] ?? estimateSketchBytes(only.sessions)];
    const [v, s] = this.#merged();
    return [v.estimate(), s.estimate()];
  }

  #merged(): [VisitorSketch, VisitorSketch] {
    if (this.#visitors === null || this.#sessions === null) {
      const only = this.#only;
      if (only !== null && isKept(only)) throw new Error(NOT_ALONE);
      this.#visitors = VisitorSketch.empty();
      this.#sessions = VisitorSketch.empty();
      if (only !== null) {
        if (only.visitors !== null) this.#visitors.mergeBytes(only.visitors);
        if (only.sessions !== null) this.#sessions.mergeBytes(only.sessions);
        this.#only = null;
      }
    }
    return [this.#visitors, this.#sessions];
  }
}

/** How a report picks its rows: the dimension, one value or all, and which visitor sketch it reads. */
interface Selection {
  dim: AggregateDim;
  value: string | null;
  /** The `agg_values` sketch column of visitors. */
  visitorColumn: string;
}

/** The reports of the aggregate tables, over `run`. */
export interface AggregateReports {
  totals(q: ReportQuery): Promise<Totals>;
  series(q: ReportQuery, bucketMs: number): Promise<SeriesPoint[]>;
  top(q: ReportQuery, dimension: TopDimension, limit: number): Promise<TopRow[]>;
  sessions(q: ReportQuery): Promise<SessionStats>;
  errors(q: ReportQuery, limit: number): Promise<ErrorGroup[]>;
  /** Resolves once the estimates series handed to the store are kept (or their keep failed). */
  settled(): Promise<void>;
}

/** Top-N dimensions counted over page views: they describe a page load. */
const isPageDimension = (d: TopDimension): boolean => d !== 'event_type' && d !== 'custom_event';

/**
 * The SQL of an aggregate over a sketch column that gives the stored bytes of its rows' union (null
 * when every row's is null): the same bytes `unionSketchBytes` makes, merged by the database.
 */
export type SketchUnionSql = (column: string) => string;

/** Options of {@link createAggregateReports}. */
export interface AggregateReportOptions {
  /** The store keeps the session summaries (`agg_session_state`, `agg_session_days`): the sessions report reads whole days from them. */
  sessionSummaries?: boolean;
  /**
   * How the database merges sketches itself, asked per report (null: it does not): reports then
   * read one merged sketch per group rather than every row's. PostgreSQL with its `hll` extension.
   */
  sketchUnion?: () => SketchUnionSql | null;
  /**
   * The store keeps estimates beside the sketches (`kept-estimates.ts`): a series reads a point
   * that is one row by its estimates, and hands those it computed to `keep`. `parts`: a key may
   * have several rows (PostgreSQL's parts), so a statement counts them before it trusts one.
   */
  estimates?: { keep: KeepEstimates; parts: boolean; onKeepError?: (error: unknown) => void };
}

/** The aggregate reports over a {@link Dialect}. */
export function createAggregateReports(dialect: Dialect, run: RunQuery, options: AggregateReportOptions = {}): AggregateReports {
  const bots = (q: ReportQuery) => (q.includeBots ? '' : ` AND is_bot = ${dialect.falseValue}`);
  /** Estimates handed to the store and not yet kept. */
  const keeping = new Set<Promise<void>>();

  /**
   * The `agg_values` rows of a plan's days and hours: `columns` of each, plus its grain and bucket;
   * with `weeks`, the whole weeks among the days are read from week rows, for reports that need no
   * split by day.
   */
  const aggregateParts = (
    q: ReportQuery,
    plan: RangePlan,
    sel: Selection,
    columns: string,
    v: Values,
    weeks: boolean,
    values?: readonly string[],
    before = '',
    partOf?: (grain: number, where: string) => string | null,
  ): string[] => {
    const parts: string[] = [];
    const part = (grain: number, first: number, end: number) => {
      let where = `project_id = ${v.add(q.projectId)} AND dim = ${v.add(sel.dim)}`;
      if (sel.value !== null) where += ` AND value = ${v.add(sel.value)}`;
      else if (values !== undefined) where += ` AND value IN (${values.map((x) => v.add(x)).join(', ')})`;
      where += ` AND grain = ${grain} AND bucket >= ${v.add(first)} AND bucket < ${v.add(end)}${bots(q)}`;
      parts.push(partOf?.(grain, where) ?? `SELECT ${before}grain, bucket, value, ${columns} FROM agg_values WHERE ${where}`);
    };
    if (plan.days !== null) {
      const [d0, d1] = plan.days;
      const [w0, w1] = wholeWeeks(d0, d1);
      if (weeks && w1 > w0) {
        if (d0 < w0 * WEEK_DAYS) part(GRAIN_DAY, d0, w0 * WEEK_DAYS);
        part(GRAIN_WEEK, w0, w1);
        if (w1 * WEEK_DAYS < d1) part(GRAIN_DAY, w1 * WEEK_DAYS, d1);
      } else part(GRAIN_DAY, d0, d1);
    }
    for (const [first, end] of plan.hours) part(GRAIN_HOUR, first, end);
    return parts;
  };

  /**
   * The events of a plan's raw ranges, each as a row of `value, event_type, session_id, visitor,
   * timestamp` with the columns `before` (SQL, leading) and `between` (after the value), for a
   * UNION ALL with aggregate rows: one statement reads both, so one snapshot answers the report.
   */
  const rawParts = (q: ReportQuery, plan: RangePlan, sel: Selection, v: Values, before: string, between = ''): string[] => {
    const column = sel.dim === '' ? "''" : sel.dim === ERROR_MESSAGE_DIM ? errorMessageSql(dialect.textProperty('message')) : DIMENSION_COLUMNS[sel.dim];
    const visitor = q.visitorKey === 'hash' ? 'visitor_id' : 'COALESCE(anonymous_id, visitor_id)';
    return plan.raw.map(([from, to]) => {
      let sql = `SELECT ${before}${column} AS value, ${between}event_type, session_id, ${visitor} AS visitor, timestamp FROM events
        WHERE project_id = ${v.add(q.projectId)} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)}${bots(q)}`;
      if (sel.dim !== '') sql += sel.value !== null ? ` AND ${column} = ${v.add(sel.value)}` : ` AND ${column} IS NOT NULL`;
      return sql;
    });
  };

  /** The raw-row columns an aggregate row carries as nulls in a UNION ALL with {@link rawParts}. */
  const NO_RAW = 'CAST(NULL AS TEXT) AS event_type, CAST(NULL AS TEXT) AS session_id, CAST(NULL AS TEXT) AS visitor, CAST(NULL AS BIGINT) AS timestamp';

  const addRaw = (group: Group, row: Record<string, unknown>, pageViewsOnly: boolean): void => {
    const pageView = row.event_type === 'page_view';
    if (pageViewsOnly && !pageView) return;
    group.events++;
    if (pageView) group.pageViews++;
    if (typeof row.visitor === 'string') group.visitors.add(hashKey(row.visitor));
    if (typeof row.session_id === 'string') group.sessions.add(hashKey(row.session_id));
  };

  const totalsOf = (g: Group): Totals => {
    const [visitors, sessions] = g.estimates();
    return { events: g.events, pageViews: g.pageViews, visitors, sessions };
  };

  /** The one filter of a report (at most one reaches the aggregates), or every event. */
  const selectionOf = (q: ReportQuery): Selection => {
    const entry = (Object.entries(q.filters) as Array<[FilterDimension, string | undefined]>).find(([, value]) => value !== undefined);
    return { dim: entry?.[0] ?? '', value: entry?.[1] ?? (entry === undefined ? '' : null), visitorColumn: q.visitorKey === 'hash' ? 'visitor_hashes' : 'visitors' };
  };

  /**
   * Rows of the plan grouped by a key (a bucket start for series), read by one statement; with no
   * `keyOfStored`, every row in one group (totals), which the database merges itself where it can:
   * one row back instead of a row per day and part. Series do not ask it to: most of their groups
   * are one row, and the extension's union costs more per group than sending that row; their rows
   * of `aloneGrain` (each its point's only one) are read by their kept estimates where they have them.
   */
  const grouped = async (
    q: ReportQuery,
    plan: RangePlan,
    keyOfStored: ((grain: number, bucket: number) => number) | null,
    keyOfRaw: (ts: number) => number,
    aloneGrain: number | null = null,
  ) => {
    const sel = selectionOf(q);
    const v = new Values(dialect);
    const union = keyOfStored === null ? (options.sketchUnion?.() ?? null) : null;
    // The grain whose rows are read by their kept estimates: a series' own (`aloneGrain`), each
    // row its point's only one, but with both bot flags (two rows a point) or a store that keeps none.
    const estimated = aloneGrain !== null && !q.includeBots && options.estimates !== undefined && union === null ? aloneGrain : null;
    const keptColumns = estimated === null ? '' : 'CAST(NULL AS BIGINT) AS visitors_kept, CAST(NULL AS BIGINT) AS sessions_kept, 0 AS alone, CAST(NULL AS BIGINT) AS part, ';
    const kept = sel.visitorColumn === 'visitors' ? ESTIMATE_COLUMNS.visitors : ESTIMATE_COLUMNS.visitor_hashes;
    const sessionsKept = ESTIMATE_COLUMNS.sessions;
    const estimatedPart = (grain: number, where: string): string | null => {
      if (grain !== estimated) return null;
      if (options.estimates?.parts !== true) {
        return `SELECT 0 AS raw, grain, bucket, value, events, page_views, CASE WHEN ${kept} IS NULL THEN ${sel.visitorColumn} END AS visitors,
          CASE WHEN ${sessionsKept} IS NULL THEN sessions END AS sessions, ${kept} AS visitors_kept, ${sessionsKept} AS sessions_kept, 1 AS alone,
          CAST(NULL AS BIGINT) AS part, ${NO_RAW} FROM agg_values WHERE ${where}`;
      }
      // A key's parts are counted before one is trusted alone; the sketches of a key of several are sent.
      return `SELECT 0 AS raw, grain, bucket, value, events, page_views,
          CASE WHEN key_parts = 1 AND ${kept} IS NOT NULL THEN NULL ELSE ${sel.visitorColumn} END AS visitors,
          CASE WHEN key_parts = 1 AND ${sessionsKept} IS NOT NULL THEN NULL ELSE sessions END AS sessions,
          CASE WHEN key_parts = 1 THEN ${kept} END AS visitors_kept, CASE WHEN key_parts = 1 THEN ${sessionsKept} END AS sessions_kept,
          CASE WHEN key_parts = 1 THEN 1 ELSE 0 END AS alone, part, ${NO_RAW}
        FROM (SELECT grain, bucket, value, events, page_views, ${sel.visitorColumn}, sessions, ${kept}, ${sessionsKept}, part,
                COUNT(*) OVER (PARTITION BY value, bucket) AS key_parts
              FROM agg_values WHERE ${where}) a`;
    };
    // Totals (no key) read whole weeks from week rows; series need their days.
    const storedParts = aggregateParts(
      q,
      plan,
      sel,
      `events, page_views, ${sel.visitorColumn} AS visitors, sessions${union === null ? `, ${keptColumns}${NO_RAW}` : ''}`,
      v,
      keyOfStored === null,
      undefined,
      union === null ? '0 AS raw, ' : '',
      estimatedPart,
    );
    const stored =
      union === null || storedParts.length === 0
        ? storedParts
        : [
            `SELECT 0 AS raw, CAST(NULL AS SMALLINT) AS grain, CAST(NULL AS BIGINT) AS bucket, '' AS value, SUM(events) AS events, SUM(page_views) AS page_views,
               ${union('visitors')} AS visitors, ${union('sessions')} AS sessions, ${NO_RAW}
             FROM (${storedParts.join('\n UNION ALL ')}) s`,
          ];
    const parts = [
      ...stored,
      // Named in full: the first part of a UNION names its columns, and it may be a raw one.
      ...rawParts(
        q,
        plan,
        sel,
        v,
        '1 AS raw, CAST(NULL AS SMALLINT) AS grain, CAST(NULL AS BIGINT) AS bucket, ',
        `CAST(NULL AS BIGINT) AS events, CAST(NULL AS BIGINT) AS page_views, CAST(NULL AS BYTEA) AS visitors, CAST(NULL AS BYTEA) AS sessions, ${keptColumns}`,
      ),
    ];
    const rows = parts.length === 0 ? [] : await run(parts.join('\n UNION ALL '), v.list);
    const groups = new Map<number, Group>();
    const groupOf = (key: number): Group => {
      let g = groups.get(key);
      if (g === undefined) groups.set(key, (g = new Group()));
      return g;
    };
    // The rows alone in their point, of an hour or day that is over, read without a kept estimate: the store keeps the ones computed here.
    const toKeep: Array<{ key: number; bucket: number; part: number | null; events: number; pageViews: number }> = [];
    const over = estimated === GRAIN_HOUR ? Math.floor(Date.now() / HOUR_MS) : Math.floor(Date.now() / DAY_MS);
    for (const row of rows) {
      if (num(row.raw) === 1) {
        addRaw(groupOf(keyOfRaw(num(row.timestamp))), row, false);
        continue;
      }
      const key = keyOfStored === null ? 0 : keyOfStored(num(row.grain), num(row.bucket));
      const keptPair: [number | null, number | null] | null = estimated === null ? null : [numOrNull(row.visitors_kept), numOrNull(row.sessions_kept)];
      const g = groupOf(key);
      g.events += num(row.events);
      g.pageViews += num(row.page_views);
      g.addStored({ visitors: bytesOf(row.visitors), sessions: bytesOf(row.sessions), kept: keptPair });
      if (keptPair !== null && num(row.alone) === 1 && (keptPair[0] === null || keptPair[1] === null) && num(row.bucket) < over) {
        toKeep.push({ key, bucket: num(row.bucket), part: numOrNull(row.part), events: num(row.events), pageViews: num(row.page_views) });
      }
    }
    const keep = options.estimates?.keep;
    if (keep !== undefined && estimated !== null && toKeep.length > 0) {
      const handed = keep({
        projectId: q.projectId,
        dim: sel.dim,
        value: sel.value ?? '',
        grain: estimated,
        visitorColumn: sel.visitorColumn === 'visitors' ? 'visitors' : 'visitor_hashes',
        rows: toKeep.map(({ key, ...row }) => {
          const [visitors, sessions] = groupOf(key).estimates();
          return { ...row, visitors, sessions };
        }),
      }).then(
        () => undefined,
        (error: unknown) => options.estimates?.onKeepError?.(error),
      );
      keeping.add(handed);
      void handed.then(() => keeping.delete(handed));
    }
    return groups;
  };

  /**
   * The values of a dimension ranked by their count (page views for a page dimension, else
   * events), ties in byte order, the first `limit` that `keep` keeps, each with its merged visitor
   * sketch: the counts of every value and the raw pieces in one statement (one snapshot), the
   * sketches of the values ranked first from a second one.
   */
  const rank = async (q: ReportQuery, sel: Selection, pages: boolean, keep: (value: string) => boolean, limit: number) => {
    const plan = planRange(q.from, q.to, true);
    const count = pages ? 'page_views' : 'events';
    const v = new Values(dialect);
    const stored = aggregateParts(q, plan, sel, `events, page_views`, v, true);
    const parts = [
      ...(stored.length === 0 ? [] : [`SELECT 0 AS raw, SUM(${count}) AS n, value, ${NO_RAW} FROM (${stored.join('\n UNION ALL ')}) s GROUP BY value`]),
      ...rawParts(q, plan, sel, v, '1 AS raw, CAST(NULL AS BIGINT) AS n, '),
    ];
    const rows = parts.length === 0 ? [] : await run(parts.join('\n UNION ALL '), v.list);
    const counts = new Map<string, number>();
    for (const row of rows) if (num(row.raw) === 0) counts.set(String(row.value), num(row.n));
    const rawGroups = new Map<string, Group>();
    for (const row of rows) {
      if (num(row.raw) === 0) continue;
      const value = String(row.value);
      let g = rawGroups.get(value);
      if (g === undefined) rawGroups.set(value, (g = new Group()));
      addRaw(g, row, pages);
    }
    for (const [value, g] of rawGroups) counts.set(value, (counts.get(value) ?? 0) + g.events);
    const ranked = [...counts.entries()]
      .filter(([value, n]) => n > 0 && keep(value))
      .sort((a, b) => b[1] - a[1] || byteCompare(a[0], b[0]))
      .slice(0, limit);
    if (ranked.length === 0) return [];
    const chosen = ranked.map(([value]) => value);
    const w = new Values(dialect);
    const sketchParts = aggregateParts(q, plan, sel, sel.visitorColumn, w, true, chosen);
    const union = options.sketchUnion?.() ?? null;
    const sketchSql =
      union === null
        ? sketchParts.join('\n UNION ALL ')
        : `SELECT value, ${union(sel.visitorColumn)} AS ${sel.visitorColumn} FROM (${sketchParts.join('\n UNION ALL ')}) s GROUP BY value`;
    const sketchRows = sketchParts.length === 0 ? [] : await run(sketchSql, w.list);
    const visitors = new Map<string, VisitorSketch>(chosen.map((value) => [value, rawGroups.get(value)?.visitors ?? VisitorSketch.empty()]));
    for (const row of sketchRows) {
      const bytes = bytesOf(row[sel.visitorColumn]);
      if (bytes !== null) visitors.get(String(row.value))?.mergeBytes(bytes);
    }
    return ranked.map(([value, n]) => ({ value, n, visitors: visitors.get(value) ?? VisitorSketch.empty() }));
  };

  return {
    async settled() {
      await Promise.all(keeping);
    },

    async totals(q) {
      const groups = await grouped(q, planRange(q.from, q.to, true), null, () => 0);
      return totalsOf(groups.get(0) ?? new Group());
    },

    async series(q, bucketMs) {
      const byDay = bucketMs === DAY_MS;
      const groups = await grouped(
        q,
        planRange(q.from, q.to, byDay),
        (grain, bucket) => (grain === GRAIN_DAY ? bucket * DAY_MS : byDay ? Math.floor(bucket / 24) * DAY_MS : bucket * HOUR_MS),
        (ts) => Math.floor(ts / bucketMs) * bucketMs,
        byDay ? GRAIN_DAY : GRAIN_HOUR,
      );
      return [...groups.entries()]
        .filter(([, g]) => g.events > 0)
        .sort((a, b) => a[0] - b[0])
        .map(([time, g]) => ({ time, ...totalsOf(g) }));
    },

    async top(q, dimension, limit) {
      const pages = isPageDimension(dimension);
      const builtIns = new Set(BUILT_IN_EVENT_TYPES);
      const sel: Selection = {
        dim: dimension === 'custom_event' ? 'event_type' : dimension,
        value: null,
        visitorColumn: (pages ? 'page_' : '') + (q.visitorKey === 'hash' ? 'visitor_hashes' : 'visitors'),
      };
      const ranked = await rank(q, sel, pages, (value) => dimension !== 'custom_event' || !builtIns.has(value), limit);
      return ranked.map(({ value, n, visitors }) => ({ value, events: n, visitors: visitors.estimate() }));
    },

    async errors(q, limit) {
      const sel: Selection = { dim: ERROR_MESSAGE_DIM, value: null, visitorColumn: q.visitorKey === 'hash' ? 'visitor_hashes' : 'visitors' };
      const ranked = await rank(q, sel, false, () => true, limit);
      if (ranked.length === 0) return [];
      // The latest error of each message: in the last piece of the range that holds one, found
      // through the message's hour rows (the key index by value), so that it reads at most an
      // hour of events whatever the range. The whole hours are [h0, h1), the rest at either end.
      const h0 = Math.ceil(q.from / HOUR_MS);
      const h1 = Math.floor(q.to / HOUR_MS);
      const lastHours = new Map<string, number>();
      if (h1 > h0) {
        const v = new Values(dialect);
        const rows = await run(
          `SELECT value, MAX(bucket) AS hour FROM agg_values WHERE project_id = ${v.add(q.projectId)} AND dim = ${v.add(ERROR_MESSAGE_DIM)}
           AND value IN (${ranked.map(({ value }) => v.add(value)).join(', ')}) AND grain = ${GRAIN_HOUR} AND bucket >= ${v.add(h0)} AND bucket < ${v.add(h1)}${bots(q)}
           GROUP BY value`,
          v.list,
        );
        for (const row of rows) lastHours.set(String(row.value), num(row.hour));
      }
      const message = errorMessageSql(dialect.textProperty('message'));
      const latestIn = async (value: string, from: number, to: number): Promise<Record<string, unknown> | undefined> => {
        const v = new Values(dialect);
        const rows = await run(
          `SELECT timestamp, ${dialect.textProperty('stack')} AS stack FROM events
           WHERE project_id = ${v.add(q.projectId)} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)}${bots(q)}
             AND event_type = 'error' AND ${message} = ${v.add(value)}
           ORDER BY timestamp DESC, event_id DESC LIMIT 1`,
          v.list,
        );
        return rows[0];
      };
      const out: ErrorGroup[] = [];
      for (const { value, n, visitors } of ranked) {
        // Latest first: the piece after the whole hours, the message's last hour, the piece before them.
        const hour = lastHours.get(value);
        const windows: Array<[number, number]> =
          h1 > h0
            ? [[h1 * HOUR_MS, q.to], ...(hour === undefined ? [] : [[hour * HOUR_MS, (hour + 1) * HOUR_MS] as [number, number]]), [q.from, h0 * HOUR_MS]]
            : [[q.from, q.to]];
        let latest: Record<string, unknown> | undefined;
        for (const [from, to] of windows) if (to > from && (latest = await latestIn(value, from, to)) !== undefined) break;
        out.push({
          message: value,
          count: n,
          visitors: visitors.estimate(),
          lastSeen: num(latest?.timestamp),
          lastStack: latest?.stack === null || latest?.stack === undefined ? null : String(latest.stack),
        });
      }
      return out;
    },

    async sessions(q) {
      const summaries = options.sessionSummaries === true;
      const plan = planRange(q.from, q.to, summaries);
      const v = new Values(dialect);
      const parts: string[] = [];
      // The sessions that cross either end of the range's whole days, found through the midnights
      // they cross, and those of 30 days or more through their own index (first in the text: its
      // placeholders come first): as many as are active at two midnights, however long the range.
      // Those the counting asked for does not carry across (a human's page view before midnight,
      // a bot's event after) are in the sums below.
      let spanningCte = '';
      /** Whether `spanningCte` lists the crossing sessions' hours (`crossingHours`), a recursive CTE. */
      let recursive = false;
      const [f, l, pv] = q.includeBots ? ['first_ts', 'last_ts', 'page_views'] : ['h_first', 'h_last', 'h_page_views'];
      if (plan.days !== null) {
        const [d0, d1] = plan.days;
        const start = d0 * DAY_MS;
        const end = d1 * DAY_MS;
        // Two branches, each with its one way in: as one list of keys, PostgreSQL took the long
        // sessions' partial index for a third of the table (it keeps no statistics of its
        // predicate) and merge-joined every session of the project: 6 s at 10M events.
        const crossing = `s.${f} IS NOT NULL AND ((s.${f} < ${start} AND s.${l} >= ${start}) OR (s.${f} < ${end} AND s.${l} >= ${end}))`;
        const columns = `s.project_id, s.session_id, s.${f} AS f, s.${l} AS l, s.${pv} AS pv`;
        spanningCte = `sp AS MATERIALIZED (SELECT ${columns} FROM agg_session_state s
          WHERE s.project_id = ${v.add(q.projectId)} AND s.session_id IN (SELECT session_id FROM agg_session_midnights WHERE project_id = ${v.add(q.projectId)} AND day IN (${d0}, ${d1}))
          AND ${crossing}
          UNION SELECT ${columns} FROM agg_session_state s
          WHERE s.project_id = ${v.add(q.projectId)} AND s.last_ts - s.first_ts >= ${LONG_SESSION_MS} AND s.first_ts < ${end} AND ${crossing}), `;
        if (dialect.crossingHours === 'keys') {
          recursive = true;
          spanningCte += `hr (session_id, hour, last_hour) AS (
            SELECT session_id, CASE WHEN f < ${start} THEN ${d0 * 24} ELSE f / ${HOUR_MS} END, CASE WHEN l >= ${end} THEN ${d1 * 24 - 1} ELSE l / ${HOUR_MS} END FROM sp
            UNION ALL SELECT session_id, hour + 1, last_hour FROM hr WHERE hour < last_hour), `;
        }
      }
      for (const [first, end] of plan.hours) {
        parts.push(`SELECT session_id, first_ts, last_ts, page_views FROM agg_sessions
          WHERE project_id = ${v.add(q.projectId)} AND hour >= ${v.add(first)} AND hour < ${v.add(end)}${bots(q)}`);
      }
      for (const [from, to] of plan.raw) {
        parts.push(`SELECT session_id, timestamp AS first_ts, timestamp AS last_ts, CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END AS page_views
          FROM events WHERE project_id = ${v.add(q.projectId)} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)}
          AND session_id IS NOT NULL${bots(q)}`);
      }
      let daySums = '';
      if (plan.days !== null) {
        // Whole days: the sums of the sessions that lie wholly inside them, kept at ingest per first
        // and last day, and the few that cross the ends: their hour rows inside the range's days,
        // merged below with the same session's rows at the ends.
        const [d0, d1] = plan.days;
        // Their hour rows inside the range, as the dialect reads them best (`crossingHours`). As a
        // join on a range of hours, SQLite read every session hour of the range when it put the
        // hours outside, and PostgreSQL, which cannot tell how few sessions span days, hashed every
        // session hour of the project. A session with no event inside the range has no row there,
        // and is left out.
        const bot = q.includeBots ? '' : ` AND a.is_bot = ${dialect.falseValue}`;
        if (dialect.crossingHours === 'keys') {
          parts.push(`SELECT hr.session_id, MIN(a.first_ts) AS first_ts, MAX(a.last_ts) AS last_ts, SUM(a.page_views) AS page_views
            FROM hr CROSS JOIN agg_sessions a
            WHERE a.project_id = ${v.add(q.projectId)} AND a.hour = hr.hour AND a.session_id = hr.session_id${bot}
            GROUP BY hr.session_id`);
        } else {
          // Whole numbers this function computed, written into the text: placeholders must follow it in order.
          const start = d0 * DAY_MS;
          const end = d1 * DAY_MS;
          const own = (aggregate: string) => `(SELECT ${aggregate} FROM agg_sessions a
            WHERE a.project_id = sp.project_id AND a.session_id = sp.session_id
            AND a.hour >= CASE WHEN sp.f < ${start} THEN ${d0 * 24} ELSE sp.f / ${HOUR_MS} END
            AND a.hour <= CASE WHEN sp.l >= ${end} THEN ${d1 * 24 - 1} ELSE sp.l / ${HOUR_MS} END${bot})`;
          parts.push(`SELECT session_id, first_ts, last_ts, page_views FROM (
            SELECT sp.session_id, ${own('MIN(a.first_ts)')} AS first_ts, ${own('MAX(a.last_ts)')} AS last_ts, ${own('SUM(a.page_views)')} AS page_views
            FROM sp) x WHERE first_ts IS NOT NULL`);
        }
        daySums = `\n UNION ALL SELECT SUM(sessions), SUM(bounces), SUM(duration), SUM(page_views) FROM agg_session_days
          WHERE project_id = ${v.add(q.projectId)} AND with_bots = ${q.includeBots ? 1 : 0} AND day >= ${d0} AND day < ${d1} AND last_day < ${d1}`;
      }
      if (parts.length === 0) return { sessions: 0, bounces: 0, totalDurationMs: 0, pageViews: 0 };
      const rows = await run(
        `WITH ${recursive ? 'RECURSIVE ' : ''}${spanningCte}s AS (SELECT session_id, MAX(last_ts) - MIN(first_ts) AS duration, SUM(page_views) AS pv FROM (${parts.join('\n UNION ALL ')}) p GROUP BY session_id)
         SELECT COUNT(*) AS sessions, COALESCE(SUM(CASE WHEN pv <= 1 THEN 1 ELSE 0 END), 0) AS bounces,
           COALESCE(SUM(duration), 0) AS duration, COALESCE(SUM(pv), 0) AS page_views FROM s${daySums}`,
        v.list,
        { indexesOnly: plan.days !== null },
      );
      const sum = (column: string) => rows.reduce((total, row) => total + num(row[column]), 0);
      return { sessions: sum('sessions'), bounces: sum('bounces'), totalDurationMs: sum('duration'), pageViews: sum('page_views') };
    },
  };
}
