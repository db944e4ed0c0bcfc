import type { Dialect, RunQuery } from './dialect.js';
import type { FilterDimension, FunnelStepSpec, ReportQuery } from '../report-store.js';
import { DAY_MS, daySql } from './rollup-schema.js';
import { vitalStepSql } from '../shared/vital-steps.js';

/*
 * The rows a report aggregates when it is served from the daily rollups (docs/decisions.md,
 * "Daily rollups"): the whole UTC days of the range that carry no mark come from the rollup
 * tables, everything else (the partial days at either end of the range, and marked days: today,
 * a day with late events or an erasure not yet refreshed) from the events, in one statement so one
 * snapshot sees both. Each source has the same columns on both sides of its UNION ALL, and every
 * count taken over it (sums, distinct visitors and sessions, first and last times) is the count
 * the raw query takes, because a rollup row is a group of those very events.
 */

/** Which of a report's range comes from where. */
export interface DayPlan {
  /** Whole days `[first, end)` served from rollups, except `dirty`. */
  days: { first: number; end: number; dirty: number[] } | null;
  /** Ranges `[from, to)` read from the events, in order. */
  raw: Array<[number, number]>;
}

/** What a source needs of the report it serves. */
export interface SourceContext {
  dialect: Dialect;
  /** Adds a value to the statement; returns its placeholder. Called in the order of the text. */
  add(value: unknown): string;
  /** The raw query's conditions (project, bots, filters) over `[from, to)` instead of the report's range. */
  rawWhere(from: number, to: number): string;
  /** The raw query's visitor expression. */
  visitor: string;
}

/** Reads which whole days of the range are marked, and splits the range accordingly. */
export async function planDays(q: ReportQuery, run: RunQuery, dialect: Dialect): Promise<DayPlan> {
  const fullFrom = Math.ceil(q.from / DAY_MS) * DAY_MS;
  const fullTo = Math.floor(q.to / DAY_MS) * DAY_MS;
  if (fullTo <= fullFrom) return { days: null, raw: [[q.from, q.to]] };
  const first = fullFrom / DAY_MS;
  const end = fullTo / DAY_MS;
  const ph = dialect.placeholder;
  const rows = await run(`SELECT day FROM rollup_dirty WHERE project_id = ${ph(1)} AND day >= ${ph(2)} AND day < ${ph(3)} ORDER BY day`, [q.projectId, first, end]);
  const dirty = rows.map((row) => Number(row.day));
  const raw: Array<[number, number]> = [];
  const push = (from: number, to: number) => {
    const last = raw[raw.length - 1];
    if (last !== undefined && last[1] === from) last[1] = to;
    else raw.push([from, to]);
  };
  if (q.from < fullFrom) push(q.from, fullFrom);
  for (const day of dirty) push(day * DAY_MS, (day + 1) * DAY_MS);
  if (fullTo < q.to) push(fullTo, q.to);
  return { days: dirty.length === end - first ? null : { first, end, dirty }, raw };
}

/** The conditions on a rollup table's rows: the project, its clean days, bots. */
function rollupWhere(q: ReportQuery, days: NonNullable<DayPlan['days']>, s: SourceContext): string {
  let sql = `project_id = ${s.add(q.projectId)} AND day >= ${s.add(days.first)} AND day < ${s.add(days.end)}`;
  if (days.dirty.length > 0) sql += ` AND day NOT IN (${days.dirty.map((d) => s.add(d)).join(', ')})`;
  if (!q.includeBots) sql += ` AND is_bot = ${s.dialect.falseValue}`;
  return sql;
}

/** The UNION ALL of a rollup part and raw parts; raw parts are built in order by `rawPart`. */
function union(plan: DayPlan, rollupPart: (() => string) | null, rawPart: (from: number, to: number) => string): string {
  const parts: string[] = [];
  if (plan.days !== null && rollupPart !== null) parts.push(rollupPart());
  for (const [from, to] of plan.raw) parts.push(rawPart(from, to));
  return parts.join('\n  UNION ALL ');
}

