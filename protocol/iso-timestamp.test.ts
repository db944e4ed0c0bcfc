import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIsoTimestamp, parseIsoTimestamp } from './iso-timestamp.js';

describe('parseIsoTimestamp(text)', () => {
  it.each([
    ['2026-11-22T10:00:00Z', Date.UTC(2026, 10, 22, 10)],
    ['2026-11-22T10:00:00.1Z', Date.UTC(2026, 10, 22, 10, 0, 0, 100)],
    ['2026-11-22T10:00:00.123456789Z', Date.UTC(2026, 10, 22, 10, 0, 0, 123)],
    ['2026-11-22T11:30:00+01:30', Date.UTC(2026, 10, 22, 10)],
    ['2026-11-22T08:00:00-02:00', Date.UTC(2026, 10, 22, 10)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
    ['0050-06-01T00:00:00Z', new Date('0050-06-01T00:00:00Z').getTime()],
    ['9999-12-31T23:59:59.999Z', Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
  ])('reads %s', (text, ms) => {
    expect(parseIsoTimestamp(text)).toBe(ms);
  });

  it.each([
    '2026-02-31T10:00:00.000Z', // no such day: Date.parse makes it March 3
    '2026-02-29T10:00:00Z', // not a leap year
    '1900-02-29T10:00:00Z', // a century that is not a leap year
    '2026-04-31T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-01T10:00:00Z',
    '2026-11-00T10:00:00Z',
    '2026-11-22T24:00:00Z',
    '2026-11-22T10:60:00Z',
    '2026-11-22T10:00:60Z',
    '2026-11-22T10:00:00+24:00',
    '2026-11-22T10:00:00.Z',
    '2026-11-22T10:00:00.1234567890Z',
    '2026-11-22T10:00:00',
    '2026-11-22T10:00:00Zx',
    '2026-11-22T10:00:00+0100',
    '2026-11-22 10:00:00Z',
    '+275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
    '2026-1a-22T10:00:00Z',
    '',
  ])('refuses %s', (text) => {
    expect(parseIsoTimestamp(text)).toBeNaN();
    expect(isIsoTimestamp(text)).toBe(false);
  });

  it('agrees with Date.parse on every real instant it is given in the canonical form', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0100-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
        const text = d.toISOString();
        return parseIsoTimestamp(text) === d.getTime();
      }),
      { numRuns: 2000 },
    );
  });
});
