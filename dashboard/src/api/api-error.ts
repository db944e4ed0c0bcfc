/** A failed API call, with the status and the server's `code` (docs/protocol.md, "Errors"). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** True for an `ApiError`, also across realms (no `instanceof`). */
export function isApiError(error: unknown): error is ApiError {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'ApiError' && typeof (error as { status?: unknown }).status === 'number';
}

/**
 * True when the server has no such endpoint: a 404 from an API route means this server is older
 * than the dashboard's report, which a panel shows as "not available" rather than as a failure.
 */
export function isNotAvailable(error: unknown): boolean {
  return isApiError(error) && error.status === 404;
}
