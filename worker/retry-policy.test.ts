import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS } from './retry-after.js';
import { MAX_DEFERRAL_AGE_MS, isDeferral, isRetryable, judge, nextDeferral, nextDelay } from './retry-policy.js';

const defaults = { retryAttempts: 3, retryDelay: 1000 };
const network = { kind: 'network' } as const;

describe('nextDelay(attempt, failure, config)', () => {
  it('waits 1000, 2000, 4000 ms with the defaults, then gives up (1 send + 3 retries)', () => {
    expect([1, 2, 3, 4].map((attempt) => nextDelay(attempt, network, defaults))).toEqual([1000, 2000, 4000, 'give-up']);
  });

  it('doubles from retryDelay', () => {
    expect(nextDelay(3, { kind: 'http', status: 502 }, { retryAttempts: 5, retryDelay: 250 })).toBe(1000);
  });

  it('retries network failures, 5xx and 429 only', () => {
    expect(isRetryable(network)).toBe(true);
    for (const status of [429, 500, 502, 503, 504]) expect(isRetryable({ kind: 'http', status })).toBe(true);
    for (const status of [400, 401, 403, 404, 408, 413, 415]) {
      expect(nextDelay(1, { kind: 'http', status }, defaults)).toBe('give-up');
    }
  });

  it('honours Retry-After on 429 and 503 when it is longer than the backoff', () => {
    expect(nextDelay(1, { kind: 'http', status: 429, retryAfterMs: 30_000 }, defaults)).toBe(30_000);
    expect(nextDelay(1, { kind: 'http', status: 503, retryAfterMs: 5_000 }, defaults)).toBe(5_000);
    expect(nextDelay(3, { kind: 'http', status: 429, retryAfterMs: 0 }, defaults)).toBe(4000);
  });

  it('ignores Retry-After on other statuses', () => {
    expect(nextDelay(1, { kind: 'http', status: 500, retryAfterMs: 30_000 }, defaults)).toBe(1000);
  });

  it('never retries when retryAttempts is 0', () => {
    expect(nextDelay(1, network, { retryAttempts: 0, retryDelay: 1000 })).toBe('give-up');
  });
});

describe('deferrals: 429, and 503 with Retry-After (docs/decisions.md, "429 and 503 with Retry-After: waiting without spending attempts")', () => {
  const at = Date.UTC(2026, 10, 22, 10, 0, 0);

  it('counts a 429 (with or without Retry-After) and a 503 with Retry-After as deferrals, nothing else', () => {
    expect(isDeferral({ kind: 'http', status: 429 })).toBe(true);
    expect(isDeferral({ kind: 'http', status: 429, retryAfterMs: 1000 })).toBe(true);
    expect(isDeferral({ kind: 'http', status: 503, retryAfterMs: 1000 })).toBe(true);
    expect(isDeferral({ kind: 'http', status: 503 })).toBe(false);
    expect(isDeferral({ kind: 'http', status: 500, retryAfterMs: 1000 })).toBe(false);
    expect(isDeferral(network)).toBe(false);
  });

  it('waits as told, at least retryDelay, however many deferrals came before', () => {
    const failure = { kind: 'http', status: 429, retryAfterMs: 30_000 } as const;
    expect([1, 2, 50].map((n) => nextDeferral(n, at, at, failure, defaults))).toEqual([30_000, 30_000, 30_000]);
    expect(nextDeferral(7, at, at, { kind: 'http', status: 429, retryAfterMs: 0 }, defaults)).toBe(1000);
  });

  it('backs off without Retry-After, up to MAX_RETRY_AFTER_MS', () => {
    const failure = { kind: 'http', status: 429 } as const;
    expect([1, 2, 3].map((n) => nextDeferral(n, at, at, failure, defaults))).toEqual([1000, 2000, 4000]);
    expect(nextDeferral(100, at, at, failure, defaults)).toBe(MAX_RETRY_AFTER_MS);
  });

  it(`gives up only on events older than ${MAX_DEFERRAL_AGE_MS / 3_600_000} hours`, () => {
    const failure = { kind: 'http', status: 429, retryAfterMs: 1000 } as const;
    expect(nextDeferral(1000, at, at + MAX_DEFERRAL_AGE_MS, failure, defaults)).toBe(1000);
    expect(nextDeferral(1, at, at + MAX_DEFERRAL_AGE_MS + 1, failure, defaults)).toBe('give-up');
  });
});

describe('judge(outcome): the one verdict on a failed send', () => {
  const http = (status: number, retryAfterMs?: number) => ({ kind: 'http', status, retryAfterMs, code: undefined, message: `HTTP ${status}` }) as const;
  it('retries network failures and 5xx, spending an attempt', () => {
    expect(judge({ kind: 'network', timedOut: true, message: 'x' })).toEqual({ action: 'retry', failure: { kind: 'network' } });
    expect(judge(http(502))).toEqual({ action: 'retry', failure: { kind: 'http', status: 502, retryAfterMs: undefined } });
    expect(judge(http(503))).toMatchObject({ action: 'retry' });
  });
  it('defers 429 (with or without Retry-After) and 503 with Retry-After, pausing all sends when a time is named', () => {
    expect(judge(http(429, 7_000))).toEqual({ action: 'defer', failure: { kind: 'http', status: 429, retryAfterMs: 7_000 }, pauseMs: 7_000 });
    expect(judge(http(429))).toMatchObject({ action: 'defer', pauseMs: undefined });
    expect(judge(http(503, 1_000))).toMatchObject({ action: 'defer', pauseMs: 1_000 });
  });
  it("discards other 4xx, and an error of the library's own instead of retrying it as a network failure", () => {
    for (const status of [400, 401, 404, 413, 415]) expect(judge(http(status))).toEqual({ action: 'discard' });
    expect(judge({ kind: 'failed', message: 'RangeError' })).toEqual({ action: 'discard' });
  });
});
