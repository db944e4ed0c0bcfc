import type { Middleware } from 'koa';
import { ERROR_STATUS, type ErrorCode } from '../../protocol/index.js';
import { isHttpError } from '../http-error.js';
import { isStoreError } from '../store/store-error.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

const CODE_OF_STATUS: Partial<Record<number, ErrorCode>> = {
  400: 'VALIDATION_ERROR',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/** How long a client should wait after a read refused past its budget: heavy reads take seconds. */
const BUSY_RETRY_AFTER_SECONDS = '5';

interface ExposedError {
  status?: number;
  expose?: boolean;
  message?: string;
}

/**
 * Turns every failure into `{ error, code }` with its documented status (docs/protocol.md,
 * "Errors"). Only our own 4xx messages reach the client; anything else is logged once here and
 * answered with a generic 500, so no internal detail, key or body leaks (koa's expose rule;
 * docs/decisions.md, "Status codes and error codes"). Also counts every answered request for
 * `/metrics`.
 */
export function errorHandler(logger: Logger, metrics: Metrics): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        ctx.status = 404;
        ctx.body = { error: `No route for ${ctx.method} ${ctx.path}.`, code: 'NOT_FOUND' };
      }
    } catch (error) {
      if (isHttpError(error)) {
        ctx.status = error.status;
        ctx.set(error.headers);
        ctx.body = { ...error.details, error: error.message, code: error.code };
      } else if (isStoreError(error) && error.code === 'BUSY') {
        // A read past its time budget (store/sqlite/sqlite-reader.ts): busy, not broken. `continues`:
        // the read goes on, and the same request asked again gets its answer.
        ctx.status = ERROR_STATUS.STORAGE_UNAVAILABLE;
        ctx.set('Retry-After', BUSY_RETRY_AFTER_SECONDS);
        ctx.body = { error: error.message, code: 'STORAGE_UNAVAILABLE', ...(error.continues ? { continues: true } : {}) };
      } else {
        const e = error as ExposedError;
        if (e.status === 501) {
          // The router's answer to a method no route knows (PROPFIND, MKCOL): the client's error,
          // not ours, so it gets a 4xx like any other wrong method and is not logged as a failure.
          ctx.status = ERROR_STATUS.METHOD_NOT_ALLOWED;
          ctx.body = { error: `Method ${ctx.method} is not supported.`, code: 'METHOD_NOT_ALLOWED' };
          return;
        }
        const code = e.expose && e.status ? CODE_OF_STATUS[e.status] : undefined;
        if (code) {
          ctx.status = ERROR_STATUS[code];
          ctx.body = { error: e.message ?? code, code };
        } else {
          logger.error('request failed', {
            method: ctx.method,
            path: ctx.path,
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          });
          ctx.status = 500;
          ctx.body = { error: 'Internal server error.', code: 'INTERNAL_ERROR' };
        }
      }
    } finally {
      metrics.request((ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched', ctx.status);
    }
  };
}