/** Options of {@link visitsSource}. */
export interface VisitsSpec {
  /** The `rollup_values` dimension: '' for every event. */
  dim: FilterDimension | '';
  /** Rows of this value only (the one filter of the report), or every value. */
  value: string | null;
  /** The `value` column of a raw row. */
  rawValue: string;
  /** More conditions on rollup rows (leading ` AND `), built when called. */
  rollupExtra?: () => string;
  /** More conditions on raw rows (leading ` AND `), built when called. */
  rawExtra?: () => string;
}

/** The id of a key in the project's dictionary (`rollup_keys`), from a raw event: null for a key no refresh has seen. */
const keyIdSql = (dialect: Dialect, key: string): string =>
  `(SELECT k.id FROM rollup_keys k WHERE k.project_id = ${dialect.asDictionaryKey('events.project_id')} AND k.key = ${dialect.asDictionaryKey(key)})`;

/**
 * Distinct visitors over rows of {@link visitsSource}: the ids, and the text keys no id stands for
 * (a key without an id is in no rollup row, so the two sets never meet).
 */
export const DISTINCT_VISITORS_SQL = 'COUNT(DISTINCT visitor) + COUNT(DISTINCT visitor_key) FILTER (WHERE visitor IS NULL)';

/** Distinct sessions over rows of {@link visitsSource}, as {@link DISTINCT_VISITORS_SQL}. */
export const DISTINCT_SESSIONS_SQL = 'COUNT(DISTINCT session_id) + COUNT(DISTINCT session_key) FILTER (WHERE session_id IS NULL)';

/** One group per session over rows of {@link visitsSource} (`GROUP BY` these, rows with a session only). */
export const SESSION_GROUP_SQL = 'session_id, CASE WHEN session_id IS NULL THEN session_key END';

/**
 * Visits: `day, value, session_id, visitor, session_key, visitor_key, events, page_views,
 * first_ts, last_ts`, one row per rollup group or per raw event (the raw rows carry the report's
 * filters, the rollup rows the one filter as `dim`/`value`). Sessions and visitors are ids of the
 * project's key dictionary; a raw row also carries its keys as text (`session_key`,
 * `visitor_key`), which count where it has no id: its key is new since the last refresh (count
 * them with {@link DISTINCT_VISITORS_SQL}, {@link DISTINCT_SESSIONS_SQL}, {@link SESSION_GROUP_SQL}).
 */
export function visitsSource(q: ReportQuery, plan: DayPlan, s: SourceContext, spec: VisitsSpec): string {
  const visitorColumn = q.visitorKey === 'hash' ? 'visitor_hash' : 'visitor';
  return union(
    plan,
    plan.days === null
      ? null
      : () => {
          const days = plan.days as NonNullable<DayPlan['days']>;
          // Every row of dimension '' has the value '': no condition on it (PostgreSQL multiplied
          // the two conditions' selectivities and expected a thirteenth of the rows), and `dim = ''`
          // written out, so that PostgreSQL's partial index of those rows serves any plan.
          // (Values are added in the order of the text, for SQLite's positional `?`.)
          // One value's rows are sought day by day, a list of the clean days: the indexes hold the
          // value after the day, so a range of days is read through every value of each day (the
          // conversions of an experiment report at 10M events over 90 days: 461 against 10 ms on SQLite).
          const one = spec.value !== null && spec.dim !== '';
          const project = s.add(q.projectId);
          const dim = spec.dim === '' ? "dim = ''" : `dim = ${s.add(spec.dim)}`;
          let sql = `SELECT day, value, session_id, ${visitorColumn} AS visitor, CAST(NULL AS TEXT) AS session_key, CAST(NULL AS TEXT) AS visitor_key,
    events, page_views, first_ts, last_ts FROM rollup_values
    WHERE project_id = ${project} AND ${dim} AND `;
          if (one) sql += `day IN (${cleanDays(days).map((d) => s.add(d)).join(', ')})`;
          else {
            sql += `day >= ${s.add(days.first)} AND day < ${s.add(days.end)}`;
            if (days.dirty.length > 0) sql += ` AND day NOT IN (${days.dirty.map((d) => s.add(d)).join(', ')})`;
          }
          if (!q.includeBots) sql += ` AND is_bot = ${s.dialect.falseValue}`;
          if (one) sql += ` AND value = ${s.add(spec.value)}`;
          return sql + (spec.rollupExtra?.() ?? '');
        },
    (from, to) =>
      `SELECT ${daySql('timestamp')} AS day, ${spec.rawValue} AS value, ${keyIdSql(s.dialect, 'events.session_id')} AS session_id, ${keyIdSql(s.dialect, s.visitor)} AS visitor,
    session_id AS session_key, ${s.visitor} AS visitor_key, 1 AS events,
    CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END AS page_views, timestamp AS first_ts, timestamp AS last_ts
    FROM events WHERE ${s.rawWhere(from, to)}${spec.rawExtra?.() ?? ''}`,
  );
}

