import type { Middleware } from 'koa';
import { type RecordingResponse, SESSION_ID_PATTERN } from '../../protocol/index.js';
import { requireIngestType, sentAtOf } from '../body.js';
import { acceptedTimeWindow, measureSkew } from '../clock-skew.js';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import type { RouteContext } from './route-context.js';

/**
 * `POST /api/v1/sessions/:sessionId/recordings`: one chunk, unique on (project, session, offset).
 * The body is parsed and checked on the parser thread (`recording-parser.ts`), and the bytes of
 * chunks in progress are bounded (`recordingBytesInFlight`): over it, 503 with `Retry-After`.
 */
export function recordingsRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const sessionId = String(ctx.params?.sessionId ?? '');
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      throw new HttpError('VALIDATION_ERROR', 'The session id must be 1–128 letters, digits, "-" or "_".');
    }
    const { beacon } = requireIngestType(ctx);
    const caller = await authenticate(ctx, rc, 'write', { allowQuery: beacon });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const text = await rc.readRecordingBody(ctx, beacon);
    // A JavaScript string holds two bytes per character: count what the text costs in memory.
    const bytes = text.length * 2;
    if (!rc.recordingBudget.take(bytes)) {
      throw new HttpError('STORAGE_UNAVAILABLE', 'The server is busy with other recording chunks; retry after 1 s.', {
        headers: { 'Retry-After': '1' },
      });
    }
    rc.metrics.setRecordingBytesInFlight(rc.recordingBudget.inUse);
    try {
      const receivedAt = rc.now();
      const sentAt = sentAtOf(ctx, beacon);
      const { offsetMs } = measureSkew(sentAt, receivedAt, rc.skewThresholdMs);
      const outcome = await rc.recordingParser.parse(text, { offsetMs, ...acceptedTimeWindow(receivedAt) });
      if (!outcome.ok) throw new HttpError(outcome.code, outcome.error);
      const { chunk } = outcome;
      const result = await rc.writeQueue.submit([], [{ projectId: caller.project.id, sessionId, receivedAt, ...chunk }]);
      const stored = result.chunkInserted[0] ? chunk.eventCount : 0;
      if (stored > 0) rc.metrics.chunksStored(1);
      const answer: RecordingResponse = { success: true, stored };
      ctx.body = answer;
    } finally {
      rc.recordingBudget.give(bytes);
      rc.metrics.setRecordingBytesInFlight(rc.recordingBudget.inUse);
    }
  };
}
