import type {
  ErrorGroup,
  ExperimentSummary,
  FilterDimension,
  FrustrationRow,
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
import { BUILT_IN_EVENT_TYPES, DIMENSION_COLUMNS, PAGE_TOP_DIMENSIONS, VITAL_PROPERTIES, filterColumns } from '../report-store.js';
import {
  DISTINCT_SESSIONS_SQL,
  DISTINCT_VISITORS_SQL,
  type DayPlan,
  SESSION_GROUP_SQL,
  type SourceContext,
  errorsSource,
  experimentsSource,
  exposuresSource,
  planDays,
  visitsSource,
  vitalsCountsSql,
} from './rollup-queries.js';
import type { RefreshNext } from './rollup-refresh.js';
import { refreshAll } from './rollup-refresher.js';
import { funnelStatement } from './report-funnel.js';
import { funnelDays } from './funnel-days.js';
import { type KeepSessionDays, createSessionDays } from './session-days.js';
import { sessionStatsDays } from './session-stats-days.js';
import { type Filter, type KeepFiltered, type SketchOfSql, createFilteredTops } from './filtered-tops.js';
import { type FilteredAheadOptions, createFilteredAhead } from './filtered-ahead.js';
import { frustrationRows, frustrationSql } from './report-frustration.js';
import { heatmapClicksSql, heatmapReport, heatmapScrollSql } from './report-heatmap.js';
import { type Dialect, type QueryHints, type RunQuery, Values } from './dialect.js';
import { DAY_MS } from './rollup-schema.js';
import { type SketchUnionSql, createAggregateReports } from '../aggregates/aggregate-queries.js';
import { HOUR_MS } from '../aggregates/aggregate-batch.js';
import type { KeepEstimates } from '../aggregates/kept-estimates.js';
import { cleanVital, vitalStepSql } from '../shared/vital-steps.js';
import { pageVitalsFromCounts } from './vital-counts.js';
import { type ExperimentRowsSql, type KeptExposureGapsOptions, createKeptExposureGaps } from './kept-exposure-gaps.js';
import { byteCompare, num } from '../shared/row-values.js';

/*
 * The SQL of the reports, one text for both stores: they differ only in placeholders, booleans and
 * reading a property out of the JSON, which a {@link Dialect} supplies. Every report reads the
 * project's time range through `events_by_time` (`project_id, timestamp, …`) and aggregates the
 * rows it finds; dimensions are columns filled at ingest (`reports/dimensions.ts`), so no JSON is
 * read except the few properties of error, performance and exposure events. A CTE read more than
 * once is `MATERIALIZED` (both databases have it): SQLite would otherwise run it again at each
 * reference, JSON extraction included.
 *
 * With daily rollups (`rollup-*.ts`, docs/decisions.md "Daily rollups"), a report whose shape they
 * can answer exactly reads its whole clean days from them and the rest of its range from the
 * events (`rollup-queries.ts`): the default view and one filter for totals, series by day and
 * sessions; no filter for top lists, errors, vitals, experiments (and their list) and funnels.
 * A top list with one filter reads what earlier ones kept per day (`filtered-tops.ts`), a funnel
 * and the sessions report with one filter what earlier reads of them kept (`session-days.ts`), an
 * experiment's variants the cells an earlier read of it started keeping in memory
 * (`kept-exposure-gaps.ts`). Everything else reads the events as below.
 */

/** Options of {@link createReportStore}. */
export interface ReportStoreOptions {
  /** Refreshes the next marked day: the store keeps daily rollups, and eligible reports read them. */
  refreshNext?: RefreshNext;
  /**
   * The store keeps the aggregates of `aggregates/` at ingest: totals and series by hour or day
   * (with at most one filter), top lists, sessions and errors (without one) read them.
   */
  aggregates?: boolean;
  /** With the aggregates, the store keeps the session summaries too: the sessions report reads whole days from them. */
  sessionSummaries?: boolean;
  /** With the aggregates: how the database merges stored sketches itself, asked per report (`AggregateReportOptions`). */
  sketchUnion?: () => SketchUnionSql | null;
  /**
   * With the aggregates: keeps the estimates a series computed beside the sketches of its rows, so
   * that the next one reads numbers (`aggregates/kept-estimates.ts`); `parts` as in
   * `AggregateReportOptions`. Without it, every series estimates every sketch it reads.
   */
  keepEstimates?: { keep: KeepEstimates; parts: boolean };
  /**
   * With the rollups: keeps the filtered rows a top list with one filter computes, so that the next
   * one reads them (`filtered-tops.ts`); without it, such a list reads the events of its range.
   */
  keepFiltered?: KeepFiltered;
  /**
   * With the rollups and the session summaries: keeps what a funnel or the sessions report with one
   * filter computes per day, so that the same report again reads a row per day
   * (`session-days.ts`); without it, they read a row per session of their range.
   */
  keepSessionDays?: KeepSessionDays;
  /** The experiment report's cells kept in memory: their budget, and the clock (tests move it). */
  keptCells?: Pick<KeptExposureGapsOptions, 'maxBytes' | 'now'>;
  /** A keep of filtered rows or session days failed (the report itself was answered). */
  onKeepError?: (error: unknown) => void;
  /** How the database builds a sketch of keys itself, asked per report (`FilteredTopsOptions`). */
  sketchOf?: () => SketchOfSql | null;
  /** With the kept filtered rows: which values the background keeps ahead (`filtered-ahead.ts`). */
  keepAhead?: Pick<FilteredAheadOptions, 'minEvents' | 'days' | 'now'>;
  /**
   * Runs the reads of keeping filters ahead, where they must not queue with the reports' (SQLite
   * runs its reports on a reader thread or two, and a frequent value's day read ahead at ten
   * million events takes up to seconds): not counted as a report reading, and not waited for by
   * one (`filtered-tops.ts`). By default the reports' run.
   */
  runBackground?: RunQuery;
}

/** The hints of a statement that reads the events of the report's whole range. */
const SCAN: QueryHints = { scan: true };

/** How many filters a report has. */
const filterCount = (q: ReportQuery): number => Object.values(q.filters).filter((v) => v !== undefined).length;

/** The SQL of every report over a {@link Dialect}, run by `run`. */
export function createReportStore(dialect: Dialect, runRead: RunQuery, options: ReportStoreOptions = {}): ReportStore {
  const visitorOf = (q: ReportQuery): string => (q.visitorKey === 'hash' ? 'visitor_id' : 'COALESCE(anonymous_id, visitor_id)');
  const { refreshNext, keepFiltered } = options;
  /** Statements running: the background keeps filters ahead only while none is. */
  let running = 0;
  const run: RunQuery = (sql, values, hints) => {
    running++;
    return Promise.resolve()
      .then(() => runRead(sql, values, hints))
      .finally(() => running--);
  };
  const { runBackground } = options;
  const filteredTops =
    refreshNext !== undefined && keepFiltered !== undefined
      ? createFilteredTops(dialect, run, { keep: keepFiltered, onKeepError: options.onKeepError, sketchOf: options.sketchOf, sketchUnion: options.sketchUnion, runBackground })
      : null;
  const sessionDays =
    refreshNext !== undefined && options.keepSessionDays !== undefined && options.sessionSummaries === true
      ? createSessionDays(dialect, run, { keep: options.keepSessionDays, onKeepError: options.onKeepError, runBackground })
      : null;
  const aggregates =
    options.aggregates === true
      ? createAggregateReports(dialect, run, {
          sessionSummaries: options.sessionSummaries === true,
          sketchUnion: options.sketchUnion,
          ...(options.keepEstimates === undefined ? {} : { estimates: { ...options.keepEstimates, onKeepError: options.onKeepError } }),
        })
      : null;
  /** The sessions report of `q` (one filter at most) as a report over sessions kept per day. */
  const sessionStats = (q: ReportQuery) => sessionStatsDays(dialect, q, (v, days) => filteredVisits(q, days, v), (v) => sourceContext(q, v));
  /**
   * What filters clicked on the dashboard read beside the aggregates, kept ahead for a day: their
   * top lists (the day's events read once for all of them), and each one's sessions report (as the
   * dashboard asks it, without bots).
   */
  const keepFiltersDay = async (projectId: string, filters: readonly Filter[], day: number) => {
    await filteredTops?.keepDay(projectId, filters, day);
    if (sessionDays === null) return;
    // Each filter's own (an indexed read of its rollup rows); one that fails does not cost the others theirs.
    const failures: unknown[] = [];
    for (const [dim, value] of filters) {
      const q: ReportQuery = { projectId, from: day * DAY_MS, to: (day + 1) * DAY_MS, filters: { [dim]: value }, includeBots: false, visitorKey: 'anonymous' };
      await sessionDays.keepDay(q, sessionStats(q), day).catch((error: unknown) => void failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
  };
  // The day's counts of each value it starts from are the aggregates'.
  const keepAhead =
    filteredTops === null || aggregates === null ? null : createFilteredAhead(dialect, runBackground ?? run, {
          keepDay: keepFiltersDay,
          busy: () => running > 0,
          manyValuesARead: () => (options.sketchOf?.() ?? null) !== null,
          ...options.keepAhead,
        });
  /** The turn of keeping ahead in progress: turns run one after the other (the background's and a caller's). */
  let aheadTurn: Promise<unknown> = Promise.resolve();

  /** The plan of a report the rollups can serve with at most `maxFilters` filters; null: read the events. */
  const rollupPlan = async (q: ReportQuery, maxFilters: number): Promise<DayPlan | null> => {
    if (refreshNext === undefined || filterCount(q) > maxFilters) return null;
    const plan = await planDays(q, run, dialect);
    return plan.days === null ? null : plan;
  };

  const sourceContext = (q: ReportQuery, v: Values): SourceContext => ({
    dialect,
    add: (value) => v.add(value),
    rawWhere: (from, to) => where({ ...q, from, to }, v),
    visitor: visitorOf(q),
  });

  /** The visits of the report's one filter (or of every event), for totals, series and sessions. */
  const filteredVisits = (q: ReportQuery, plan: DayPlan, v: Values): string => {
    const entry = (Object.entries(q.filters) as Array<[FilterDimension, string | undefined]>).find(([, value]) => value !== undefined);
    return visitsSource(q, plan, sourceContext(q, v), { dim: entry?.[0] ?? '', value: entry?.[1] ?? '', rawValue: "''" });
  };

  const visitsTotalsSql = `COALESCE(SUM(events), 0) AS events, COALESCE(SUM(page_views), 0) AS page_views,
     ${DISTINCT_VISITORS_SQL} AS visitors, ${DISTINCT_SESSIONS_SQL} AS sessions`;

  /** The conditions every report puts on its rows. */
  const where = (q: ReportQuery, v: Values): string => {
    const parts = [`project_id = ${v.add(q.projectId)}`, `timestamp >= ${v.add(q.from)}`, `timestamp < ${v.add(q.to)}`];
    if (!q.includeBots) parts.push(`is_bot = ${dialect.falseValue}`);
    for (const [column, value] of filterColumns(q.filters)) parts.push(`${column} = ${v.add(value)}`);
    return parts.join(' AND ');
  };

  const totalsSql = (q: ReportQuery) =>
    `COUNT(*) AS events, COALESCE(SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END), 0) AS page_views,
     COUNT(DISTINCT ${visitorOf(q)}) AS visitors, COUNT(DISTINCT session_id) AS sessions`;

  const toTotals = (row: Record<string, unknown> | undefined): Totals => ({
    events: num(row?.events),
    pageViews: num(row?.page_views),
    visitors: num(row?.visitors),
    sessions: num(row?.sessions),
  });

  // A visitor is an id of the key dictionary, or a key no refresh has given one yet (only raw
  // rows have those: `visitsSource`); both sides group and meet on integers but for those.
  const keyOnly = 'CASE WHEN visitor IS NULL THEN visitor_key END';
  /** The experiment report's rows over a plan, a row per visitor (and variant). */
  const experimentRows: ExperimentRowsSql = {
    exposures: (q, plan, v, experiment) =>
      `SELECT variant, visitor, ${keyOnly} AS visitor_key, MIN(first) AS first FROM (${exposuresSource(q, plan, sourceContext(q, v), experiment)}) x
        WHERE visitor IS NOT NULL OR visitor_key IS NOT NULL GROUP BY variant, visitor, ${keyOnly}`,
    experiments: (q, plan, v) =>
      `SELECT experiment AS variant, visitor, ${keyOnly} AS visitor_key, 0 AS first FROM (${experimentsSource(q, plan, sourceContext(q, v))}) x
        WHERE experiment IS NOT NULL AND experiment <> '' AND (visitor IS NOT NULL OR visitor_key IS NOT NULL) GROUP BY experiment, visitor, ${keyOnly}`,
    conversions: (q, plan, v, conversion) =>
      `SELECT visitor, ${keyOnly} AS visitor_key, MAX(last_ts) AS last FROM (${visitsSource(q, plan, sourceContext(q, v), {
        dim: 'event_type',
        value: conversion,
        rawValue: 'event_type',
        rawExtra: () => ` AND event_type = ${v.add(conversion)}`,
      })}) c WHERE visitor IS NOT NULL OR visitor_key IS NOT NULL GROUP BY visitor, ${keyOnly}`,
  };
  const exposureGaps =
    refreshNext === undefined
      ? null
      : createKeptExposureGaps(dialect, { run, runBackground: runBackground ?? run, rows: experimentRows, onKeepError: options.onKeepError, ...options.keptCells });

  return {
    async refreshRollups(skip) {
      return refreshNext === undefined ? 0 : refreshAll((beforeDay) => refreshNext(beforeDay, skip));
    },

    async keptSettled() {
      await exposureGaps?.settled();
      await aggregates?.settled();
    },

    async keepFilteredAhead(whenIdle) {
      if (keepAhead === null) return false;
      const turn = aheadTurn.then(() => keepAhead(whenIdle));
      aheadTurn = turn.catch(() => undefined);
      return turn;
    },

    async totals(q) {
      if (aggregates !== null && filterCount(q) <= 1) return aggregates.totals(q);
      const plan = await rollupPlan(q, 1);
      if (plan !== null) {
        const v = new Values(dialect);
        const rows = await run(`SELECT ${visitsTotalsSql} FROM (${filteredVisits(q, plan, v)}) s`, v.list);
        return toTotals(rows[0]);
      }
      const v = new Values(dialect);
      const rows = await run(`SELECT ${totalsSql(q)} FROM events WHERE ${where(q, v)}`, v.list, SCAN);
      return toTotals(rows[0]);
    },

    async series(q, bucketMs): Promise<SeriesPoint[]> {
      if (aggregates !== null && filterCount(q) <= 1 && (bucketMs === DAY_MS || bucketMs === HOUR_MS)) return aggregates.series(q, bucketMs);
      const plan = bucketMs === DAY_MS ? await rollupPlan(q, 1) : null;
      if (plan !== null) {
        const v = new Values(dialect);
        const rows = await run(`SELECT day, ${visitsTotalsSql} FROM (${filteredVisits(q, plan, v)}) s GROUP BY day ORDER BY day`, v.list);
        return rows.map((row) => ({ time: num(row.day) * DAY_MS, ...toTotals(row) }));
      }
      const v = new Values(dialect);
      const bucket = Math.trunc(bucketMs);
      const rows = await run(
        `SELECT (timestamp / ${bucket}) * ${bucket} AS t, ${totalsSql(q)} FROM events WHERE ${where(q, v)} GROUP BY 1 ORDER BY 1`,
        v.list,
        SCAN,
      );
      return rows.map((row) => ({ time: num(row.t), ...toTotals(row) }));
    },

    async top(q, dimension, limit): Promise<TopRow[]> {
      if (aggregates !== null && filterCount(q) === 0) return aggregates.top(q, dimension, limit);
      if (filteredTops !== null && filterCount(q) === 1) {
        const plan = await rollupPlan(q, 1);
        const filter = (Object.entries(q.filters) as Array<[FilterDimension, string | undefined]>).find(([, value]) => value !== undefined);
        if (plan !== null && filter !== undefined) return filteredTops.top(q, [filter[0], filter[1] as string], dimension, limit, plan);
      }
      const column = dimension === 'custom_event' ? 'event_type' : DIMENSION_COLUMNS[dimension];
      const plan = await rollupPlan(q, 0);
      if (plan !== null) {
        const v = new Values(dialect);
        const pages = PAGE_TOP_DIMENSIONS.has(dimension);
        const builtIns = () => BUILT_IN_EVENT_TYPES.map((t) => v.add(t)).join(', ');
        const source = visitsSource(q, plan, sourceContext(q, v), {
          dim: dimension === 'custom_event' ? 'event_type' : dimension,
          value: null,
          rawValue: column,
          rollupExtra: () => (pages ? ' AND page_views > 0' : dimension === 'custom_event' ? ` AND value NOT IN (${builtIns()})` : ''),
          rawExtra: () =>
            ` AND ${column} IS NOT NULL` +
            (pages ? " AND event_type = 'page_view'" : dimension === 'custom_event' ? ` AND event_type NOT IN (${builtIns()})` : ''),
        });
        const rows = await run(
          `SELECT value, SUM(${pages ? 'page_views' : 'events'}) AS events, ${DISTINCT_VISITORS_SQL} AS visitors FROM (${source}) s
           GROUP BY value ORDER BY events DESC, ${dialect.byteOrder('value')} LIMIT ${v.add(limit)}`,
          v.list,
        );
        return rows.map((row) => ({ value: String(row.value), events: num(row.events), visitors: num(row.visitors) }));
      }
      const v = new Values(dialect);
      let extra = `${column} IS NOT NULL`;
      if (PAGE_TOP_DIMENSIONS.has(dimension)) extra += ` AND event_type = 'page_view'`;
      const base = where(q, v);
      if (dimension === 'custom_event') extra += ` AND event_type NOT IN (${BUILT_IN_EVENT_TYPES.map((t) => v.add(t)).join(', ')})`;
      const rows = await run(
        `SELECT ${column} AS value, COUNT(*) AS events, COUNT(DISTINCT ${visitorOf(q)}) AS visitors
         FROM events WHERE ${base} AND ${extra}
         GROUP BY ${column} ORDER BY events DESC, ${dialect.byteOrder(column)} LIMIT ${v.add(limit)}`,
        v.list,
        SCAN,
      );
      return rows.map((row) => ({ value: String(row.value), events: num(row.events), visitors: num(row.visitors) }));
    },

    async sessions(q): Promise<SessionStats> {
      if (aggregates !== null && filterCount(q) === 0) return aggregates.sessions(q);
      const plan = await rollupPlan(q, 1);
      const kept = plan !== null && sessionDays !== null ? await sessionDays.read(q, sessionStats(q), plan) : null;
      if (kept !== null) {
        const [sessions = 0, bounces = 0, totalDurationMs = 0, pageViews = 0] = kept;
        return { sessions, bounces, totalDurationMs, pageViews };
      }
      const v = new Values(dialect);
      const perSession =
        plan !== null
          ? `SELECT MAX(last_ts) - MIN(first_ts) AS duration, SUM(page_views) AS pv
           FROM (${filteredVisits(q, plan, v)}) v WHERE session_id IS NOT NULL OR session_key IS NOT NULL GROUP BY ${SESSION_GROUP_SQL}`
          : `SELECT session_id, MAX(timestamp) - MIN(timestamp) AS duration,
             SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS pv
           FROM events WHERE ${where(q, v)} AND session_id IS NOT NULL GROUP BY session_id`;
      const rows = await run(
        `WITH s AS (${perSession})
         SELECT COUNT(*) AS sessions, COALESCE(SUM(CASE WHEN pv <= 1 THEN 1 ELSE 0 END), 0) AS bounces,
           COALESCE(SUM(duration), 0) AS duration, COALESCE(SUM(pv), 0) AS page_views FROM s`,
        v.list,
        plan === null ? SCAN : undefined,
      );
      const row = rows[0];
      return { sessions: num(row?.sessions), bounces: num(row?.bounces), totalDurationMs: num(row?.duration), pageViews: num(row?.page_views) };
    },

    async vitals(q, limit): Promise<PageVitals[]> {
      const plan = await rollupPlan(q, 0);
      const v = new Values(dialect);
      // From the rollups: the days' counts and the raw parts' merged and walked in Node (`vital-counts.ts`).
      if (plan !== null) return pageVitalsFromCounts(await run(vitalsCountsSql(q, plan, sourceContext(q, v), VITAL_PROPERTIES, limit), v.list));
      const metrics = Object.entries(VITAL_PROPERTIES) as Array<[keyof typeof VITAL_PROPERTIES, string]>;
      // The nearest-rank 75th percentile: the value at rank ceil(0.75 n), written (3n + 3) / 4 in
      // integer arithmetic, which both databases have (SQLite may lack CEIL).
      const rows = await run(
        `WITH perf AS MATERIALIZED (
           SELECT path, ${metrics.map(([key, name]) => `${vitalStepSql(dialect.numberProperty(name))} AS ${key}`).join(', ')}
           FROM events WHERE ${where(q, v)} AND event_type = 'performance' AND path IS NOT NULL),
         pages AS (
           SELECT path, COUNT(*) AS samples FROM perf GROUP BY path
           ORDER BY samples DESC, ${dialect.byteOrder('path')} LIMIT ${v.add(limit)}),
         samples AS (
           ${metrics.map(([key]) => `SELECT perf.path, '${key}' AS metric, ${key} AS value FROM perf JOIN pages ON pages.path = perf.path WHERE ${key} IS NOT NULL`).join('\n           UNION ALL ')}),
         ranked AS (
           SELECT path, metric, value, ROW_NUMBER() OVER (PARTITION BY path, metric ORDER BY value) AS rn,
             COUNT(*) OVER (PARTITION BY path, metric) AS n
           FROM samples)
         SELECT pages.path, pages.samples, ranked.metric, ranked.value
         FROM pages LEFT JOIN ranked ON ranked.path = pages.path AND ranked.rn = (3 * ranked.n + 3) / 4
         ORDER BY pages.samples DESC, ${dialect.byteOrder('pages.path')}`,
        v.list,
        SCAN,
      );
      const byPath = new Map<string, PageVitals>();
      for (const row of rows) {
        const path = String(row.path);
        let page = byPath.get(path);
        if (!page) {
          page = { path, samples: num(row.samples), lcp: null, inp: null, cls: null, fcp: null };
          byPath.set(path, page);
        }
        const metric = row.metric as keyof typeof VITAL_PROPERTIES | null;
        if (metric !== null) page[metric] = row.value === null || row.value === undefined ? null : cleanVital(Number(row.value));
      }
      return [...byPath.values()];
    },

    async errors(q, limit): Promise<ErrorGroup[]> {
      if (aggregates !== null && filterCount(q) === 0) return aggregates.errors(q, limit);
      const plan = await rollupPlan(q, 0);
      const v = new Values(dialect);
      // One row per error, or per rollup group of errors (n of them, the latest's time, id and stack).
      const source =
        plan !== null
          ? errorsSource(q, plan, sourceContext(q, v))
          : `SELECT COALESCE(${dialect.textProperty('message')}, '') AS message, ${visitorOf(q)} AS visitor, 1 AS n,
             timestamp AS last_ts, event_id AS last_event_id, ${dialect.textProperty('stack')} AS stack
           FROM events WHERE ${where(q, v)} AND event_type = 'error'`;
      const rows = await run(
        `WITH e AS MATERIALIZED (${source}),
         g AS (
           SELECT message, SUM(n) AS n, COUNT(DISTINCT visitor) AS visitors, MAX(last_ts) AS last_seen FROM e
           GROUP BY message ORDER BY n DESC, ${dialect.byteOrder('message')} LIMIT ${v.add(limit)}),
         latest AS (
           SELECT e.message, e.stack, ROW_NUMBER() OVER (PARTITION BY e.message ORDER BY e.last_ts DESC, e.last_event_id DESC) AS rn
           FROM e JOIN g ON g.message = e.message)
         SELECT g.message, g.n, g.visitors, g.last_seen, latest.stack
         FROM g JOIN latest ON latest.message = g.message AND latest.rn = 1
         ORDER BY g.n DESC, ${dialect.byteOrder('g.message')}`,
        v.list,
        plan === null ? SCAN : undefined,
      );
      return rows.map((row) => ({
        message: String(row.message),
        count: num(row.n),
        visitors: num(row.visitors),
        lastSeen: num(row.last_seen),
        lastStack: row.stack === null || row.stack === undefined ? null : String(row.stack),
      }));
    },

    async funnel(q, steps): Promise<number[]> {
      if (steps.length === 0) return [];
      const plan = await rollupPlan(q, 0);
      const kept = plan !== null && sessionDays !== null ? await sessionDays.read(q, funnelDays(dialect, q, steps, (v) => sourceContext(q, v)), plan) : null;
      if (kept !== null) return kept;
      const v = new Values(dialect);
      const statement = funnelStatement(dialect.funnelWalk, q, steps, plan, sourceContext(q, v));
      return statement.reached(await run(statement.sql, v.list, plan === null ? SCAN : undefined));
    },

    async experiments(q, limit): Promise<ExperimentSummary[]> {
      const plan = await rollupPlan(q, 0);
      if (plan === null || exposureGaps === null) return experimentsFromRows(q, plan, limit);
      // The list's cells count each experiment as a variant of one (`kept-exposure-gaps.ts`).
      const counted = await exposureGaps.answer(q, plan, null, null, async () =>
        (await experimentsFromRows(q, plan, limit)).map((row) => ({ variant: row.experiment, exposures: row.visitors, conversions: null })),
      );
      return counted
        .map((row) => ({ experiment: row.variant, visitors: row.exposures }))
        .sort((x, y) => y.visitors - x.visitors || byteCompare(x.experiment, y.experiment))
        .slice(0, limit);
    },

    async frustration(q, limit): Promise<FrustrationRow[]> {
      const v = new Values(dialect);
      return frustrationRows(await run(frustrationSql(dialect, v, where(q, v), limit), v.list, SCAN));
    },

    async heatmap(q, limit): Promise<HeatmapReport> {
      const c = new Values(dialect);
      const clicks = await run(heatmapClicksSql(dialect, c, where(q, c), limit), c.list, SCAN);
      const s = new Values(dialect);
      return heatmapReport(clicks, await run(heatmapScrollSql(dialect, where(q, s)), s.list, SCAN));
    },

    async experiment(q, experiment, conversion): Promise<VariantResult[]> {
      const plan = await rollupPlan(q, 0);
      if (plan !== null && exposureGaps !== null) return exposureGaps.answer(q, plan, experiment, conversion, () => experimentFromRows(q, plan, experiment, conversion));
      return experimentFromRows(q, plan, experiment, conversion);
    },
  };

  /** The experiments list from the rollups' rows per visitor (`plan`) or the events'. */
  async function experimentsFromRows(q: ReportQuery, plan: DayPlan | null, limit: number): Promise<ExperimentSummary[]> {
    const v = new Values(dialect);
    const source =
      plan !== null
        ? experimentsSource(q, plan, sourceContext(q, v))
        : `SELECT ${dialect.textProperty('experiment')} AS experiment, CAST(NULL AS INTEGER) AS visitor, ${visitorOf(q)} AS visitor_key
      FROM events WHERE ${where(q, v)} AND event_type = 'experiment_exposure'`;
    const rows = await run(
      `SELECT experiment, ${DISTINCT_VISITORS_SQL} AS visitors FROM (${source}) x
       WHERE experiment IS NOT NULL AND experiment <> '' GROUP BY experiment
       ORDER BY visitors DESC, ${dialect.byteOrder('experiment')} LIMIT ${v.add(limit)}`,
      v.list,
      plan === null ? SCAN : undefined,
    );
    return rows.map((row) => ({ experiment: String(row.experiment), visitors: num(row.visitors) }));
  }

  /** The experiment report from the rollups' rows per visitor (`plan`) or the events'. */
  async function experimentFromRows(q: ReportQuery, plan: DayPlan | null, experiment: string, conversion: string | null): Promise<VariantResult[]> {
    const v = new Values(dialect);
    const variant = `COALESCE(${dialect.textProperty('variant')}, '')`;
    const exposures =
      plan !== null
        ? experimentRows.exposures(q, plan, v, experiment)
        : `SELECT ${variant} AS variant, CAST(NULL AS INTEGER) AS visitor, ${visitorOf(q)} AS visitor_key, MIN(timestamp) AS first FROM events
      WHERE ${where(q, v)} AND event_type = 'experiment_exposure' AND ${dialect.textProperty('experiment')} = ${v.add(experiment)}
        AND ${visitorOf(q)} IS NOT NULL
      GROUP BY ${variant}, ${visitorOf(q)}`;
    if (conversion === null) {
      const rows = await run(
        `WITH x AS (${exposures}) SELECT variant, COUNT(*) AS exposures FROM x GROUP BY variant ORDER BY ${dialect.byteOrder('variant')}`,
        v.list,
        plan === null ? SCAN : undefined,
      );
      return rows.map((row) => ({ variant: String(row.variant), exposures: num(row.exposures), conversions: null }));
    }
    const conversions =
      plan !== null
        ? experimentRows.conversions(q, plan, v, conversion)
        : `SELECT CAST(NULL AS INTEGER) AS visitor, ${visitorOf(q)} AS visitor_key, MAX(timestamp) AS last FROM events
      WHERE ${where(q, v)} AND event_type = ${v.add(conversion)} AND ${visitorOf(q)} IS NOT NULL GROUP BY ${visitorOf(q)}`;
    // A visitor converted when a conversion event came at or after their first exposure. The
    // two kinds of visitor meet in two joins, each on one column, which both databases hash (one
    // join on either column would be a nested loop on PostgreSQL).
    const rows = await run(
      `WITH x AS (${exposures}), c AS (${conversions}),
       j AS (SELECT x.variant, x.first, c.last FROM x LEFT JOIN c ON c.visitor = x.visitor WHERE x.visitor IS NOT NULL
         UNION ALL SELECT x.variant, x.first, c.last FROM x LEFT JOIN c ON c.visitor_key = x.visitor_key WHERE x.visitor IS NULL)
       SELECT variant, COUNT(*) AS exposures, COALESCE(SUM(CASE WHEN last >= first THEN 1 ELSE 0 END), 0) AS conversions
       FROM j GROUP BY variant ORDER BY ${dialect.byteOrder('variant')}`,
      v.list,
      plan === null ? SCAN : undefined,
    );
    return rows.map((row) => ({ variant: String(row.variant), exposures: num(row.exposures), conversions: num(row.conversions) }));
  }
}
