/** The library's one error family (docs/architecture.md, "Conventions"): string codes, a `cause`, no subclasses without data. */
import type { DeliveryErrorCode } from '../protocol/worker/worker-contract.js';

/** Machine codes of {@link AnalyticsError}: the delivery core's, and `NO_CONSENT` (`flush()` while consent is pending or denied). */
export type AnalyticsErrorCode = DeliveryErrorCode | 'NO_CONSENT';

/** Options of {@link AnalyticsError}. */
export interface AnalyticsErrorOptions {
  /** HTTP status of the failed request, when there was one. */
  status?: number;
  /** Events still queued when the error happened. */
  queued?: number;
  cause?: unknown;
}

/** The rejection of `flush()` and the other asynchronous operations. */
export class AnalyticsError extends Error {
  // Declared only (set in the constructor): no field definitions in the facade's bundle.
  /** What went wrong, as a stable machine code. */
  declare readonly code: AnalyticsErrorCode;
  /** HTTP status of the failed request, when there was one. */
  declare readonly status: number | undefined;
  /** Events still queued, kept for the next attempt. */
  declare readonly queued: number | undefined;

  constructor(code: AnalyticsErrorCode, message: string, options: AnalyticsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AnalyticsError';
    this.code = code;
    this.status = options.status;
    this.queued = options.queued;
  }
}

/** True for an {@link AnalyticsError}, also one made in another realm (name and code, not `instanceof`). */
export function isAnalyticsError(value: unknown): value is AnalyticsError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'AnalyticsError' &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}
