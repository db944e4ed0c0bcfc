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

/** How a report answer compares with the exact one read from the events alone. */
export interface AnswerComparison {
  /** Every number that is not a unique count is equal, and the shapes are. */
  exactEqual: boolean;
  /** The largest relative error of a unique count (`visitors`, `sessions`), 0 when all are equal. */
  worstEstimateError: number;
}

/** Compares a report answer with the exact one (`exact`, read from the events alone). */
export function compareAnswers(actual: unknown, exact: unknown): AnswerComparison {
  const result: AnswerComparison = { exactEqual: true, worstEstimateError: 0 };
  const walk = (a: unknown, e: unknown, key: string): void => {
    if (typeof a === 'number' && typeof e === 'number') {
      if (!ESTIMATED.has(key)) result.exactEqual &&= a === e;
      else if (a !== e) result.worstEstimateError = Math.max(result.worstEstimateError, e === 0 ? Number.POSITIVE_INFINITY : Math.abs(a - e) / e);
      return;
    }
    if (Array.isArray(a) && Array.isArray(e)) {
      if (a.length !== e.length) result.exactEqual = false;
      else a.forEach((x, i) => walk(x, e[i], key));
      return;
    }
    if (a !== null && e !== null && typeof a === 'object' && typeof e === 'object') {
      for (const k of new Set([...Object.keys(a), ...Object.keys(e)])) walk((a as Record<string, unknown>)[k], (e as Record<string, unknown>)[k], k);
      return;
    }
    result.exactEqual &&= Object.is(a, e);
  };
  walk(actual, exact, '');
  return result;
}
