import { describe, expect, it } from 'vitest';
import { SKETCH_EXACT_UP_TO } from '../server/store/aggregates/visitor-sketch.js';
import { compareAnswers, percentile } from '../test-support/store/estimate-bound.js';

// The panels bench states the unique counts' error as the issue's aim does: a 99th percentile.
describe('the estimate comparison the panels bench reports', () => {
  it('takes the errors of the unique counts past the exact range only, equal ones as 0', () => {
    const big = SKETCH_EXACT_UP_TO * 10;
    const compared = compareAnswers(
      { visitors: big + 20, rows: [{ visitors: big, events: 7 }, { visitors: 12, sessions: big - 10 }] },
      { visitors: big, rows: [{ visitors: big, events: 7 }, { visitors: 12, sessions: big }] },
    );
    expect(compared.exactEqual).toBe(true);
    expect(compared.estimateErrors).toEqual([20 / big, 0, 10 / big]);
    expect(compared.worstEstimateError).toBe(20 / big);
  });

  it('finds a percentile by nearest rank', () => {
    const values = Array.from({ length: 200 }, (_, i) => (200 - i) / 1000);
    expect(percentile(values, 99)).toBe(0.198);
    expect(percentile(values, 50)).toBe(0.1);
    expect(percentile([0.3], 99)).toBe(0.3);
    expect(percentile([], 99)).toBe(0);
  });
});
