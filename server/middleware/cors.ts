import type { Middleware } from 'koa';

const ALLOWED_HEADERS = 'Authorization, X-Project-ID, Content-Type, Content-Encoding, X-Sent-At';
/** Chromium caps the preflight cache at 2 hours; asking for more buys nothing. */
const MAX_AGE_SECONDS = '7200';

/**
 * CORS for browsers posting cross-origin. `origins` lists the allowed origins exactly
 * (`https://app.example.com`); `*` allows any. No cookies are used, so credentials are never allowed.
 * A preflight is answered here with `Access-Control-Max-Age` so browsers rarely repeat it.
 */
export function cors(origins: readonly string[]): Middleware {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    const ok = origin !== '' && (any || allowed.has(origin));
    if (origin) ctx.vary('Origin');
    if (ctx.method === 'OPTIONS' && ctx.get('access-control-request-method')) {
      ctx.status = 204;
      if (ok) {
        ctx.set('Access-Control-Allow-Origin', origin);
        ctx.set('Access-Control-Allow-Methods', 'GET, POST, DELETE, OPTIONS');
        ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
        ctx.set('Access-Control-Max-Age', MAX_AGE_SECONDS);
      }
      return;
    }
    if (ok) {
      ctx.set('Access-Control-Allow-Origin', origin);
      // The worker must read Retry-After on a cross-origin 429/503 to wait as told.
      ctx.set('Access-Control-Expose-Headers', 'Retry-After');
    }
    await next();
  };
}
