/**
 * Event time: clock-skew correction and the window of times the server stores (docs in README,
 * "Event time"). The client stamps each request with its own clock (`X-Sent-At`, or `sent_at` on a
 * beacon); the difference to the server's clock on arrival is the client's skew plus the transit
 * time. Beyond `thresholdMs` the client's clock is taken to be wrong and event times are shifted by
 * the measured skew; the original is kept.
 *
 * The skew itself is not bounded: a device whose clock fell back to 1970 is off by decades and is
 * exactly what the correction is for. What is bounded is the result: a corrected time outside
 * {@link acceptedTimeWindow} is refused (per event in a batch, the whole chunk for a recording),
 * so no stored time is beyond what a Date, a cursor or a report can hold.
 */
export interface SkewCorrection {
  /** Milliseconds to add to client timestamps; 0 when no correction applies. */
  offsetMs: number;
}

/** Default threshold beyond which a client clock is corrected. */
export const DEFAULT_SKEW_THRESHOLD_MS = 10_000;

/** Earliest event time stored: 2000-01-01T00:00:00.000Z. */
export const EARLIEST_EVENT_TIME = Date.UTC(2000, 0, 1);

/** How far after its arrival an event's corrected time may lie: one day. */
export const MAX_EVENT_TIME_AHEAD_MS = 86_400_000;

/** Corrected event times the server stores, inclusive, in ms since the epoch. */
export interface TimeWindow {
  earliest: number;
  latest: number;
}

/** Measures the skew of one request; `sentAt` is the raw header or query value. */
export function measureSkew(sentAt: string | undefined, receivedAt: number, thresholdMs: number): SkewCorrection {
  if (!sentAt) return { offsetMs: 0 };
  const sent = Date.parse(sentAt);
  if (!Number.isFinite(sent)) return { offsetMs: 0 };
  const offset = receivedAt - sent;
  return Math.abs(offset) > thresholdMs ? { offsetMs: offset } : { offsetMs: 0 };
}

/** The window of a request that arrived at `receivedAt`. */
export function acceptedTimeWindow(receivedAt: number): TimeWindow {
  return { earliest: EARLIEST_EVENT_TIME, latest: receivedAt + MAX_EVENT_TIME_AHEAD_MS };
}

/** The reason an event at `time` (corrected) is refused, or null when `window` holds it. */
export function outsideWindow(time: number, window: TimeWindow): string | null {
  if (time >= window.earliest && time <= window.latest) return null;
  return `timestamp: outside the accepted time range (${new Date(window.earliest).toISOString()} to 1 day after arrival, after clock-skew correction)`;
}