/** Errors: `message, visitor, n, last_ts, last_event_id, stack`. */
export function errorsSource(q: ReportQuery, plan: DayPlan, s: SourceContext): string {
  const visitorColumn = q.visitorKey === 'hash' ? 'visitor_hash' : 'visitor';
  return union(
    plan,
    () => `SELECT message, ${visitorColumn} AS visitor, n, last_ts, last_event_id, last_stack AS stack FROM rollup_errors
    WHERE ${rollupWhere(q, plan.days as NonNullable<DayPlan['days']>, s)}`,
    (from, to) =>
      `SELECT COALESCE(${s.dialect.textProperty('message')}, '') AS message, ${s.visitor} AS visitor, 1 AS n, timestamp AS last_ts,
    event_id AS last_event_id, ${s.dialect.textProperty('stack')} AS stack
    FROM events WHERE ${s.rawWhere(from, to)} AND event_type = 'error'`,
  );
}

/**
 * The web vitals report's statement over counts of values. Its rows are, for each of the `limit`
 * pages with the most performance events (ties in byte order): `path, samples, page_rank` (the
 * other columns null); and for those pages only, per vital (`metric`, a key of `properties`,
 * which names each key's property), either a rollup row's counts text (`counts`, see
 * `vital-counts.ts`) or a raw part's count `n` of one rounded `value`. The pages come from the
 * rows of vital '' of `rollup_vitals` and a count of the raw parts' performance events; the
 * counts are merged and walked in Node (`vital-counts.ts`).
 */
export function vitalsCountsSql(q: ReportQuery, plan: DayPlan, s: SourceContext, properties: Readonly<Record<string, string>>, limit: number): string {
  const days = plan.days as NonNullable<DayPlan['days']>;
  const keys = Object.keys(properties);
  const ctes: string[] = [];
  if (plan.raw.length > 0) {
    const columns = Object.entries(properties)
      .map(([key, name]) => `${vitalStepSql(s.dialect.numberProperty(name))} AS ${key}`)
      .join(', ');
    const parts = plan.raw.map(([from, to]) => `SELECT path, ${columns} FROM events WHERE ${s.rawWhere(from, to)} AND event_type = 'performance' AND path IS NOT NULL`);
    ctes.push(`perf AS MATERIALIZED (${parts.join('\n    UNION ALL ')})`);
  }
  const rawSamples = plan.raw.length > 0 ? '\n      UNION ALL SELECT path, COUNT(*) AS n FROM perf GROUP BY path' : '';
  ctes.push(`pages AS MATERIALIZED (
    SELECT path, CAST(SUM(n) AS BIGINT) AS samples FROM (
      SELECT path, n FROM rollup_vitals WHERE ${rollupWhere(q, days, s)} AND metric = ''${rawSamples}) p
    GROUP BY path ORDER BY samples DESC, ${s.dialect.byteOrder('path')} LIMIT ${s.add(limit)})`);
  const rows = [
    `SELECT path, samples, ROW_NUMBER() OVER (ORDER BY samples DESC, ${s.dialect.byteOrder('path')}) AS page_rank,
    CAST(NULL AS TEXT) AS metric, CAST(NULL AS TEXT) AS counts, CAST(NULL AS DOUBLE PRECISION) AS value, CAST(NULL AS BIGINT) AS n FROM pages`,
    `SELECT path, NULL, NULL, metric, counts, NULL, NULL FROM rollup_vitals
    WHERE ${rollupWhere(q, days, s)} AND metric IN (${keys.map((key) => `'${key}'`).join(', ')}) AND path IN (SELECT path FROM pages)`,
  ];
  if (plan.raw.length > 0) {
    for (const key of keys) {
      rows.push(`SELECT path, NULL, NULL, '${key}', NULL, ${key}, COUNT(*) FROM perf
    WHERE ${key} IS NOT NULL AND path IN (SELECT path FROM pages) GROUP BY path, ${key}`);
    }
  }
  return `WITH ${ctes.join(',\n  ')}\n  ${rows.join('\n  UNION ALL ')}`;
}

