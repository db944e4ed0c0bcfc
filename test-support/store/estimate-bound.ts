import { SKETCH_EXACT_UP_TO, SKETCH_P99_RELATIVE_ERROR } from '../../server/store/aggregates/visitor-sketch.js';

/**
 * Whether a unique count from the aggregates' sketches is what docs/protocol.md promises for the
 * exact count `exact`: equal up to the sketch's exact threshold, within its relative error bound
 * past it.
 */
export function isWithinEstimate(actual: number, exact: number): boolean {
  if (exact <= SKETCH_EXACT_UP_TO) return actual === exact;
  return Math.abs(actual - exact) <= exact * SKETCH_P99_RELATIVE_ERROR;
}

/** Keys whose numbers may be sketch estimates in a report's answer. */
const ESTIMATED = new Set(['visitors', 'sessions']);

/**
 * Whether two report answers are equal, numbers under `visitors` or `sessions` within
 * {@link isWithinEstimate} of each other (`exact` is the answer read from the events alone).
 */
export function sameAnswer(actual: unknown, exact: unknown, key = ''): boolean {
  if (typeof actual === 'number' && typeof exact === 'number') return ESTIMATED.has(key) ? isWithinEstimate(actual, exact) : actual === exact;
  if (Array.isArray(actual) && Array.isArray(exact)) return actual.length === exact.length && actual.every((a, i) => sameAnswer(a, exact[i], key));
  if (actual !== null && exact !== null && typeof actual === 'object' && typeof exact === 'object') {
    const keys = new Set([...Object.keys(actual), ...Object.keys(exact)]);
    return [...keys].every((k) => sameAnswer((actual as Record<string, unknown>)[k], (exact as Record<string, unknown>)[k], k));
  }
  return Object.is(actual, exact);
}
