import type { Middleware } from 'koa';
import { SESSION_ID_PATTERN } from '../../protocol/index.js';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import type { EventQuery, SessionSummary } from '../store/event-store.js';
import { cleanText } from '../store/shared/sanitize.js';
import { isStoreError } from '../store/store-error.js';
import { eventToWire, isoTime } from './event-wire.js';
import { param, parseTime } from './query-params.js';
import { filtersOf } from './report-params.js';
import type { RouteContext } from './route-context.js';

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/**
 * `GET /api/v1/events`: the project's events, newest first, filtered by `event_type`, `user_id`,
 * `session_id`, the reports' dimensions (`page`, `channel`, `device`, …), `from` and `to` (ISO time
 * or ms), paginated by `cursor` with `limit` (≤ 1000). Needs a read key.
 */
export function listEventsRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'read', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const query: EventQuery = { projectId: caller.project.id, limit: parseLimit(param(ctx, 'limit')) };
    const eventType = param(ctx, 'event_type');
    const userId = param(ctx, 'user_id');
    const sessionId = param(ctx, 'session_id');
    const cursor = param(ctx, 'cursor');
    const from = param(ctx, 'from');
    const to = param(ctx, 'to');
    // Stored text had NUL and lone surrogates replaced (store/shared/sanitize.ts); a filter is compared
    // with what was stored, and PostgreSQL refuses a NUL in any text parameter.
    if (eventType) query.eventType = cleanText(eventType);
    if (userId) query.userId = cleanText(userId);
    if (sessionId) query.sessionId = cleanText(sessionId);
    // `event_type` keeps its meaning here (an empty one is no filter), read above.
    const filters = filtersOf(ctx, 'event_type');
    if (Object.keys(filters).length > 0) query.filters = filters;
    if (cursor) query.cursor = cursor;
    if (from) query.from = parseTime('from', from);
    if (to) query.to = parseTime('to', to);
    let page: Awaited<ReturnType<typeof rc.store.queryEvents>>;
    try {
      page = await rc.store.queryEvents(query);
    } catch (error) {
      if (isStoreError(error) && error.code === 'INVALID_CURSOR') {
        throw new HttpError('VALIDATION_ERROR', '"cursor" is not a cursor this API returned.');
      }
      throw error;
    }
    ctx.body = { events: page.events.map(eventToWire), next_cursor: page.nextCursor };
  };
}

/** `GET /api/v1/sessions`: recorded sessions, most recent first. Needs a read key. */
export function listSessionsRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'read', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const sessions = await rc.store.listSessions(caller.project.id, parseLimit(param(ctx, 'limit')));
    const now = rc.now();
    ctx.body = { sessions: sessions.map((s) => sessionToWire(s, now, rc.sessionIdleMs)) };
  };
}

/**
 * `GET /api/v1/sessions/:sessionId/recording`: the recording's events in order without duplicates,
 * with the `[from, to)` offset ranges no chunk covered. Needs a read key.
 */
export function getRecordingRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const sessionId = String(ctx.params?.sessionId ?? '');
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      throw new HttpError('VALIDATION_ERROR', 'The session id must be 1–128 letters, digits, "-" or "_".');
    }
    const caller = await authenticate(ctx, rc, 'read', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const recording = await rc.store.getRecording(caller.project.id, sessionId);
    if (!recording) throw new HttpError('NOT_FOUND', `No recording for session ${sessionId}.`);
    ctx.body = {
      session_id: recording.sessionId,
      events: recording.events,
      gaps: recording.gaps,
      finished: recording.finished,
    };
  };
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE) {
    throw new HttpError('VALIDATION_ERROR', `"limit" must be an integer from 1 to ${MAX_PAGE}.`);
  }
  return n;
}

function sessionToWire(s: SessionSummary, now: number, idleMs: number): Record<string, unknown> {
  const idle = !s.finished && now - s.lastReceivedAt > idleMs;
  return {
    session_id: s.sessionId,
    user_id: s.userId,
    start_url: s.startUrl,
    duration: s.duration,
    chunk_count: s.chunkCount,
    event_count: s.eventCount,
    first_received_at: isoTime(s.firstReceivedAt),
    last_received_at: isoTime(s.lastReceivedAt),
    // A session whose final chunk never came is closed after a period of silence (docs/protocol.md,
    // "GET /api/v1/sessions").
    finished: s.finished || idle,
    closed_by: s.finished ? 'final_chunk' : idle ? 'inactivity' : null,
  };
}
