import { describe, expect, it } from 'vitest';
import { normalizeIp, truncateIp } from './ip-address.js';

describe('truncateIp(address)', () => {
  it.each([
    ['203.0.113.77', '203.0.113.0'],
    ['::ffff:203.0.113.77', '203.0.113.0'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::'],
    ['2001:db8::1', '2001:db8:0::'],
    ['::1', '0:0:0::'],
  ])('truncates %s to %s', (ip, expected) => {
    expect(truncateIp(ip)).toBe(expected);
  });

  it('answers null for something that is not an address', () => {
    expect(truncateIp('localhost')).toBeNull();
  });
});

describe('normalizeIp(address)', () => {
  it('unwraps IPv4-mapped IPv6', () => {
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(normalizeIp('::1')).toBe('::1');
    expect(normalizeIp('nope')).toBeNull();
  });
});
