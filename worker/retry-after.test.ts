import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry-after.js';

const now = Date.UTC(2026, 10, 22, 10, 0, 0);

describe('parseRetryAfter(value, now)', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1500);
  });

  it('reads an HTTP-date as the time left until it', () => {
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
  });

  it('treats a date in the past as no wait', () => {
    expect(parseRetryAfter(new Date(now - 30_000).toUTCString(), now)).toBe(0);
  });

  it('caps long waits', () => {
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('86400', now, 60_000)).toBe(60_000);
  });

  it('ignores absent and malformed values', () => {
    for (const value of [null, undefined, '', '-1', 'soon', '12abc']) expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
