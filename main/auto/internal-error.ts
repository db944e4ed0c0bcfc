/**
 * The marker of the library's own errors, so that error tracking never reports the library
 * through itself (a failing send reported as an event that fails to send, and so on). An error
 * is the library's own when it carries {@link INTERNAL_ERROR} (set by {@link markInternal}, which
 * every guarded callback of the automatic features applies to what it catches), when it is an
 * `AnalyticsError` (e.g. the rejection of a `flush()` the app did not catch), or when it was
 * thrown from one of the library's own script files (see `error-tracking.ts`).
 */
import { isAnalyticsError } from '../errors.js';

/**
 * The marker property: `Symbol.for`, so that two copies of the library on one page (or another
 * realm) recognise each other's errors.
 */
export const INTERNAL_ERROR: unique symbol = Symbol.for('service-analytics.internal-error') as never;

/** Marks `error` as the library's own (where it is an object that can take a property); returns it. */
export function markInternal<T>(error: T): T {
  try {
    if (typeof error === 'object' && error !== null) {
      Object.defineProperty(error, INTERNAL_ERROR, { value: true, configurable: true });
    }
  } catch {
    // A frozen object: it stays unmarked; the guard that caught it never rethrows anyway.
  }
  return error;
}

/** True for a value marked by {@link markInternal} or an `AnalyticsError`. */
export function isInternal(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    ((error as { [INTERNAL_ERROR]?: unknown })[INTERNAL_ERROR] === true || isAnalyticsError(error))
  );
}
