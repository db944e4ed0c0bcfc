import { type BackendEvent, backendEventTime, explainInvalidEvent } from './backend-event.js';
import type { RejectedEvent } from './error-codes.js';
import { LIMITS } from './limits.js';

/** The outcome of checking a parsed batch body. */
export type BatchCheck =
  | {
      ok: true;
      events: BackendEvent[];
      /** Each kept event's `timestamp` in ms since the epoch, null where it has none (same order as `events`). */
      times: Array<number | null>;
      rejected: RejectedEvent[];
    }
  | { ok: false; code: 'INVALID_BATCH' | 'PAYLOAD_TOO_LARGE'; error: string };

/**
 * Checks a parsed batch body (a bare JSON array of backend events, docs/protocol.md). Valid events
 * are kept in order; each invalid one is listed by index with the reason, so one bad event never
 * costs the good ones (docs/decisions.md, "Partial batches").
 */
export function checkBatch(
  body: unknown,
  maxEvents: number = LIMITS.maxEventsPerBatch,
  /**
   * A further rule of the caller's (e.g. the server's time window), given the event and its parsed
   * `timestamp` (null when it has none): the reason to refuse, or null.
   */
  refuse?: (event: BackendEvent, time: number | null) => string | null,
): BatchCheck {
  if (!Array.isArray(body)) {
    return { ok: false, code: 'INVALID_BATCH', error: 'The body must be a JSON array of events.' };
  }
  if (body.length > maxEvents) {
    return {
      ok: false,
      code: 'PAYLOAD_TOO_LARGE',
      error: `A batch holds at most ${maxEvents} events; this one has ${body.length}.`,
    };
  }
  const events: BackendEvent[] = [];
  const times: Array<number | null> = [];
  const rejected: RejectedEvent[] = [];
  for (let i = 0; i < body.length; i++) {
    const item: unknown = body[i];
    const time = backendEventTime(item);
    if (time === undefined) {
      rejected.push({ index: i, error: explainInvalidEvent(item) });
      continue;
    }
    const event = item as BackendEvent;
    const reason = refuse === undefined ? null : refuse(event, time);
    if (reason === null) {
      events.push(event);
      times.push(time);
    } else rejected.push({ index: i, error: reason });
  }
  return { ok: true, events, times, rejected };
}
