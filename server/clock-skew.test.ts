import { describe, expect, it } from 'vitest';
import { measureSkew } from './clock-skew.js';

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
