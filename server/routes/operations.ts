import type { Middleware } from 'koa';
import type { RouteContext } from './route-context.js';

/** `GET /healthz`: the process is up. */
export function healthzRoute(): Middleware {
  return (ctx) => {
    ctx.body = { status: 'ok' };
  };
}

/** `GET /readyz`: the database answers; 503 `STORAGE_UNAVAILABLE` otherwise. */
export function readyzRoute(rc: RouteContext): Middleware {
  return async (ctx) => {
    try {
      await rc.store.ping();
      ctx.body = { status: 'ready', store: rc.store.kind };
    } catch (error) {
      rc.logger.warn('readiness check failed', { error: error instanceof Error ? error.message : String(error) });
      ctx.status = 503;
      ctx.body = { error: 'The database is not reachable.', code: 'STORAGE_UNAVAILABLE' };
    }
  };
}

/** `GET /metrics`: Prometheus text. */
export function metricsRoute(rc: RouteContext): Middleware {
  return (ctx) => {
    rc.metrics.setQueueDepth(rc.writeQueue.depth());
    ctx.type = 'text/plain; version=0.0.4';
    ctx.body = rc.metrics.render();
  };
}
