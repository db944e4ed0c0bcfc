import { addressKey } from '../middleware/rate-limit.js';
import { HttpError } from '../http-error.js';
import type { Metrics } from '../metrics.js';
import { type RateLimit, createTokenBuckets } from '../token-bucket.js';

/** Limits of sign-in attempts, each a token bucket; `false` turns one off. */
export interface SignInLimits {
  /** Per account (by the email given, whether or not such an account exists). @default 5 per minute, bursts of 5 */
  account?: RateLimit | false;
  /** Per client address (IPv6 per /64). @default 20 per minute, bursts of 20 */
  ip?: RateLimit | false;
}

/** The defaults of {@link SignInLimits}. */
export const DEFAULT_SIGN_IN_LIMITS: { readonly account: RateLimit; readonly ip: RateLimit } = {
  account: { ratePerSecond: 5 / 60, burst: 5 },
  ip: { ratePerSecond: 20 / 60, burst: 20 },
};

/** Counts sign-in attempts (and password changes, which check a password too). */
export interface SignInLimiter {
  /** Takes one attempt for `email` from `address`; throws 429 `RATE_LIMITED` with `Retry-After` when either is spent. */
  attempt(email: string, address: string): void;
}

/**
 * Creates the limits of password guessing: per account, so that one account is not guessed at from
 * many addresses, and per address, so that one address does not try many accounts. Every attempt
 * counts, right or wrong, so the answer says nothing about the password. The buckets are the API's
 * own (`token-bucket.ts`), kept in this process like the API's rate limits.
 */
export function createSignInLimiter(limits: SignInLimits | false, metrics: Metrics, now: () => number): SignInLimiter {
  const accountLimit = limits === false ? false : (limits.account ?? DEFAULT_SIGN_IN_LIMITS.account);
  const ipLimit = limits === false ? false : (limits.ip ?? DEFAULT_SIGN_IN_LIMITS.ip);
  const byAccount = accountLimit === false ? undefined : createTokenBuckets({ ...accountLimit, now });
  const byIp = ipLimit === false ? undefined : createTokenBuckets({ ...ipLimit, now });
  const refuse = (waitMs: number): HttpError => {
    metrics.rateLimited('ip');
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new HttpError('RATE_LIMITED', `Too many sign-in attempts; retry after ${seconds} s.`, { headers: { 'Retry-After': String(seconds) } });
  };
  return {
    attempt(email, address) {
      const ipWait = byIp?.take(addressKey(address)) ?? 0;
      if (ipWait > 0) throw refuse(ipWait);
      const accountWait = byAccount?.take(email) ?? 0;
      if (accountWait > 0) throw refuse(accountWait);
    },
  };
}
