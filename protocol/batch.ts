import { type BackendEvent, explainInvalidEvent, isBackendEvent } from './backend-event.js';
import type { RejectedEvent } from './error-codes.js';
import { LIMITS } from './limits.js';

/** The outcome of checking a parsed batch body. */
export type BatchCheck =
  | { ok: true; events: BackendEvent[]; rejected: RejectedEvent[] }
  | { ok: false; code: 'INVALID_BATCH' | 'PAYLOAD_TOO_LARGE'; error: string };

/**
 * Checks a parsed batch body (a bare JSON array of backend events, docs/protocol.md). Valid events
 * are kept in order; each invalid one is listed by index with the reason, so one bad event never
 * costs the good ones (docs/decisions.md, "Partial batches").
 */
export function checkBatch(
  body: unknown,
  maxEvents: number = LIMITS.maxEventsPerBatch,
  /** A further rule of the caller's (e.g. the server's time window): the reason to refuse, or null. */
  refuse?: (event: BackendEvent) => string | null,
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
  const rejected: RejectedEvent[] = [];
  for (let i = 0; i < body.length; i++) {
    const item: unknown = body[i];
    if (!isBackendEvent(item)) {
      rejected.push({ index: i, error: explainInvalidEvent(item) });
      continue;
    }
    const reason = refuse === undefined ? null : refuse(item);
    if (reason === null) events.push(item);
    else rejected.push({ index: i, error: reason });
  }
  return { ok: true, events, rejected };
}
