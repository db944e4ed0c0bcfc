import type { Middleware, ParameterizedContext } from 'koa';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import { type FunnelStepSpec, type ReportQuery, TOP_DIMENSIONS, type TopDimension, type Totals } from '../store/report-store.js';
import { cleanText } from '../store/shared/sanitize.js';
import { isoTime } from './event-wire.js';
import { param } from './query-params.js';
import { REPORT_LIMITS, intParam, rejectUnknown, reportQuery } from './report-params.js';
import type { RouteContext } from './route-context.js';

/*
 * The report endpoints, `GET /api/v1/reports/…` (docs/protocol.md, "Reports"): aggregates of the
 * project's events over a time range, with filters on any dimension. Each needs a read key and
 * answers JSON; the counting is the store's (`store/reports/report-queries.ts`).
 */

type Handler = (ctx: ParameterizedContext, rc: RouteContext, projectId: string) => Promise<unknown>;

/**
 * Authenticates a read key (or an account, or a shared link: reports are what a link opens),
 * checks the project's rate limit, then answers with `handle`.
 */
function report(rc: RouteContext, handle: Handler): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'report', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    ctx.body = await handle(ctx, rc, caller.project.id);
  };
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

const totalsToWire = (t: Totals) => ({ events: t.events, page_views: t.pageViews, visitors: t.visitors, sessions: t.sessions });

const ratio = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

/** Every bucket of `[from, to)`, the empty ones with zeros: a chart needs no gaps filled. */
async function filledSeries(rc: RouteContext, q: ReportQuery, bucketMs: number) {
  const points = await rc.store.reports.series(q, bucketMs);
  const byTime = new Map(points.map((p) => [p.time, p]));
  const out = [];
  for (let t = Math.floor(q.from / bucketMs) * bucketMs; t < q.to; t += bucketMs) {
    const p = byTime.get(t);
    out.push({ time: isoTime(t), ...totalsToWire(p ?? { events: 0, pageViews: 0, visitors: 0, sessions: 0 }) });
  }
  return out;
}

const rangeToWire = (q: ReportQuery) => ({ from: isoTime(q.from), to: isoTime(q.to) });

/** `GET /api/v1/reports/timeseries`: totals and a series by `interval` (`hour` or `day`). */
export function timeseriesRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, ['interval']);
    const q = reportQuery(ctx, projectId, rc.now());
    const interval = param(ctx, 'interval') ?? 'day';
    if (interval !== 'hour' && interval !== 'day') throw new HttpError('VALIDATION_ERROR', '"interval" must be hour or day.');
    if (interval === 'hour' && q.to - q.from > REPORT_LIMITS.maxHourlyRangeMs) {
      throw new HttpError('VALIDATION_ERROR', 'An hourly series covers at most 31 days.');
    }
    const [totals, points] = await Promise.all([rc.store.reports.totals(q), filledSeries(rc, q, interval === 'hour' ? HOUR_MS : DAY_MS)]);
    return { ...rangeToWire(q), interval, totals: totalsToWire(totals), points };
  });
}

/** `GET /api/v1/reports/top/:dimension`: the `limit` most frequent values of a dimension. */
export function topRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    const dimension = String(ctx.params?.dimension ?? '');
    if (!(TOP_DIMENSIONS as readonly string[]).includes(dimension)) {
      throw new HttpError('NOT_FOUND', `No top-N report "${dimension}"; there are ${TOP_DIMENSIONS.join(', ')}.`);
    }
    rejectUnknown(ctx, ['limit']);
    const q = reportQuery(ctx, projectId, rc.now());
    const limit = intParam(ctx, 'limit', 1, REPORT_LIMITS.maxLimit, REPORT_LIMITS.defaultLimit);
    const rows = await rc.store.reports.top(q, dimension as TopDimension, limit);
    return { ...rangeToWire(q), dimension, rows };
  });
}

/** `GET /api/v1/reports/sessions`: sessions, bounces, duration, pages per session. */
export function sessionStatsRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, []);
    const q = reportQuery(ctx, projectId, rc.now());
    const s = await rc.store.reports.sessions(q);
    return {
      ...rangeToWire(q),
      sessions: s.sessions,
      bounces: s.bounces,
      bounce_rate: ratio(s.bounces, s.sessions),
      average_duration_ms: ratio(s.totalDurationMs, s.sessions),
      page_views: s.pageViews,
      pages_per_session: ratio(s.pageViews, s.sessions),
    };
  });
}

/** `GET /api/v1/reports/vitals`: p75 of LCP, INP, CLS and FCP per page. */
export function vitalsRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, ['limit']);
    const q = reportQuery(ctx, projectId, rc.now());
    const limit = intParam(ctx, 'limit', 1, REPORT_LIMITS.maxLimit, REPORT_LIMITS.defaultLimit);
    return { ...rangeToWire(q), pages: await rc.store.reports.vitals(q, limit) };
  });
}

