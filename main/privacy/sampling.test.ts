import { describe, expect, it } from 'vitest';
import { inSample } from './sampling.js';

describe('inSample(id, rate)', () => {
  it('answers the same for the same id, and nests: an id in a sample of 0.2 is in every larger one', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `0190f3a2-7b1c-7000-8000-${String(i).padStart(12, '0')}`);
    for (const id of ids) {
      expect(inSample(id, 0.3)).toBe(inSample(id, 0.3));
      if (inSample(id, 0.2)) expect(inSample(id, 0.5)).toBe(true);
    }
    expect(ids.filter((id) => inSample(id, 0)).length).toBe(0);
    expect(ids.filter((id) => inSample(id, 1)).length).toBe(500);
    const share = ids.filter((id) => inSample(id, 0.25)).length / ids.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.35);
  });
});
