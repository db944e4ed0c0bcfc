import { describe, expect, it } from 'vitest';
import { calculateBounceLikelihood, calculateEngagementScore } from './engagement.js';

const empty = { duration: 0, pageViews: 1, clicks: 0, maxScrollDepth: 0, events: [] };

describe('calculateEngagementScore()', () => {
  it('is 0 for a session that did nothing and 100 for one that did everything', () => {
    expect(calculateEngagementScore(empty)).toBe(0);
    expect(
      calculateEngagementScore({ duration: 600_000, pageViews: 9, clicks: 50, maxScrollDepth: 100, events: new Array(40) }),
    ).toBe(100);
  });

  it('adds the documented parts', () => {
    // 30 × 0.5 + 20 × 0.25 + 20 × 0.5 + 20 × 0.5 + 10 × 0.5 = 45
    expect(
      calculateEngagementScore({ duration: 150_000, pageViews: 2, clicks: 5, maxScrollDepth: 50, events: new Array(10) }),
    ).toBe(45);
  });

  it('treats missing or broken numbers as zero', () => {
    expect(calculateEngagementScore({ ...empty, duration: undefined, clicks: Number.NaN })).toBe(0);
  });
});

describe('calculateBounceLikelihood()', () => {
  it('is 100 for an empty one-page session and halves after a second page view', () => {
    expect(calculateBounceLikelihood(empty)).toBe(100);
    expect(calculateBounceLikelihood({ ...empty, pageViews: 2 })).toBe(48);
  });
});
