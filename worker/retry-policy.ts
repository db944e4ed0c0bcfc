/**
 * The retry policy as data and one pure function (docs/architecture.md, "Conventions"; after ky's
 * `retry-timing.ts`).
 *
 * Meaning of `retryAttempts` (docs/decisions.md, "What `retryAttempts` counts"): it counts
 * *retries*, not sends. An event is sent at most `1 + retryAttempts` times; after its n-th failed
 * send (n ≤ retryAttempts) it waits `retryDelay · 2^(n−1)`. With the defaults (3, 1000 ms): send,
 * wait 1000, send, wait 2000, send, wait 4000, send, then discard (the waits the specification
 * lists, same section).
 *
 * Deferrals (docs/decisions.md, "429 and 503 with Retry-After: waiting without spending attempts":
 * without them, rate limiting would silently lose data): a 429, or a 503 that carries `Retry-After`
 * (the server's write queue is full), says the server is busy, not that the batch failed. Those
 * answers are waited out as told WITHOUT using up `retryAttempts`, see {@link isDeferral} and
 * {@link nextDeferral}; only events older than {@link MAX_DEFERRAL_AGE_MS} are given up then. This
 * departs from the specification's "5xx … retries below retryAttempts" for a 503 with `Retry-After`
 * on purpose: counting it would drop events whenever the server sheds load.
 */
import { isRetryableStatus } from '../protocol/error-codes.js';
import { MAX_RETRY_AFTER_MS } from './retry-after.js';
import type { SendOutcome } from './sender.js';

/** A send that did not succeed, as the sender reports it. */
export type FailedSend = Exclude<SendOutcome, { kind: 'ok' }>;

/**
 * What a failed send means for what it carried: the one place that decides, for event batches
 * and recording chunks alike.
 */
export type RetryVerdict =
  /** The same request would fail again (a 4xx other than 429, or the library's own error). */
  | { action: 'discard' }
  /** A transient failure (network, 5xx): try again after backoff, spending an attempt. */
  | { action: 'retry'; failure: SendFailure }
  /**
   * The server asked to wait (429, or 503 with `Retry-After`): try again later without spending
   * an attempt. `pauseMs`, when the server named a time, pauses every send, not just this one:
   * rate limits apply to the project.
   */
  | { action: 'defer'; failure: SendFailure; pauseMs: number | undefined };

/** Judges a failed send; see {@link RetryVerdict}. */
export function judge(outcome: FailedSend): RetryVerdict {
  if (outcome.kind === 'failed') return { action: 'discard' };
  const failure: SendFailure = outcome.kind === 'network' ? { kind: 'network' } : { kind: 'http', status: outcome.status, retryAfterMs: outcome.retryAfterMs };
  if (!isRetryable(failure)) return { action: 'discard' };
  if (isDeferral(failure)) return { action: 'defer', failure, pauseMs: failure.kind === 'http' ? failure.retryAfterMs : undefined };
  return { action: 'retry', failure };
}

/** Why a send failed, as far as retrying is concerned. */
export type SendFailure =
  /** No HTTP answer: DNS, connection reset, CORS, offline, or our own timeout. */
  | { kind: 'network' }
  /** An HTTP answer other than 2xx; `retryAfterMs` from a parsed `Retry-After`, if any. */
  | { kind: 'http'; status: number; retryAfterMs?: number | undefined };

/** The part of the configuration the policy reads. */
export interface RetrySettings {
  /** Retries after the first send; @default 3. */
  retryAttempts: number;
  /** The first wait in ms, doubled on each retry; @default 1000. */
  retryDelay: number;
}

/** Statuses whose `Retry-After` is honoured: the server is telling us when it can take more. */
const HONOURS_RETRY_AFTER: ReadonlySet<number> = new Set([429, 503]);

/** True for the failures worth retrying: network, 5xx and 429. Everything else is final. */
export function isRetryable(failure: SendFailure): boolean {
  return failure.kind === 'network' || isRetryableStatus(failure.status);
}

/**
 * How long to wait before retry number `attempt` (1 for the first retry), or `'give-up'`.
 *
 * Backoff is `retryDelay · 2^(attempt−1)`. For 429 and 503 with a `Retry-After`, the wait is the
 * longer of the two, so the server's request is honoured and backoff still grows when it says
 * `Retry-After: 0`. Unknown or non-transient failures (4xx other than 429) are never retried.
 */
export function nextDelay(attempt: number, failure: SendFailure, config: RetrySettings): number | 'give-up' {
  if (!isRetryable(failure) || attempt > config.retryAttempts || attempt < 1) return 'give-up';
  const backoff = config.retryDelay * 2 ** (attempt - 1);
  if (failure.kind === 'http' && failure.retryAfterMs !== undefined && HONOURS_RETRY_AFTER.has(failure.status)) {
    return Math.max(backoff, failure.retryAfterMs);
  }
  return backoff;
}

/**
 * How old an event may grow while the server keeps deferring it (429, 503 with `Retry-After`)
 * before it is discarded after all: 24 hours. Deferrals are otherwise unbounded in number.
 */
export const MAX_DEFERRAL_AGE_MS = 24 * 60 * 60_000;

/** True for a 429, or a 503 with `Retry-After`: the server asks to wait; no attempt is used up. */
export function isDeferral(failure: SendFailure): boolean {
  if (failure.kind !== 'http') return false;
  return failure.status === 429 || (failure.status === 503 && failure.retryAfterMs !== undefined);
}

/**
 * How long to wait after deferral number `deferral` (1 for the first in a row) of an event created
 * at `createdAt`, or `'give-up'` once it is older than {@link MAX_DEFERRAL_AGE_MS}.
 *
 * With `Retry-After` the wait is what the server asked, but at least `retryDelay`, so a server
 * saying `Retry-After: 0` is not hammered; a 429 without it backs off as retries do,
 * `retryDelay · 2^(deferral−1)`, up to `MAX_RETRY_AFTER_MS`.
 */
export function nextDeferral(
  deferral: number,
  createdAt: number,
  now: number,
  failure: SendFailure,
  config: Pick<RetrySettings, 'retryDelay'>,
): number | 'give-up' {
  if (now - createdAt > MAX_DEFERRAL_AGE_MS) return 'give-up';
  const retryAfterMs = failure.kind === 'http' ? failure.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) return Math.max(retryAfterMs, config.retryDelay);
  return Math.min(config.retryDelay * 2 ** Math.min(Math.max(0, deferral - 1), 30), MAX_RETRY_AFTER_MS);
}
