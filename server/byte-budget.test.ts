import { describe, expect, it } from 'vitest';
import { createByteBudget } from './byte-budget.js';

describe('createByteBudget(limit)', () => {
  it('takes what fits, refuses what does not, and takes again once given back', () => {
    const budget = createByteBudget(100);
    expect(budget.take(60)).toBe(true);
    expect(budget.take(40)).toBe(true);
    expect(budget.take(1)).toBe(false);
    expect(budget.inUse).toBe(100);
    budget.give(60);
    expect(budget.take(50)).toBe(true);
    expect(budget.inUse).toBe(90);
  });
  it('always lets one request in alone, even one larger than the budget', () => {
    const budget = createByteBudget(100);
    expect(budget.take(500)).toBe(true);
    expect(budget.take(1)).toBe(false);
    budget.give(500);
    expect(budget.inUse).toBe(0);
  });
});
