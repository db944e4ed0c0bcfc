import { describe, expect, it } from 'vitest';
import { isRetryable, nextDelay } from './retry-policy.js';

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
