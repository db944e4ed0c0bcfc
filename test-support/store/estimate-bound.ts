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
  /**
   * The relative error of each unique count whose exact count is past the sketch's exact range
   * (0 where equal): the sample a percentile of the error is taken over. Below that range counts are
   * exact by construction, and would only dilute it.
   */
  estimateErrors: number[];
}

/** The `p`-th percentile (0–100, nearest rank) of `values`; 0 when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] as number;
}

/** Compares a report answer with the exact one (`exact`, read from the events alone). */
export function compareAnswers(actual: unknown, exact: unknown): AnswerComparison {
  const result: AnswerComparison = { exactEqual: true, worstEstimateError: 0, estimateErrors: [] };
  const walk = (a: unknown, e: unknown, key: string): void => {
    if (typeof a === 'number' && typeof e === 'number') {
      if (!ESTIMATED.has(key)) {
        result.exactEqual &&= a === e;
        return;
      }
      const error = a === e ? 0 : e === 0 ? Number.POSITIVE_INFINITY : Math.abs(a - e) / e;
      result.worstEstimateError = Math.max(result.worstEstimateError, error);
      if (e > SKETCH_EXACT_UP_TO) result.estimateErrors.push(error);
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
