import type { ParameterizedContext } from 'koa';
import { HttpError } from '../http-error.js';
import { FILTER_DIMENSIONS, type FilterDimension, type ReportQuery, type VisitorKey } from '../store/report-store.js';
import { cleanText } from '../store/shared/sanitize.js';
import { param, parseTime } from './query-params.js';

/** Limits of the report endpoints (docs/protocol.md, "Reports"). */
export const REPORT_LIMITS = {
  /** Longest range of a report, ms: 366 days. */
  maxRangeMs: 366 * 86_400_000,
  /** Range when `from` is not given, ms before `to`: 7 days. */
  defaultRangeMs: 7 * 86_400_000,
  /** Longest range of an hourly series, ms: 31 days (744 points). */
  maxHourlyRangeMs: 31 * 86_400_000,
  /** Most rows of a top-N, vitals or errors report. */
  maxLimit: 100,
  /** Rows when `limit` is not given. */
  defaultLimit: 10,
  /** Most steps of a funnel. */
  maxSteps: 10,
  /** Longest window of the live report, minutes. */
  maxLiveMinutes: 60,
} as const;

/** Parameters every report accepts besides the filters. */
const COMMON = ['from', 'to', 'include_bots', 'visitors'] as const;

/** Refuses a query parameter the endpoint does not know: a misspelt filter must not pass silently. */
export function rejectUnknown(ctx: ParameterizedContext, extra: readonly string[]): void {
  const known = new Set<string>([...COMMON, ...FILTER_DIMENSIONS, ...extra]);
  for (const name of Object.keys(ctx.query)) {
    if (!known.has(name)) throw new HttpError('VALIDATION_ERROR', `Unknown parameter "${name}"; this report takes ${[...known].join(', ')}.`);
  }
}

/** An integer parameter within bounds, or its default. */
export function intParam(ctx: ParameterizedContext, name: string, min: number, max: number, fallback: number): number {
  const raw = param(ctx, name);
  if (raw === undefined) return fallback;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new HttpError('VALIDATION_ERROR', `"${name}" must be an integer from ${min} to ${max}.`);
  return n;
}

function booleanParam(ctx: ParameterizedContext, name: string): boolean {
  const raw = param(ctx, name);
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new HttpError('VALIDATION_ERROR', `"${name}" must be true or false.`);
}

function visitorKeyParam(ctx: ParameterizedContext): VisitorKey {
  const raw = param(ctx, 'visitors') ?? 'anonymous';
  if (raw === 'anonymous' || raw === 'hash') return raw;
  throw new HttpError('VALIDATION_ERROR', '"visitors" must be anonymous or hash.');
}

/**
 * The filters among the query parameters, but `skip` (a parameter the caller reads itself); an
 * empty value is refused.
 */
export function filtersOf(ctx: ParameterizedContext, skip?: FilterDimension): ReportQuery['filters'] {
  const filters: ReportQuery['filters'] = {};
  for (const dimension of FILTER_DIMENSIONS) {
    if (dimension === skip) continue;
    const value = param(ctx, dimension);
    if (value === undefined) continue;
    if (value === '') throw new HttpError('VALIDATION_ERROR', `"${dimension}" must not be empty.`);
    // Stored text had NUL and lone surrogates replaced (store/shared/sanitize.ts); compare with that.
    filters[dimension as FilterDimension] = cleanText(value);
  }
  return filters;
}

/**
 * The query of a report: project, `from` and `to` (ISO 8601 or ms; default the 7 days before now),
 * filters, `include_bots`, `visitors`. Refuses a range that is empty, reversed or longer than 366
 * days with 400 `VALIDATION_ERROR`.
 */
export function reportQuery(ctx: ParameterizedContext, projectId: string, now: number): ReportQuery {
  const toRaw = param(ctx, 'to');
  const fromRaw = param(ctx, 'from');
  const to = toRaw === undefined ? now : parseTime('to', toRaw);
  const from = fromRaw === undefined ? to - REPORT_LIMITS.defaultRangeMs : parseTime('from', fromRaw);
  if (!(from < to)) throw new HttpError('VALIDATION_ERROR', '"from" must be before "to".');
  if (to - from > REPORT_LIMITS.maxRangeMs) throw new HttpError('VALIDATION_ERROR', 'A report covers at most 366 days.');
  return { projectId, from, to, filters: filtersOf(ctx), includeBots: booleanParam(ctx, 'include_bots'), visitorKey: visitorKeyParam(ctx) };
}
