/**
 * Parses an HTTP `Retry-After` header (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date.
 * Pure: the current time is passed in.
 */

/**
 * The longest wait a `Retry-After` can impose (5 minutes). A server that asks for more is either
 * misconfigured or down for maintenance; the retry budget then decides, not the header.
 */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

const DELAY_SECONDS = /^\s*(\d+(?:\.\d+)?)\s*$/;

/**
 * Returns the wait in ms that `value` asks for, clamped to `[0, maxMs]`, or `undefined` when the
 * header is absent or malformed (the caller then falls back to its own backoff).
 *
 * @param value - the header value, e.g. `"120"` or `"Wed, 21 Oct 2026 07:28:00 GMT"`
 * @param nowMs - the current time, to turn an HTTP-date into a delay
 * @param maxMs - upper bound of the result; @default MAX_RETRY_AFTER_MS
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number,
  maxMs: number = MAX_RETRY_AFTER_MS,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const seconds = DELAY_SECONDS.exec(value);
  let ms: number;
  if (seconds !== null) {
    ms = Number(seconds[1]) * 1000;
  } else {
    // Only strings with a letter can be HTTP-dates; Date.parse accepts bare numbers like "-1".
    if (!/[a-z]/i.test(value)) return undefined;
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(0, Math.ceil(ms)), maxMs);
}
