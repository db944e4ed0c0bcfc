import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { Middleware } from 'koa';
import { LIMITS } from '../../protocol/index.js';
import { openEventExport } from '../export.js';
import { HttpError } from '../http-error.js';
import { authenticate } from '../middleware/authenticate.js';
import { cleanText } from '../store/shared/sanitize.js';
import { param, parseTime } from './query-params.js';
import type { RouteContext } from './route-context.js';

/**
 * `DELETE /api/v1/users/:userId` (docs/protocol.md): erasure of one user of the project, by an
 * admin key (docs/decisions.md, "Erasure and export"). Deletes in one transaction the user's events
 * and the recording chunks uploaded under their user id, and answers `{ success, events, recordings }`.
 */
export function deleteUserRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'admin', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const raw = String(ctx.params?.userId ?? '');
    if (raw.length === 0 || raw.length > LIMITS.maxIdLength) {
      throw new HttpError('VALIDATION_ERROR', `The user id must be 1–${LIMITS.maxIdLength} characters.`);
    }
    // Every event acknowledged before this request is committed (commit before answer), so it is
    // deleted; one still in flight may be stored after. Waiting for the write queue to empty
    // instead could wait forever on a busy server.
    // Stored ids had NUL and lone surrogates replaced (store/shared/sanitize.ts); match what was stored.
    const deleted = await rc.store.deleteUser(caller.project.id, cleanText(raw));
    rc.logger.info('user deleted', { projectId: caller.project.id, events: deleted.events, recordings: deleted.recordings });
    ctx.body = { success: true, events: deleted.events, recordings: deleted.recordings };
  };
}

/**
 * `GET /api/v1/export?from&to` (docs/protocol.md): the project's events as NDJSON, oldest first,
 * gzipped when `Accept-Encoding` allows it, streamed page by page with backpressure: the next page
 * is read only when the connection has taken the last one (`export.ts`). Needs an admin key: it
 * copies everything.
 */
export function exportRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    const caller = await authenticate(ctx, rc, 'admin', { allowQuery: false });
    rc.rateLimiter.checkProject(caller.project.id, caller.kind);
    const fromRaw = param(ctx, 'from');
    const toRaw = param(ctx, 'to');
    const from = fromRaw === undefined ? undefined : parseTime('from', fromRaw);
    const to = toRaw === undefined ? undefined : parseTime('to', toRaw);
    if (from !== undefined && to !== undefined && to < from) throw new HttpError('VALIDATION_ERROR', '"to" must not be before "from".');
    const lines = await openEventExport(rc.store, {
      projectId: caller.project.id,
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    });
    // Bytes, not objects: the stream's buffer is bounded by its size (16 KiB), not by a count of lines.
    const ndjson = Readable.from(lines, { objectMode: false });
    ndjson.on('error', (error) => rc.logger.error('export failed', { projectId: caller.project.id, error: error.message }));
    ctx.type = 'application/x-ndjson; charset=utf-8';
    ctx.vary('Accept-Encoding');
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      // pipeline: a failed page destroys the gzip stream too, so the answer ends cut off (a client
      // never sees a complete body), and a client that goes away stops the reading of pages.
      ctx.body = pipeline(ndjson, createGzip(), () => {});
    } else {
      ctx.body = ndjson;
    }
  };
}
