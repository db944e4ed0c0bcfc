import { describe, expect, it } from 'vitest';
import { toRanges } from './number-ranges.js';

describe('toRanges(numbers)', () => {
  it('merges numbers in any order, duplicates included, into ascending half-open ranges', () => {
    expect(toRanges([])).toEqual([]);
    expect(toRanges([3])).toEqual([3, 4]);
    expect(toRanges([5, 1, 2, 0, 9, 2, 6, 7])).toEqual([0, 3, 5, 8, 9, 10]);
  });
});
