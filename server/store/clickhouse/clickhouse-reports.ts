import type {
  ErrorGroup,
  ExperimentSummary,
  FrustrationRow,
  FrustrationSignal,
  FunnelStepSpec,
  HeatmapElement,
  HeatmapReport,
  PageVitals,
  ReportQuery,
  ReportStore,
  SeriesPoint,
  SessionStats,
  TopRow,
  Totals,
  VariantResult,
} from '../report-store.js';
import {
  BUILT_IN_EVENT_TYPES,
  DIMENSION_COLUMNS,
  FRUSTRATION_SESSION_IDS,
  FRUSTRATION_SIGNALS,
  HEATMAP_GRID,
  PAGE_TOP_DIMENSIONS,
  SCROLL_DEPTH_EVENT,
  SCROLL_DEPTH_STEP,
  VITAL_PROPERTIES,
  filterColumns,
} from '../report-store.js';
import { timeBound } from '../shared/cursor.js';
import type { ClickHouseTables } from './clickhouse-schema.js';
import type { ClickHouseTransport, ParamValue, Row } from './clickhouse-transport.js';
import { cleanVital, vitalStepSql } from '../shared/vital-steps.js';
import { num } from '../shared/row-values.js';

/*
 * The reports on ClickHouse (docs/decisions.md, "ClickHouse"), read straight from `events`, as
 * Plausible reads its events table: `events` is ordered by (project_id, timestamp, …), so a report
 * reads one project's range by the primary index, only the columns it names (ClickHouse stores
 * each column apart), on every core. No rollup and no aggregate table: they exist on SQLite and
 * PostgreSQL because those read a row at a time; here a 30-day range is a few million values per
 * column, and a table of states kept beside the events would have to forget erased users and
 * retention's cut-off hour, which a sketch cannot.
 *
 * Definitions are those of docs/decisions.md, "Report definitions", on the same columns as the
 * other stores (`report-queries.ts` holds their SQL). Every count of rows is exact; distinct
 * visitors and sessions in totals, series, top lists, errors and the experiment list are
 * `uniqCombined64` (a 64-bit hash set, then a HyperLogLog of 2^17 cells, ~0.3% standard error),
 * inside the bound docs/protocol.md gives for the other stores' sketches. The sessions report and
 * the experiment's exposures group by session and visitor, so they are exact.
 */


/** The distinct count of the reports' unique numbers (see the comment at the top). */
const UNIQ = 'uniqCombined64';

/**
 * A string property as text (null when absent or null); a number or boolean as its JSON text, as
 * PostgreSQL's `->>` gives it. `name` is a constant of this file, never input.
 */
const textProperty = (name: string): string =>
  `if(JSONType(properties, '${name}') = 'String', JSONExtractString(properties, '${name}'),
     if(JSONType(properties, '${name}') IN ('Int64', 'UInt64', 'Double', 'Bool'), JSONExtractRaw(properties, '${name}'), NULL))`;

/** A numeric property as a Float64; null when absent or not a JSON number (a string "10" is not one). */
const numberProperty = (name: string): string =>
  `if(JSONType(properties, '${name}') IN ('Int64', 'UInt64', 'Double'), JSONExtractFloat(properties, '${name}'), NULL)`;

/** A whole, non-negative count for a `LIMIT` (written into the text: it is a number we checked). */
const limitOf = (limit: number): number => (Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0);

const vitalOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : cleanVital(Number(value)));

/** The values of one statement, each bound to a `{vN:Type}` placeholder. */
class Bind {
  readonly params: Record<string, ParamValue> = {};
  private n = 0;
  add(value: ParamValue, type: string): string {
    const name = `v${++this.n}`;
    this.params[name] = value;
    return `{${name}:${type}}`;
  }
}

