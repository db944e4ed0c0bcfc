import type { Middleware, ParameterizedContext } from 'koa';
import { refine, string, validate } from 'superstruct';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import { HEATMAP_GRID, SCROLL_DEPTH_STEP, type HeatmapReport, type ReportQuery } from '../store/report-store.js';
import { cleanText } from '../store/shared/sanitize.js';
import { isoTime } from './event-wire.js';
import { param } from './query-params.js';
import { REPORT_LIMITS, intParam, rejectUnknown, reportQuery } from './report-params.js';
import type { RouteContext } from './route-context.js';

/*
 * `GET /api/v1/reports/heatmap?path=…` (docs/protocol.md, "GET /api/v1/reports/heatmap"): one
 * page's clicks by element and by cell of the element's box, and its page views by scroll depth,
 * over the common range and filters of the reports. The counting is the store's
 * (`store/reports/report-heatmap.ts`, `store/clickhouse/clickhouse-reports.ts`).
 */

/** Default elements in the answer: a page's heatmap draws many. */
export const HEATMAP_DEFAULT_LIMIT = 50;

/** `path`: the page, as the `page` column keeps it (a path from the root). */
const PagePath = refine(string(), 'PagePath', (value) => value.startsWith('/') || 'must be a page path starting with "/"');

/** The page `path` names; 400 `VALIDATION_ERROR` when it is missing or not a path. */
function pathParam(ctx: ParameterizedContext): string {
  const raw = param(ctx, 'path');
  if (raw === undefined) throw new HttpError('VALIDATION_ERROR', 'Give the page as "path" (e.g. path=/pricing).');
  const [error, value] = validate(raw, PagePath);
  if (error !== undefined) throw new HttpError('VALIDATION_ERROR', `"path" ${error.message}.`);
  // Stored text had NUL and lone surrogates replaced (store/shared/sanitize.ts); compare with that.
  return cleanText(value);
}

/** Clicks in one cell of an element's grid on the wire. */
export interface HeatmapWireCell {
  x: number;
  y: number;
  count: number;
}

/** The answer's body. */
export interface HeatmapAnswer {
  from: string | null;
  to: string | null;
  path: string;
  /** Cells per side of the grid over an element's box. */
  grid: number;
  clicks: {
    /** Every click on the page. */
    total: number;
    elements: Array<{ selector: string; count: number; cells: HeatmapWireCell[] }>;
  };
  scroll: {
    /** Page views with a scroll depth. */
    page_views: number;
    /** Per step of the document's height: page views that reached it, and their share (null without page views). */
    depths: Array<{ depth: number; page_views: number; share: number | null }>;
  };
}

/** The answer to `q` from the store's report. */
export function heatmapToWire(q: Pick<ReportQuery, 'from' | 'to'>, path: string, report: HeatmapReport): HeatmapAnswer {
  const views = report.pageViews;
  return {
    from: isoTime(q.from),
    to: isoTime(q.to),
    path,
    grid: HEATMAP_GRID,
    clicks: { total: report.clicks, elements: report.elements.map((e) => ({ selector: e.selector, count: e.count, cells: e.cells })) },
    scroll: {
      page_views: views,
      depths: report.reached.map((n, i) => ({
        depth: (i + 1) * SCROLL_DEPTH_STEP,
        page_views: n,
        share: views === 0 ? null : Math.round((n / views) * 1000) / 1000,
      })),
    },
  };
}

/**
 * The route: a read key (or an account, or a shared link, as for every report), the project's rate
 * limit, then `path` (required: the page, which the `page` filter would otherwise name, so that one
 * is refused) and `limit` (1–100, default {@link HEATMAP_DEFAULT_LIMIT}) elements.
 */
export function heatmapRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'report', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    rejectUnknown(ctx, ['path', 'limit']);
    if (ctx.query.page !== undefined) throw new HttpError('VALIDATION_ERROR', 'The heatmap names its page with "path", not the "page" filter.');
    const path = pathParam(ctx);
    const q = reportQuery(ctx, caller.project.id, rc.now());
    const limit = intParam(ctx, 'limit', 1, REPORT_LIMITS.maxLimit, HEATMAP_DEFAULT_LIMIT);
    ctx.body = heatmapToWire(q, path, await rc.store.reports.heatmap({ ...q, filters: { ...q.filters, page: path } }, limit));
  };
}
