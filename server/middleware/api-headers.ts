import type { Middleware } from 'koa';

/**
 * `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` on every answer of the server:
 * the API's events, recordings, reports and export are one project's data and change all the
 * time, so no browser or proxy may keep a copy, and a JSON or NDJSON body must never be sniffed
 * into something a browser would run.
 *
 * Set before the request goes on, so whatever answers later keeps them: the ingest shortcut, the
 * routes, and the errors, since the error handler (`error-handler.ts`) sets status and body but
 * removes no header, also for a path or method no route knows. Mount it right after the error
 * handler (`app.ts`). Files served by `static-files.ts` replace the `Cache-Control` with their own.
 */
export function apiHeaders(): Middleware {
  return (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    return next();
  };
}
