import { describe, expect, it } from 'vitest';
import { createTokenBuckets } from './token-bucket.js';

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('createTokenBuckets({ ratePerSecond, burst })', () => {
  it('grants a full burst at once, then refuses and says how long until the next token', () => {
    const c = clock();
    const buckets = createTokenBuckets({ ratePerSecond: 10, burst: 5, now: c.now });
    expect(Array.from({ length: 5 }, () => buckets.take('a'))).toEqual([0, 0, 0, 0, 0]);
    expect(buckets.take('a')).toBe(100);
    c.advance(40);
    expect(buckets.take('a')).toBe(60);
  });

  it('refills at the rate, never above the burst', () => {
    const c = clock();
    const buckets = createTokenBuckets({ ratePerSecond: 10, burst: 3, now: c.now });
    for (let i = 0; i < 3; i++) buckets.take('a');
    c.advance(100);
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBeGreaterThan(0);
    c.advance(60_000);
    expect(Array.from({ length: 4 }, () => buckets.take('a') === 0)).toEqual([true, true, true, false]);
  });

  it('sustains exactly the rate over time', () => {
    const c = clock();
    const buckets = createTokenBuckets({ ratePerSecond: 50, burst: 1, now: c.now });
    let granted = 0;
    for (let ms = 0; ms < 10_000; ms++) {
      if (buckets.take('a') === 0) granted++;
      c.advance(1);
    }
    expect(granted).toBe(500);
  });

  it('keeps keys apart', () => {
    const buckets = createTokenBuckets({ ratePerSecond: 1, burst: 1, now: () => 0 });
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBeGreaterThan(0);
    expect(buckets.take('b')).toBe(0);
  });

  it('forgets idle buckets (they are full again) and caps the keys it tracks', () => {
    const c = clock();
    const buckets = createTokenBuckets({ ratePerSecond: 10, burst: 10, maxKeys: 100, now: c.now });
    for (let i = 0; i < 50; i++) buckets.take(`ip-${i}`);
    expect(buckets.size).toBe(50);
    c.advance(1_000);
    buckets.take('fresh');
    expect(buckets.size).toBe(1);
    for (let i = 0; i < 10_000; i++) buckets.take(`flood-${i}`);
    expect(buckets.size).toBeLessThanOrEqual(100);
  });

  it('refuses a rate that is not a positive number', () => {
    expect(() => createTokenBuckets({ ratePerSecond: 0, burst: 1 })).toThrow(RangeError);
    expect(() => createTokenBuckets({ ratePerSecond: Number.NaN, burst: 1 })).toThrow(RangeError);
  });
});