/** The report reads of a store on `tables` through `transport`. */
export function createClickHouseReports(transport: ClickHouseTransport, tables: ClickHouseTables): ReportStore {
  // FINAL: a copy that two processes stored at once is counted once before the merge that drops it
  // (clickhouse-schema.ts).
  const events = `${tables.events} FINAL`;
  const visitorOf = (q: ReportQuery): string => (q.visitorKey === 'hash' ? 'visitor_id' : 'coalesce(anonymous_id, visitor_id)');

  /** The conditions every report puts on its rows. */
  const where = (q: ReportQuery, b: Bind): string => {
    const parts = [
      `project_id = ${b.add(q.projectId, 'String')}`,
      `timestamp >= ${b.add(timeBound(q.from), 'Int64')}`,
      `timestamp < ${b.add(timeBound(q.to), 'Int64')}`,
    ];
    if (!q.includeBots) parts.push('NOT is_bot');
    for (const [column, value] of filterColumns(q.filters)) parts.push(`${column} = ${b.add(value, 'String')}`);
    return parts.join(' AND ');
  };

  const run = (sql: string, b: Bind, settings?: Record<string, number>): Promise<Row[]> => transport.query(sql, b.params, settings);

  const totalsSql = (q: ReportQuery): string =>
    `count() AS events, countIf(event_type = 'page_view') AS page_views, ${UNIQ}(${visitorOf(q)}) AS visitors, ${UNIQ}(session_id) AS sessions`;

  const toTotals = (row: Row | undefined): Totals => ({
    events: num(row?.events),
    pageViews: num(row?.page_views),
    visitors: num(row?.visitors),
    sessions: num(row?.sessions),
  });

  return {
    async refreshRollups() {
      return 0;
    },

    async keepFilteredAhead() {
      return false;
    },

    async keptSettled() {},

    async totals(q): Promise<Totals> {
      const b = new Bind();
      const rows = await run(`SELECT ${totalsSql(q)} FROM ${events} WHERE ${where(q, b)}`, b);
      return toTotals(rows[0]);
    },

    async series(q, bucketMs): Promise<SeriesPoint[]> {
      const b = new Bind();
      const bucket = Math.max(1, Math.trunc(bucketMs));
      // intDiv truncates toward zero, as integer division does on the other stores.
      const rows = await run(`SELECT intDiv(timestamp, ${bucket}) * ${bucket} AS t, ${totalsSql(q)} FROM ${events} WHERE ${where(q, b)} GROUP BY t ORDER BY t`, b);
      return rows.map((row) => ({ time: num(row.t), ...toTotals(row) }));
    },

    async top(q, dimension, limit): Promise<TopRow[]> {
      const b = new Bind();
      const column = dimension === 'custom_event' ? 'event_type' : DIMENSION_COLUMNS[dimension];
      let extra = `${column} IS NOT NULL`;
      if (PAGE_TOP_DIMENSIONS.has(dimension)) extra += ` AND event_type = 'page_view'`;
      const base = where(q, b);
      if (dimension === 'custom_event') extra += ` AND event_type NOT IN ${b.add(BUILT_IN_EVENT_TYPES, 'Array(String)')}`;
      // Strings compare by bytes in ClickHouse: the other stores' byte order.
      const rows = await run(
        `SELECT assumeNotNull(${column}) AS value, count() AS n, ${UNIQ}(${visitorOf(q)}) AS visitors
         FROM ${events} WHERE ${base} AND ${extra}
         GROUP BY value ORDER BY n DESC, value LIMIT ${limitOf(limit)}`,
        b,
      );
      return rows.map((row) => ({ value: String(row.value), events: num(row.n), visitors: num(row.visitors) }));
    },

    async sessions(q): Promise<SessionStats> {
      const b = new Bind();
      const rows = await run(
        `SELECT count() AS sessions, countIf(pv <= 1) AS bounces, sum(duration) AS total_duration, sum(pv) AS page_views FROM (
           SELECT session_id, max(timestamp) - min(timestamp) AS duration, countIf(event_type = 'page_view') AS pv
           FROM ${events} WHERE ${where(q, b)} AND session_id IS NOT NULL GROUP BY session_id)`,
        b,
      );
      const row = rows[0];
      return { sessions: num(row?.sessions), bounces: num(row?.bounces), totalDurationMs: num(row?.total_duration), pageViews: num(row?.page_views) };
    },

    async vitals(q, limit): Promise<PageVitals[]> {
      const b = new Bind();
      const metrics = Object.entries(VITAL_PROPERTIES) as Array<[keyof typeof VITAL_PROPERTIES, string]>;
      // The nearest-rank 75th percentile: the value at rank ceil(0.75 n) = (3n + 3) div 4 of the
      // sorted samples, exact (quantile* functions interpolate or sample).
      const p75 = (key: string) => `if(count(s_${key}) = 0, NULL, arraySort(groupArray(s_${key}))[intDiv(3 * count(s_${key}) + 3, 4)]) AS ${key}`;
      const rows = await run(
        `SELECT assumeNotNull(path) AS page, count() AS samples, ${metrics.map(([key]) => p75(key)).join(', ')} FROM (
           SELECT path, ${metrics.map(([key, name]) => `${vitalStepSql(numberProperty(name))} AS s_${key}`).join(', ')}
           FROM ${events} WHERE ${where(q, b)} AND event_type = 'performance' AND path IS NOT NULL)
         GROUP BY page ORDER BY samples DESC, page LIMIT ${limitOf(limit)}`,
        b,
      );
      return rows.map((row) => ({
        path: String(row.page),
        samples: num(row.samples),
        lcp: vitalOrNull(row.lcp),
        inp: vitalOrNull(row.inp),
        cls: vitalOrNull(row.cls),
        fcp: vitalOrNull(row.fcp),
      }));
    },

    async errors(q, limit): Promise<ErrorGroup[]> {
      const b = new Bind();
      // The stack of the latest error by (time, id), as a one-element tuple so that a null stack
      // is a value argMax keeps rather than skips.
      const rows = await run(
        `SELECT message, count() AS n, ${UNIQ}(visitor) AS visitors, max(timestamp) AS last_seen,
           tupleElement(argMax(tuple(e_stack), (timestamp, event_id)), 1) AS stack
         FROM (
           SELECT coalesce(${textProperty('message')}, '') AS message, ${visitorOf(q)} AS visitor, timestamp, event_id, ${textProperty('stack')} AS e_stack
           FROM ${events} WHERE ${where(q, b)} AND event_type = 'error')
         GROUP BY message ORDER BY n DESC, message LIMIT ${limitOf(limit)}`,
        b,
      );
      return rows.map((row) => ({
        message: String(row.message),
        count: num(row.n),
        visitors: num(row.visitors),
        lastSeen: num(row.last_seen),
        lastStack: row.stack === null || row.stack === undefined ? null : String(row.stack),
      }));
    },

    async funnel(q, steps: readonly FunnelStepSpec[]): Promise<number[]> {
      if (steps.length === 0) return [];
      const b = new Bind();
      const base = where(q, b);
      const mask = steps
        .map((step, k) => {
          const match = step.kind === 'event' ? `event_type = ${b.add(step.value, 'String')}` : `event_type = 'page_view' AND path = ${b.add(step.value, 'String')}`;
          return `if(${match}, ${2 ** k}, 0)`;
        })
        .join(' + ');
      // Each session's matching events in (time, id) order, walked as docs/decisions.md says: step k
      // is reached by the first event matching it after the one that reached step k − 1. The walk
      // is a fold over the session's masks, exact (windowFunnel orders by time alone).
      const rows = await run(
        `SELECT depth, count() AS sessions FROM (
           SELECT arrayFold((k, m) -> if(k < ${steps.length} AND bitTest(m, k), k + 1, k),
             arrayMap(e -> e.3, arraySort(groupArray((timestamp, event_id, mask)))), toUInt64(0)) AS depth
           FROM (SELECT session_id, timestamp, event_id, ${mask} AS mask FROM ${events} WHERE ${base} AND session_id IS NOT NULL)
           WHERE mask > 0 GROUP BY session_id)
         GROUP BY depth`,
        b,
      );
      const reached = steps.map(() => 0);
      for (const row of rows) for (let k = 0; k < num(row.depth); k++) reached[k]! += num(row.sessions);
      return reached;
    },

    async experiments(q, limit): Promise<ExperimentSummary[]> {
      const b = new Bind();
      const rows = await run(
        `SELECT assumeNotNull(experiment) AS name, ${UNIQ}(visitor) AS visitors FROM (
           SELECT ${textProperty('experiment')} AS experiment, ${visitorOf(q)} AS visitor
           FROM ${events} WHERE ${where(q, b)} AND event_type = 'experiment_exposure')
         WHERE experiment IS NOT NULL AND experiment != '' GROUP BY name
         ORDER BY visitors DESC, name LIMIT ${limitOf(limit)}`,
        b,
      );
      return rows.map((row) => ({ experiment: String(row.name), visitors: num(row.visitors) }));
    },

    async frustration(q, limit): Promise<FrustrationRow[]> {
      const b = new Bind();
      // Per session first (its events and latest signal), then per element and page: the sessions
      // are counted exactly, and the latest few kept in order (latest first, ties by id).
      const rows = await run(
        `SELECT signal, selector, page, sum(c) AS n, countIf(isNotNull(sid)) AS sessions,
           arraySlice(arrayMap(x -> x.2, arraySort(x -> (-x.1, x.2), groupArrayIf((last, assumeNotNull(sid)), isNotNull(sid)))), 1, ${FRUSTRATION_SESSION_IDS}) AS ids
         FROM (
           SELECT event_type AS signal, coalesce(${textProperty('selector')}, '') AS selector, coalesce(path, '') AS page,
             session_id AS sid, count() AS c, max(timestamp) AS last
           FROM ${events} WHERE ${where(q, b)} AND event_type IN ${b.add(FRUSTRATION_SIGNALS, 'Array(String)')}
           GROUP BY signal, selector, page, sid)
         GROUP BY signal, selector, page
         ORDER BY signal, n DESC, selector, page
         LIMIT ${limitOf(limit)} BY signal`,
        b,
      );
      return rows.map((row) => ({
        signal: String(row.signal) as FrustrationSignal,
        selector: String(row.selector),
        path: String(row.page),
        count: num(row.n),
        sessions: num(row.sessions),
        sessionIds: Array.isArray(row.ids) ? row.ids.map(String) : [],
      }));
    },

    async heatmap(q, limit): Promise<HeatmapReport> {
      // The cells as report-heatmap.ts defines them: the position in thousandths, divided whole.
      const cell = (name: string): string =>
        `if(${numberProperty(name)} >= 0 AND ${numberProperty(name)} <= 1,
           toInt32(least(intDiv(toInt32(round(${numberProperty(name)} * 1000)), ${1000 / HEATMAP_GRID}), ${HEATMAP_GRID - 1})), NULL)`;
      const b = new Bind();
      const clickRows = await run(
        `SELECT selector, n, total, cells
         FROM (
           SELECT selector, sum(k) AS n, sum(sum(k)) OVER () AS total,
             arrayMap(t -> [toInt64(t.1), toInt64(t.2), toInt64(t.3)],
               arraySort(t -> (t.2, t.1), groupArrayIf((assumeNotNull(cx), assumeNotNull(cy), k), isNotNull(cx) AND isNotNull(cy)))) AS cells
           FROM (
             SELECT coalesce(${textProperty('selector')}, '') AS selector, ${cell('relativeX')} AS cx, ${cell('relativeY')} AS cy, count() AS k
             FROM ${events} WHERE ${where(q, b)} AND event_type = 'click'
             GROUP BY selector, cx, cy)
           GROUP BY selector)
         ORDER BY n DESC, selector LIMIT ${limitOf(limit)}`,
        b,
      );
      const s = new Bind();
      const steps = Array.from({ length: 100 / SCROLL_DEPTH_STEP }, (_, i) => (i + 1) * SCROLL_DEPTH_STEP);
      const scrollRows = await run(
        `SELECT count() AS views, ${steps.map((step) => `countIf(d >= ${step}) AS r${step}`).join(', ')}
         FROM (SELECT ${numberProperty('maxScrollDepth')} AS d FROM ${events} WHERE ${where(q, s)} AND event_type = '${SCROLL_DEPTH_EVENT}')
         WHERE isNotNull(d)`,
        s,
      );
      const elements: HeatmapElement[] = clickRows.map((row) => ({
        selector: String(row.selector),
        count: num(row.n),
        cells: (Array.isArray(row.cells) ? (row.cells as unknown[][]) : []).map(([x, y, count]) => ({ x: num(x), y: num(y), count: num(count) })),
      }));
      const scroll = scrollRows[0];
      return {
        clicks: num(clickRows[0]?.total),
        elements,
        pageViews: num(scroll?.views),
        reached: steps.map((step) => num(scroll?.[`r${step}`])),
      };
    },

    async experiment(q, experiment, conversion): Promise<VariantResult[]> {
      const b = new Bind();
      const visitor = visitorOf(q);
      const exposures = `SELECT coalesce(${textProperty('variant')}, '') AS variant, assumeNotNull(${visitor}) AS visitor, min(timestamp) AS first_ts
        FROM ${events} WHERE ${where(q, b)} AND event_type = 'experiment_exposure'
          AND ${textProperty('experiment')} = ${b.add(experiment, 'String')} AND ${visitor} IS NOT NULL
        GROUP BY variant, visitor`;
      if (conversion === null) {
        const rows = await run(`WITH x AS (${exposures}) SELECT variant, count() AS exposures FROM x GROUP BY variant ORDER BY variant`, b);
        return rows.map((row) => ({ variant: String(row.variant), exposures: num(row.exposures), conversions: null }));
      }
      const conversions = `SELECT assumeNotNull(${visitor}) AS visitor, max(timestamp) AS last_ts
        FROM ${events} WHERE ${where(q, b)} AND event_type = ${b.add(conversion, 'String')} AND ${visitor} IS NOT NULL GROUP BY visitor`;
      // A visitor converted when a conversion event came at or after their first exposure; a
      // visitor without one has a null `last_ts` (join_use_nulls), which counts as no conversion.
      const rows = await run(
        `WITH x AS (${exposures}), c AS (${conversions})
         SELECT x.variant AS variant, count() AS exposures, countIf(c.last_ts >= x.first_ts) AS conversions
         FROM x LEFT JOIN c ON c.visitor = x.visitor GROUP BY variant ORDER BY variant`,
        b,
        { join_use_nulls: 1 },
      );
      return rows.map((row) => ({ variant: String(row.variant), exposures: num(row.exposures), conversions: num(row.conversions) }));
    },
  };
}
