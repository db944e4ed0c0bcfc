import type { Middleware } from 'koa';
import {
  type RecordedEvent,
  type RecordingResponse,
  SESSION_ID_PATTERN,
  explainInvalidRecording,
  isRecordingUpload,
} from '../../protocol/index.js';
import { parseJson, requireIngestType } from '../body.js';
import { measureSkew } from '../clock-skew.js';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import type { RouteContext } from './route-context.js';

/**
 * Deepest nesting allowed inside recorded events. rrweb's snapshots nest two levels per DOM level,
 * so this allows DOM trees 256 deep while keeping JSON.stringify far from the stack limit.
 */
export const MAX_RECORDING_DEPTH = 512;

/** `POST /api/v1/sessions/:sessionId/recordings`: one chunk, unique on (project, session, offset). */
export function recordingsRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const sessionId = String(ctx.params?.sessionId ?? '');
    if (!SESSION_ID_PATTERN.test(sessionId)) {
      throw new HttpError('VALIDATION_ERROR', 'The session id must be 1–128 letters, digits, "-" or "_".');
    }
    const { beacon } = requireIngestType(ctx);
    const caller = await authenticate(ctx, rc.store, 'write', { allowQuery: beacon });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const body = parseJson(await rc.readRecordingBody(ctx));
    if (!isRecordingUpload(body)) throw new HttpError('VALIDATION_ERROR', explainInvalidRecording(body));
    if (depthExceeds(body.events, MAX_RECORDING_DEPTH)) {
      throw new HttpError('VALIDATION_ERROR', `Recorded events nest deeper than ${MAX_RECORDING_DEPTH} levels.`);
    }

    const receivedAt = rc.now();
    const { offsetMs } = measureSkew(ctx.get('x-sent-at') || undefined, receivedAt, rc.skewThresholdMs);
    const events: RecordedEvent[] =
      offsetMs === 0 ? body.events : body.events.map((e) => ({ ...e, timestamp: e.timestamp + offsetMs }));

    const result = await rc.writeQueue.submit(
      [],
      [
        {
          projectId: caller.project.id,
          sessionId,
          eventOffset: body.event_offset,
          events,
          duration: body.duration,
          startUrl: body.start_url ?? null,
          userId: body.user_id ?? null,
          isFinal: body.is_final ?? false,
          receivedAt,
        },
      ],
    );
    const stored = result.chunkInserted[0] ? events.length : 0;
    if (stored > 0) rc.metrics.chunksStored(1);
    const answer: RecordingResponse = { success: true, stored };
    ctx.body = answer;
  };
}

/** True when `root` nests deeper than `limit`; iterative so hostile input cannot overflow the stack. */
export function depthExceeds(root: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop() as [unknown, number];
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
