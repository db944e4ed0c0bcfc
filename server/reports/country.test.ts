import { describe, expect, it } from 'vitest';
import { createCountryLookup, readBundledDatabase } from './country.js';

describe('createCountryLookup().countryOf(ip)', () => {
  const lookup = createCountryLookup();

  it.each([
    ['8.8.8.8', 'US'],
    ['81.2.69.160', 'GB'],
    // IPv4-mapped IPv6, as a dual-stack socket reports an IPv4 client.
    ['::ffff:81.2.69.160', 'GB'],
  ])('finds the country of the public address %s: %s', (ip, code) => {
    expect(lookup.countryOf(ip)).toBe(code);
  });

  it('finds a two-letter code for a public IPv6 address', () => {
    expect(lookup.countryOf('2a00:1450:4001::1')).toMatch(/^[A-Z]{2}$/);
  });

  it.each([
    '127.0.0.1',
    '::1',
    '10.1.2.3',
    '172.20.0.5',
    // The database gives some of these a country (a registry's record of a block); none is a place.
    '192.168.1.1',
    '100.64.0.1',
    '169.254.1.1',
    '203.0.113.9',
    '2001:db8::1',
    'fd12:3456::1',
    'fe80::1',
    '224.0.0.1',
    '0.0.0.0',
    '::',
    '::FFFF:192.168.1.1',
  ])('gives no country for the non-public address %s', (ip) => {
    expect(lookup.countryOf(ip)).toBeNull();
  });

  it.each([null, '', 'garbage', '1.2.3', '999.1.1.1', ':::', '81.2.69.160/24'])('gives no country for %j, which is no address', (ip) => {
    expect(lookup.countryOf(ip)).toBeNull();
  });

  it('reads the database on the first address that needs it, once', () => {
    let reads = 0;
    const counted = createCountryLookup({ readDatabase: () => (reads++, readBundledDatabase()) });
    expect(counted.countryOf('10.0.0.1')).toBeNull();
    expect(reads).toBe(0);
    expect(counted.countryOf('81.2.69.160')).toBe('GB');
    expect(counted.countryOf('8.8.8.8')).toBe('US');
    expect(reads).toBe(1);
  });

  it('answers null for every address once told that the database cannot be read, telling onError once', () => {
    const errors: unknown[] = [];
    const broken = createCountryLookup({
      readDatabase: () => {
        throw new Error('ENOENT: no such file');
      },
      onError: (error) => errors.push(error),
    });
    expect(broken.countryOf('81.2.69.160')).toBeNull();
    expect(broken.countryOf('8.8.8.8')).toBeNull();
    expect(errors).toHaveLength(1);
    expect(() => createCountryLookup({ readDatabase: () => Buffer.from('not a database') }).countryOf('8.8.8.8')).toThrow();
  });
});
