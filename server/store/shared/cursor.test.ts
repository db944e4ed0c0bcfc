import { describe, expect, it } from 'vitest';
import { clampPageLimit, decodeEventCursor, encodeEventCursor, timeBound } from './cursor.js';

describe('encodeEventCursor / decodeEventCursor', () => {
  it('round-trips positions, ids with colons and negative times included', () => {
    for (const cursor of [
      { timestamp: 1_760_000_000_000, eventId: '0198c2d0-aaaa-7bbb-8ccc-ddddeeeeffff' },
      { timestamp: -5, eventId: 'a:b:c' },
      { timestamp: 0, eventId: 'ünïcødé 😀' },
    ]) {
      const token = encodeEventCursor(cursor);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeEventCursor(token)).toEqual(cursor);
    }
  });

  it('refuses tokens it did not make with code INVALID_CURSOR', () => {
    const bad = ['', '!!!', Buffer.from('12:').toString('base64url'), Buffer.from('1.5:x').toString('base64url'), `${encodeEventCursor({ timestamp: 1, eventId: 'x' })}=`];
    for (const token of bad) expect(() => decodeEventCursor(token)).toThrow(expect.objectContaining({ code: 'INVALID_CURSOR' }));
  });
});

describe('clampPageLimit(limit)', () => {
  it('keeps page sizes within 1–1000 and whole', () => {
    expect([0, 1, 2.7, 1000, 5000, Number.NaN, -3].map(clampPageLimit)).toEqual([1, 1, 2, 1000, 1000, 1000, 1]);
  });
});

describe('timeBound(value)', () => {
  it('rounds up to whole ms, which keeps >= and < meaning the same on whole-ms times', () => {
    expect([10, 10.2, -10.2, 1e300, -Infinity].map(timeBound)).toEqual([10, 11, -10, 8.64e15, -8.64e15]);
  });
});
