import { ERROR_STATUS, type ErrorCode } from '../protocol/index.js';

/**
 * An error with a public message and a machine code, answered as `{ error, code }` with the status
 * of its code (`ERROR_STATUS`; docs/decisions.md, "Status codes and error codes"). Only these reach
 * clients; anything else is logged and answered as a generic 500 (koa's `expose` rule;
 * docs/architecture.md, "Conventions").
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers: Readonly<Record<string, string>>;
  /** Extra public fields merged into the error body, e.g. the rejected events of a batch. */
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { headers?: Record<string, string>; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'HttpError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
    this.details = options.details;
  }
}

/** True for an {@link HttpError}, also across module copies (no `instanceof` reliance). */
export function isHttpError(value: unknown): value is HttpError {
  return value instanceof Error && value.name === 'HttpError' && typeof (value as HttpError).code === 'string';
}
