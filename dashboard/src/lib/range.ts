/** The overview's time ranges and the query each one makes. */

/** A range the picker offers. */
export type RangeKey = 'today' | '7d' | '30d' | '90d';

/** The picker's ranges in order, with their labels. */
export const RANGES: ReadonlyArray<{ key: RangeKey; label: string }> = [
  { key: 'today', label: 'Today' },
  { key: '7d', label: '7 days' },
  { key: '30d', label: '30 days' },
  { key: '90d', label: '90 days' },
];

/** A report range: `[from, to)` in ms and the series interval that suits it. */
export interface ReportRange {
  from: number;
  to: number;
  interval: 'hour' | 'day';
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Up to this length a series is hourly, beyond it daily. */
export const HOURLY_UP_TO_MS = 2 * DAY_MS;

/** Hourly for ranges of up to two days, daily beyond. */
export function intervalFor(from: number, to: number): 'hour' | 'day' {
  return to - from <= HOURLY_UP_TO_MS ? 'hour' : 'day';
}

/**
 * The range of `key` at `now` (ms). `today` starts at the reader's local midnight; the day ranges
 * start at UTC midnight, `n - 1` days back, because the server's day buckets are UTC days: a
 * 7-day chart then has exactly seven bars, today's the last. `to` is `now`, so the picture
 * includes what arrived this minute.
 * @param localMidnight - the local midnight before `now`, ms (injected for tests)
 */
export function rangeFor(key: RangeKey, now: number, localMidnight: number = startOfLocalDay(now)): ReportRange {
  const to = now + 1;
  if (key === 'today') {
    const from = Math.min(localMidnight, now - HOUR_MS);
    return { from, to, interval: intervalFor(from, to) };
  }
  const days = key === '7d' ? 7 : key === '30d' ? 30 : 90;
  const from = Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  return { from, to, interval: intervalFor(from, to) };
}

/** The local midnight before `now`. */
export function startOfLocalDay(now: number): number {
  const date = new Date(now);
  date.setHours(0, 0, 0, 0);
  return date.getTime();
}