/** `GET /api/v1/reports/errors`: errors grouped by message. */
export function errorsRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, ['limit']);
    const q = reportQuery(ctx, projectId, rc.now());
    const limit = intParam(ctx, 'limit', 1, REPORT_LIMITS.maxLimit, REPORT_LIMITS.defaultLimit);
    const groups = await rc.store.reports.errors(q, limit);
    return {
      ...rangeToWire(q),
      errors: groups.map((g) => ({ message: g.message, count: g.count, visitors: g.visitors, last_seen: isoTime(g.lastSeen), last_stack: g.lastStack })),
    };
  });
}

/** The `step` parameters of a funnel: `event:TYPE` or `page:PATH`, 2 to 10 of them, in order. */
function funnelSteps(ctx: ParameterizedContext): FunnelStepSpec[] {
  const raw = ctx.query.step;
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (list.length < 2 || list.length > REPORT_LIMITS.maxSteps) {
    throw new HttpError('VALIDATION_ERROR', `A funnel takes 2 to ${REPORT_LIMITS.maxSteps} "step" parameters.`);
  }
  return list.map((text) => {
    const match = /^(event|page):(.+)$/s.exec(text);
    if (!match || text.length > 512) throw new HttpError('VALIDATION_ERROR', `A step is "event:TYPE" or "page:PATH" (at most 512 characters): "${text.slice(0, 40)}".`);
    return { kind: match[1] as FunnelStepSpec['kind'], value: cleanText(match[2] as string) };
  });
}

/** `GET /api/v1/reports/funnel?step=…&step=…`: sessions reaching each step in order. */
export function funnelRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, ['step']);
    const q = reportQuery(ctx, projectId, rc.now());
    const steps = funnelSteps(ctx);
    const counts = await rc.store.reports.funnel(q, steps);
    const first = counts[0] ?? 0;
    return {
      ...rangeToWire(q),
      steps: steps.map((step, k) => {
        const sessions = counts[k] ?? 0;
        const previous = k === 0 ? sessions : (counts[k - 1] ?? 0);
        return {
          step: `${step.kind}:${step.value}`,
          sessions,
          conversion_rate: ratio(sessions, first),
          drop_off: previous - sessions,
          drop_off_rate: k === 0 ? 0 : ratio(previous - sessions, previous),
        };
      }),
    };
  });
}

/** `GET /api/v1/reports/experiments`: the experiments with exposures in the range, the most exposed visitors first. */
export function experimentsRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, ['limit']);
    const q = reportQuery(ctx, projectId, rc.now());
    const limit = intParam(ctx, 'limit', 1, REPORT_LIMITS.maxLimit, REPORT_LIMITS.defaultLimit);
    return { ...rangeToWire(q), experiments: await rc.store.reports.experiments(q, limit) };
  });
}

/** `GET /api/v1/reports/experiments/:experiment`: exposures and conversions per variant. */
export function experimentRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    const experiment = cleanText(String(ctx.params?.experiment ?? ''));
    if (experiment === '' || experiment.length > 512) throw new HttpError('VALIDATION_ERROR', 'The experiment name must be 1–512 characters.');
    rejectUnknown(ctx, ['conversion']);
    const q = reportQuery(ctx, projectId, rc.now());
    const conversionRaw = param(ctx, 'conversion');
    if (conversionRaw === '') throw new HttpError('VALIDATION_ERROR', '"conversion" must not be empty.');
    const conversion = conversionRaw === undefined ? null : cleanText(conversionRaw);
    const variants = await rc.store.reports.experiment(q, experiment, conversion);
    return {
      ...rangeToWire(q),
      experiment,
      conversion,
      variants: variants.map((v) => ({
        variant: v.variant,
        exposures: v.exposures,
        conversions: v.conversions,
        conversion_rate: v.conversions === null ? null : ratio(v.conversions, v.exposures),
      })),
    };
  });
}

/** `GET /api/v1/reports/live?minutes=N`: the last N minutes (≤ 60), totals and per minute. */
export function liveRoute(rc: RouteContext): Middleware {
  return report(rc, async (ctx, rc, projectId) => {
    rejectUnknown(ctx, ['minutes']);
    if (ctx.query.from !== undefined || ctx.query.to !== undefined) {
      throw new HttpError('VALIDATION_ERROR', 'The live report takes "minutes", not "from" or "to".');
    }
    const minutes = intParam(ctx, 'minutes', 1, REPORT_LIMITS.maxLiveMinutes, 5);
    const now = rc.now();
    // The minute in progress is included: the range ends just after now.
    const to = now + 1;
    const q = { ...reportQuery(ctx, projectId, now), from: to - minutes * MINUTE_MS, to };
    const [totals, points] = await Promise.all([rc.store.reports.totals(q), filledSeries(rc, q, MINUTE_MS)]);
    return { ...rangeToWire(q), minutes, totals: totalsToWire(totals), points };
  });
}
