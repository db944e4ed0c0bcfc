import { describe, expect, it } from 'vitest';
import { DENIED, captureHeaders, isDeniedHeader } from './network-headers.js';

describe('captureHeaders(pairs, extra, mask)', () => {
  it('records credential headers as [denied], by name and by what a name speaks of; options only add names', () => {
    const extra = new Set(['x-tenant']);
    const headers = captureHeaders(
      [
        ['Authorization', 'Bearer t'],
        ['Cookie', 'sid=1'],
        ['X-CSRF-Token', 'c'],
        ['X-Amz-Security-Token', 's'],
        ['X-Tenant', 'acme'],
        ['Content-Type', 'application/json'],
      ],
      extra,
      (text) => text,
    );
    expect(headers).toEqual({
      authorization: DENIED,
      cookie: DENIED,
      'x-csrf-token': DENIED,
      'x-amz-security-token': DENIED,
      'x-tenant': DENIED,
      'content-type': 'application/json',
    });
    for (const name of ['set-cookie', 'proxy-authorization', 'x-api-key', 'x-session-id', 'x-password']) expect(isDeniedHeader(name, new Set())).toBe(true);
  });
});
