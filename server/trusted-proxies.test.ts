import { describe, expect, it } from 'vitest';
import { parseTrustedProxies } from './trusted-proxies.js';

describe('parseTrustedProxies(spec).clientAddress(peer, forwardedFor)', () => {
  const proxies = parseTrustedProxies('127.0.0.1, 10.0.0.0/8,fd00::/8');

  it('ignores the header of a peer that is no trusted proxy', () => {
    expect(proxies.clientAddress('203.0.113.9', '1.2.3.4')).toBe('203.0.113.9');
    expect(proxies.clientAddress('::ffff:127.0.0.2', '1.2.3.4')).toBe('127.0.0.2');
  });

  it('takes the rightmost entry that is not a trusted proxy, never one the client wrote before it', () => {
    expect(proxies.clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7')).toBe('198.51.100.7');
    expect(proxies.clientAddress('::ffff:127.0.0.1', '6.6.6.6, 198.51.100.7, 10.1.2.3')).toBe('198.51.100.7');
    expect(proxies.clientAddress('10.9.9.9', '2001:db8::1, fd00::5')).toBe('2001:db8::1');
  });

  it('keeps the peer without a header, and stops at an entry that is no address', () => {
    expect(proxies.clientAddress('127.0.0.1', '')).toBe('127.0.0.1');
    expect(proxies.clientAddress('127.0.0.1', '1.2.3.4, not-an-ip, 10.0.0.1')).toBe('10.0.0.1');
    expect(proxies.clientAddress('127.0.0.1', '198.51.100.7:4711')).toBe('198.51.100.7');
    expect(proxies.clientAddress('127.0.0.1', '[2001:db8::2]:443')).toBe('2001:db8::2');
  });

  it('uses the leftmost entry when every hop is trusted', () => {
    expect(proxies.clientAddress('127.0.0.1', '10.0.0.7, 10.0.0.8')).toBe('10.0.0.7');
  });

  it('reads `loopback` as 127.0.0.0/8 and ::1, and refuses what is neither an address nor a range', () => {
    const loopback = parseTrustedProxies('loopback');
    expect(loopback.clientAddress('127.3.2.1', '198.51.100.7')).toBe('198.51.100.7');
    expect(loopback.clientAddress('::1', '198.51.100.7')).toBe('198.51.100.7');
    expect(loopback.clientAddress('192.168.1.1', '198.51.100.7')).toBe('192.168.1.1');
    for (const bad of ['', 'example.com', '10.0.0.0/33', '10.0.0.0/8/1', '10.0.0.0/x', '::1/129']) expect(() => parseTrustedProxies(bad)).toThrow();
  });
});
