import { describe, expect, it } from 'vitest';
import { acceptedTimeWindow, measureSkew, outsideWindow } from './clock-skew.js';

describe('measureSkew(sentAt, receivedAt, threshold)', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');
  it('corrects a clock that is off by more than the threshold', () => {
    expect(measureSkew('2026-11-22T11:00:00.000Z', now, 10_000)).toEqual({ offsetMs: 3_600_000 });
    expect(measureSkew('2026-11-22T12:05:00.000Z', now, 10_000)).toEqual({ offsetMs: -300_000 });
  });
  it('leaves a close clock, a missing header and garbage alone', () => {
    expect(measureSkew('2026-11-22T11:59:55.000Z', now, 10_000)).toEqual({ offsetMs: 0 });
    expect(measureSkew(undefined, now, 10_000)).toEqual({ offsetMs: 0 });
    expect(measureSkew('soon', now, 10_000)).toEqual({ offsetMs: 0 });
  });
});

describe('acceptedTimeWindow(receivedAt) and outsideWindow(time, window)', () => {
  const now = Date.parse('2026-11-22T12:00:00.000Z');
  const window = acceptedTimeWindow(now);
  it('holds times from 2000-01-01 to one day after arrival, both ends included', () => {
    expect(outsideWindow(Date.parse('2000-01-01T00:00:00.000Z'), window)).toBeNull();
    expect(outsideWindow(now + 86_400_000, window)).toBeNull();
    expect(outsideWindow(now, window)).toBeNull();
  });
  it('refuses times before, after, and ones that are not numbers', () => {
    expect(outsideWindow(Date.parse('1999-12-31T23:59:59.999Z'), window)).toMatch(/^timestamp: outside the accepted time range/);
    expect(outsideWindow(now + 86_400_001, window)).toMatch(/^timestamp: outside/);
    expect(outsideWindow(Number.NaN, window)).toMatch(/^timestamp: outside/);
    expect(outsideWindow(Number.POSITIVE_INFINITY, window)).toMatch(/^timestamp: outside/);
  });
});
