import { describe, expect, it } from 'vitest';
import { intervalFor, rangeFor } from './range.js';

const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 25, 15, 30);

describe('rangeFor(key, now)', () => {
  it('starts today at local midnight, hourly, up to now', () => {
    const midnight = Date.UTC(2026, 10, 25, 0, 0) - 3_600_000;
    expect(rangeFor('today', now, midnight)).toEqual({ from: midnight, to: now + 1, interval: 'hour' });
  });
  it('gives a day range exactly n UTC day buckets, today the last', () => {
    const r = rangeFor('7d', now);
    expect(r.from).toBe(Date.UTC(2026, 10, 19));
    expect(r.interval).toBe('day');
    expect(Math.ceil((r.to - r.from) / DAY)).toBe(7);
    expect(rangeFor('90d', now).from).toBe(Date.UTC(2026, 10, 25) - 89 * DAY);
  });
  it('covers at least an hour just after midnight', () => {
    const justAfter = Date.UTC(2026, 10, 25, 0, 5);
    expect(rangeFor('today', justAfter, Date.UTC(2026, 10, 25)).from).toBe(justAfter - 3_600_000);
  });
  it('is hourly up to two days, daily beyond', () => {
    expect(intervalFor(0, 2 * DAY)).toBe('hour');
    expect(intervalFor(0, 2 * DAY + 1)).toBe('day');
  });
});
