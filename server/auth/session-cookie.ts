import type { Context } from 'koa';

/** The name of the dashboard's session cookie. */
export const SESSION_COOKIE = 'sa_session';

/** What the cookie's attributes depend on. */
export interface SessionCookieOptions {
  /** The cookie's `Path`: the API's base path, or `/`. */
  path: string;
  /** Add `Secure`: the request came over TLS, directly or through a trusted proxy. */
  secure: boolean;
  /** Lifetime, seconds (`Max-Age`); 0 deletes the cookie. */
  maxAgeSeconds: number;
}

/**
 * A `Set-Cookie` value for the session token (docs/decisions.md, "Team access"): `HttpOnly` (no
 * script reads it, so an injected script cannot carry it away), `SameSite=Strict` (no other site's
 * page sends it, not even a link followed from there), `Secure` when the request came over TLS.
 * Over plain HTTP (`http://127.0.0.1` in development) `Secure` would make the browser drop it.
 */
export function sessionCookie(token: string, options: SessionCookieOptions): string {
  const parts = [`${SESSION_COOKIE}=${token}`, `Path=${options.path}`, `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`, 'HttpOnly', 'SameSite=Strict'];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

/** The session token the request's `Cookie` header carries, or null. A malformed value is none. */
export function readSessionCookie(ctx: Pick<Context, 'get'>): string | null {
  const header = ctx.get('cookie');
  if (header === '') return null;
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== SESSION_COOKIE) continue;
    const value = pair.slice(at + 1).trim();
    // Tokens are base64url (`sign-in-sessions.ts`); anything else was not set by this server.
    return /^[A-Za-z0-9_-]{20,100}$/.test(value) ? value : null;
  }
  return null;
}
