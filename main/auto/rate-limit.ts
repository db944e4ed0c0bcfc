/** A sliding-window rate limit, used by error tracking and hover sampling. */

/**
 * Returns a check that answers true (and counts the call) while fewer than `max` calls were
 * counted in the last `windowMs`, and false otherwise. Holds at most `max` timestamps.
 */
export function createRateLimit(max: number, windowMs: number, now: () => number): () => boolean {
  const times: number[] = [];
  return () => {
    const t = now();
    while (times.length > 0 && times[0]! <= t - windowMs) times.shift();
    if (times.length >= max) return false;
    times.push(t);
    return true;
  };
}
