import type { Context } from 'koa';
import { HttpError } from '../http-error.js';
import type { TrustedProxies } from '../trusted-proxies.js';

/** What the server knows of how a request reached it. */
export interface RequestOrigin {
  /**
   * True when the client's request came over TLS: the connection itself is TLS, or it comes from a
   * trusted proxy (`--trust-proxy`) whose `X-Forwarded-Proto` (its last entry, the one that proxy
   * wrote) says `https`. From any other peer the header is ignored, as `X-Forwarded-For` is.
   */
  isHttps(ctx: Context): boolean;
  /**
   * Refuses a state-changing request from another origin with 403 `FORBIDDEN` (docs/decisions.md,
   * "Team access", CSRF). `Sec-Fetch-Site`, which a page cannot set, must be `same-origin`; a
   * browser that sends none must send an `Origin` equal to this server's (scheme, `Host`); a
   * request with neither is refused too, as no browser of this decade sends neither on a POST.
   */
  assertSameOrigin(ctx: Context): void;
}

/** Creates the checks, believing forwarding headers from `trusted` only. */
export function createRequestOrigin(trusted: TrustedProxies | undefined): RequestOrigin {
  const isHttps = (ctx: Context): boolean => {
    if ((ctx.req.socket as { encrypted?: boolean }).encrypted === true) return true;
    if (trusted === undefined || !trusted.isTrusted(ctx.req.socket.remoteAddress)) return false;
    const proto = ctx.get('x-forwarded-proto').split(',').pop()?.trim().toLowerCase();
    return proto === 'https';
  };
  return {
    isHttps,
    assertSameOrigin(ctx) {
      const site = ctx.get('sec-fetch-site');
      if (site !== '') {
        if (site === 'same-origin') return;
        throw new HttpError('FORBIDDEN', 'Refused: this request came from another site or origin (Sec-Fetch-Site).');
      }
      const origin = ctx.get('origin');
      const own = `${isHttps(ctx) ? 'https' : 'http'}://${ctx.get('host')}`;
      if (origin !== '' && origin.toLowerCase() === own.toLowerCase()) return;
      throw new HttpError('FORBIDDEN', 'Refused: a signed-in request that changes something must come from the dashboard\'s own origin (Origin).');
    },
  };
}
