import type { Middleware } from 'koa';
import { HttpError } from '../http-error.js';
import { normalizeIp } from '../ip-address.js';
import type { Metrics } from '../metrics.js';
import type { KeyKind } from '../store/event-store.js';
import { type RateLimit, createTokenBuckets } from '../token-bucket.js';

export type { RateLimit } from '../token-bucket.js';

/** Rate limits of the API, each a token bucket; `false` turns one off. */
export interface RateLimitOptions {
  /**
   * Per project and key kind (writes and reads have separate buckets), counted after
   * authentication, so requests with a wrong key never use up a project's budget.
   * @default { ratePerSecond: 1000, burst: 2000 }
   */
  project?: RateLimit | false;
  /**
   * Per client address (IPv6 by its /64 prefix), counted before authentication on every
   * request that reaches an API route. Behind a proxy, set `trustProxy` or every client shares the proxy's bucket.
   * @default { ratePerSecond: 200, burst: 400 }
   */
  ip?: RateLimit | false;
}

/** The defaults of the CLI's `start` (README "A tour of the server"). */
export const DEFAULT_RATE_LIMITS: { readonly project: RateLimit; readonly ip: RateLimit } = {
  project: { ratePerSecond: 1000, burst: 2000 },
  ip: { ratePerSecond: 200, burst: 400 },
};

/** The two checks of {@link createRateLimiter}. */
export interface RateLimiter {
  /**
   * Koa middleware: 429 `RATE_LIMITED` when the client address is over its limit. It limits every
   * request it sees, so the app mounts it on each API route: whatever path spelling the router
   * matches (`/API/v1/events` as well) is limited, by construction.
   */
  readonly byIp: Middleware;
  /** Throws 429 `RATE_LIMITED` when the project's bucket for this key kind is empty. */
  checkProject(projectId: string, kind: KeyKind): void;
}

/**
 * Creates the per-IP and per-project limits. The limits live in this process: N server processes
 * behind a load balancer allow up to N times the rate (SECURITY.md).
 */
export function createRateLimiter(options: RateLimitOptions | false, metrics: Metrics, now: () => number): RateLimiter {
  const ipLimit = options === false ? false : (options.ip ?? DEFAULT_RATE_LIMITS.ip);
  const projectLimit = options === false ? false : (options.project ?? DEFAULT_RATE_LIMITS.project);
  const ipBuckets = ipLimit === false ? undefined : createTokenBuckets({ ...ipLimit, now });
  const projectBuckets = projectLimit === false ? undefined : createTokenBuckets({ ...projectLimit, now });

  return {
    byIp: async (ctx, next) => {
      if (ipBuckets !== undefined) {
        const waitMs = ipBuckets.take(addressKey(ctx.ip));
        if (waitMs > 0) {
          metrics.rateLimited('ip');
          throw limited('this client address', waitMs);
        }
      }
      await next();
    },
    checkProject(projectId, kind) {
      if (projectBuckets === undefined) return;
      const waitMs = projectBuckets.take(`${kind}:${projectId}`);
      if (waitMs > 0) {
        metrics.rateLimited('project');
        throw limited('this project', waitMs);
      }
    },
  };
}

function limited(who: string, waitMs: number): HttpError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new HttpError('RATE_LIMITED', `Too many requests from ${who}; retry after ${seconds} s.`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * The bucket key of a client address: IPv4 as it is, IPv6 by its first 64 bits, since one
 * subscriber usually holds a whole /64 and could otherwise take a fresh bucket per request.
 */
export function addressKey(address: string): string {
  const ip = normalizeIp(address);
  if (ip === null) return address;
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  // A dotted IPv4 tail (`64:ff9b::1.2.3.4`) fills two groups.
  const width = (parts: string[]): number => parts.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - width(left) - width(right)).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (g || '0').toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
