/**
 * A per-second cap on captured entries (console calls, requests): a counter and a window start,
 * so a page that logs in a loop pays a comparison per call once over it, and the recording stays
 * bounded. What the cap dropped is counted, so the next entry can say so.
 */

/** The cap of one kind of entry. */
export interface RateCap {
  /**
   * True when one more entry fits in the current second; otherwise counts it as dropped. `at` is
   * the time (ms of `now()`) when the caller has already read the clock.
   */
  take(at?: number): boolean;
  /** Entries dropped since the last call; resets the count. */
  takeDropped(): number;
}

/** Creates a cap of `limit` entries per second of `now()` (ms). */
export function createRateCap(limit: number, now: () => number): RateCap {
  let windowStart = -Infinity;
  let count = 0;
  let dropped = 0;
  return {
    take(given) {
      const at = given ?? now();
      if (at - windowStart >= 1000) {
        windowStart = at;
        count = 0;
      }
      if (count < limit) {
        count++;
        return true;
      }
      dropped++;
      return false;
    },
    takeDropped() {
      const n = dropped;
      dropped = 0;
      return n;
    },
  };
}
