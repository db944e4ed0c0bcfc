/**
 * Every `code` the server puts in an error body `{ error, code }`, with its HTTP status
 * (docs/protocol.md, "Errors"; the reasons in docs/decisions.md, "Status codes and error codes").
 */
export const ERROR_STATUS = {
  INVALID_JSON: 400,
  INVALID_BATCH: 400,
  VALIDATION_ERROR: 400,
  AUTH_ERROR: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  STORAGE_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

/** A machine-readable error code. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The body of every error response. */
export interface ErrorBody {
  /** Human-readable message; for 5xx it is generic and the details stay in the server log. */
  error: string;
  code: ErrorCode;
}

/** One event of a batch that was rejected, by its index in the array. */
export interface RejectedEvent {
  index: number;
  error: string;
}

/** The 200 answer to a batch (`{ success, processed }`, plus the rejected events: docs/decisions.md, "Partial batches"). */
export interface BatchResponse {
  success: true;
  /** Events accepted: stored now, or already stored under the same `event_id`. */
  processed: number;
  /**
   * Events counted in `processed` but not stored, because the project drops bot events
   * (`bots: 'drop'`); absent when none were.
   */
  bots_dropped?: number;
  /** Events that failed validation and were not stored; absent when there were none. */
  errors?: RejectedEvent[];
}

/** The 200 answer to a recording chunk. */
export interface RecordingResponse {
  success: true;
  /** Recorded events stored from this chunk (0 when the chunk had been stored before). */
  stored: number;
}

/** True for the codes the client may retry: the server will likely accept the same body later. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}