/**
 * Exposures to any experiment: `experiment, visitor, visitor_key`, visitors as in
 * {@link visitsSource} (count them with {@link DISTINCT_VISITORS_SQL}).
 */
export function experimentsSource(q: ReportQuery, plan: DayPlan, s: SourceContext): string {
  const visitorColumn = q.visitorKey === 'hash' ? 'visitor_hash' : 'visitor';
  return union(
    plan,
    () =>
      `SELECT experiment, ${visitorColumn} AS visitor, CAST(NULL AS TEXT) AS visitor_key FROM rollup_exposures
    WHERE ${rollupWhere(q, plan.days as NonNullable<DayPlan['days']>, s)}`,
    (from, to) =>
      `SELECT ${s.dialect.textProperty('experiment')} AS experiment, ${keyIdSql(s.dialect, s.visitor)} AS visitor, ${s.visitor} AS visitor_key
    FROM events WHERE ${s.rawWhere(from, to)} AND event_type = 'experiment_exposure'`,
  );
}

/**
 * Exposures to one experiment: `variant, visitor, visitor_key, first`, visitors as in
 * {@link visitsSource}: an id of the key dictionary, or for a raw row whose key has none yet, null
 * and the key (a raw row carries its key either way).
 */
export function exposuresSource(q: ReportQuery, plan: DayPlan, s: SourceContext, experiment: string): string {
  const visitorColumn = q.visitorKey === 'hash' ? 'visitor_hash' : 'visitor';
  return union(
    plan,
    () => `SELECT variant, ${visitorColumn} AS visitor, CAST(NULL AS TEXT) AS visitor_key, first_ts AS first FROM rollup_exposures
    WHERE ${rollupWhere(q, plan.days as NonNullable<DayPlan['days']>, s)} AND experiment = ${s.add(experiment)}`,
    (from, to) =>
      `SELECT COALESCE(${s.dialect.textProperty('variant')}, '') AS variant, ${keyIdSql(s.dialect, s.visitor)} AS visitor, ${s.visitor} AS visitor_key,
    timestamp AS first
    FROM events WHERE ${s.rawWhere(from, to)} AND event_type = 'experiment_exposure' AND ${s.dialect.textProperty('experiment')} = ${s.add(experiment)}`,
  );
}

/**
 * The condition on `rollup_steps` rows of a step's key (kind 0: a page view of a path; kind 1: a
 * page view without one; kind 2: any other event, by type).
 */
export function stepKeyCondition(step: FunnelStepSpec, s: SourceContext): string {
  if (step.kind === 'page') return `kind = 0 AND value = ${s.add(step.value)}`;
  return step.value === 'page_view' ? 'kind < 2' : `kind = 2 AND value = ${s.add(step.value)}`;
}

