import type { Middleware } from 'koa';
import { authenticate } from '../middleware/authenticate.js';
import { FRUSTRATION_SIGNALS, type FrustrationRow, type FrustrationSignal, type ReportQuery } from '../store/report-store.js';
import { isoTime } from './event-wire.js';
import { REPORT_LIMITS, intParam, rejectUnknown, reportQuery } from './report-params.js';
import type { RouteContext } from './route-context.js';

/*
 * `GET /api/v1/reports/frustration` (docs/protocol.md, "GET /api/v1/reports/frustration"): the
 * elements with the most rage, dead and error clicks, by selector and page, each with its sessions,
 * over the common range and filters of the reports. The counting is the store's
 * (`store/reports/report-frustration.ts`, `store/clickhouse/clickhouse-reports.ts`).
 */

/** One element of a signal on the wire. */
export interface FrustrationWireRow {
  selector: string;
  page: string;
  count: number;
  sessions: number;
  session_ids: string[];
}

/** The answer's body. */
export interface FrustrationAnswer {
  from: string | null;
  to: string | null;
  signals: Record<FrustrationSignal, FrustrationWireRow[]>;
}

/** The answer to `q` from the store's rows: every signal present, an empty list when it has none. */
export function frustrationToWire(q: Pick<ReportQuery, 'from' | 'to'>, rows: readonly FrustrationRow[]): FrustrationAnswer {
  const signals = Object.fromEntries(FRUSTRATION_SIGNALS.map((s) => [s, [] as FrustrationWireRow[]])) as Record<FrustrationSignal, FrustrationWireRow[]>;
  for (const row of rows) {
    signals[row.signal].push({ selector: row.selector, page: row.path, count: row.count, sessions: row.sessions, session_ids: row.sessionIds });
  }
  return { from: isoTime(q.from), to: isoTime(q.to), signals };
}

/**
 * The route: a read key (or an account, or a shared link, as for every report), the project's rate
 * limit, then `limit` (1–100, default 10) elements per signal.
 */
export function frustrationRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'report', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    rejectUnknown(ctx, ['limit']);
    const q = reportQuery(ctx, caller.project.id, rc.now());
    const limit = intParam(ctx, 'limit', 1, REPORT_LIMITS.maxLimit, REPORT_LIMITS.defaultLimit);
    ctx.body = frustrationToWire(q, await rc.store.reports.frustration(q, limit));
  };
}
