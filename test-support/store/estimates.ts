import { expect } from 'vitest';
import { isWithinEstimate } from './estimate-bound.js';

/** Expects {@link isWithinEstimate}, naming both numbers when it fails. */
export function expectEstimate(actual: number, exact: number, what = 'unique count'): void {
  expect(isWithinEstimate(actual, exact), `${what}: ${actual} for an exact ${exact}`).toBe(true);
}