/** The clean days of a plan's whole days. */
function cleanDays(days: NonNullable<DayPlan['days']>): number[] {
  const dirty = new Set(days.dirty);
  const clean: number[] = [];
  for (let day = days.first; day < days.end; day++) if (!dirty.has(day)) clean.push(day);
  return clean;
}

/**
 * The rows of `rollup_steps` of one step's key over the plan's clean days: `session_id, timestamp,
 * event_id`, one index range per day.
 */
export function stepKeyRows(q: ReportQuery, days: NonNullable<DayPlan['days']>, s: SourceContext, step: FunnelStepSpec): string {
  let sql = `SELECT session_id, ts AS timestamp, event_id FROM rollup_steps
    WHERE project_id = ${s.add(q.projectId)} AND day IN (${cleanDays(days).map((d) => s.add(d)).join(', ')}) AND ${stepKeyCondition(step, s)}`;
  if (!q.includeBots) sql += ` AND is_bot = ${s.dialect.falseValue}`;
  return sql;
}

/**
 * The rows of `rollup_steps` for the keys of `steps` over the plan's clean days: `session_id,
 * timestamp, event_id, mask`, bit k of `mask` set when the event matches step k; one index range
 * per day and key.
 */
function stepRollupRows(q: ReportQuery, days: NonNullable<DayPlan['days']>, s: SourceContext, steps: readonly FunnelStepSpec[]): string {
  const clean = cleanDays(days);
  const mask = steps.map((step, k) => `CASE WHEN ${stepKeyCondition(step, s)} THEN ${2 ** k} ELSE 0 END`).join(' + ');
  // The keys as a row-value IN, which both databases search key by key in the index; an
  // OR of conditions made SQLite read every row of each day.
  let sql = `SELECT session_id, ts AS timestamp, event_id, ${mask} AS mask FROM rollup_steps
    WHERE project_id = ${s.add(q.projectId)} AND day IN (${clean.map((d) => s.add(d)).join(', ')})`;
  const keyed = steps.filter((step) => step.kind === 'page' || step.value !== 'page_view');
  const keys = keyed.map((step) => `(${step.kind === 'page' ? 0 : 2}, CAST(${s.add(step.value)} AS TEXT))`).join(', ');
  const anyPage = keyed.length < steps.length;
  sql += ` AND (${[...(anyPage ? ['kind < 2'] : []), ...(keyed.length > 0 ? [`(kind, value) IN (VALUES ${keys})`] : [])].join(' OR ')})`;
  if (!q.includeBots) sql += ` AND is_bot = ${s.dialect.falseValue}`;
  return sql;
}

/**
 * The events of a funnel's range `[from, to)` that match at least one of its steps: `session_id,
 * timestamp, event_id, mask`, with `mask` the raw query's (built when called).
 */
export function stepRawRows(s: SourceContext, from: number, to: number, rawMask: () => string): string {
  const mask = rawMask();
  return `SELECT session_id, timestamp, event_id, mask FROM (
      SELECT session_id, timestamp, event_id, ${mask} AS mask FROM events WHERE ${s.rawWhere(from, to)} AND session_id IS NOT NULL) r
    WHERE mask > 0`;
}

/**
 * The events of a funnel that match at least one of its steps: `session_id, timestamp, event_id,
 * mask`, bit k of `mask` set when the event matches step k. Whole clean days come from
 * `rollup_steps`, only the rows of the steps' keys, one index range per day and key; the rest of
 * the range from the events, through `rawMask` (the raw query's mask, built when called).
 */
export function stepsSource(q: ReportQuery, plan: DayPlan, s: SourceContext, steps: readonly FunnelStepSpec[], rawMask: () => string): string {
  return union(
    plan,
    () => stepRollupRows(q, plan.days as NonNullable<DayPlan['days']>, s, steps),
    (from, to) => stepRawRows(s, from, to, rawMask),
  );
}
