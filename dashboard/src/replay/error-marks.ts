/**
 * The marks of a session's errors on the replay's timeline: its `error` events (error tracking,
 * docs/decisions.md "Wire mapping of every client call"), each at its offset from the recording's
 * start, in time order. An error outside the recording (before its start, after its end) has no
 * place on the timeline and is left out.
 */
import type { WireEvent } from '../api/wire-types.js';

/** One mark. */
export interface ErrorMark {
  /** Milliseconds from the recording's start (the player's clock). */
  offset: number;
  /** The error's message, or a stand-in when it had none. */
  message: string;
  /** The event's id, a stable key. */
  id: string;
}

/** The marks of `events` within `[start, start + totalMs]` (ms since the epoch; total: the player's length). */
export function errorMarks(events: readonly WireEvent[], start: number, totalMs: number): ErrorMark[] {
  const marks: ErrorMark[] = [];
  for (const e of events) {
    if (e.event_type !== 'error' || e.timestamp === null) continue;
    const offset = Date.parse(e.timestamp) - start;
    if (!Number.isFinite(offset) || offset < 0 || offset > totalMs) continue;
    const message = e.properties.message;
    marks.push({ offset, message: typeof message === 'string' && message !== '' ? message : '(no message)', id: e.event_id });
  }
  return marks.sort((a, b) => a.offset - b.offset);
}
