import { describe, expect, it } from 'vitest';
import { type UuidV7Options, createUuidV7Clock, createUuidV7Generator } from './uuid-v7.js';

/** Id text from a fresh clock, as the facade makes the ids of sessions and users. */
const generator = (options?: UuidV7Options) => createUuidV7Generator(createUuidV7Clock(options));

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createUuidV7Clock() and createUuidV7Generator()', () => {
  it('makes RFC 9562 version 7 ids with the variant bits 10', () => {
    const next = generator();
    for (let i = 0; i < 1000; i++) expect(next(1_700_000_000_000 + i)).toMatch(UUID_V7);
  });

  it('puts the timestamp in the first 48 bits', () => {
    const id = generator()(0x0189_abcd_ef01);
    expect(id.slice(0, 13)).toBe('0189abcd-ef01');
  });

  it('is unique and sorts in creation order over 100k ids, also within one millisecond', () => {
    const next = generator();
    const ids: string[] = [];
    for (let i = 0; i < 100_000; i++) ids.push(next(1_700_000_000_000 + Math.floor(i / 1000)));
    expect(new Set(ids).size).toBe(ids.length);
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
  });

  it('stays monotonic when the clock goes backwards', () => {
    const next = generator();
    const a = next(2_000_000);
    const b = next(1_000_000);
    const c = next(Number.NaN);
    expect(a < b && b < c).toBe(true);
    expect(b.slice(0, 13)).toBe(a.slice(0, 13));
  });

  it('keeps two pages apart by their random part', () => {
    const a = generator({ randomBytes: (bytes) => bytes.fill(1) });
    const b = generator({ randomBytes: (bytes) => bytes.fill(2) });
    expect(a(5)).not.toBe(b(5));
  });

  it('holds the counter bit for bit across its 16- and 30-bit carries (against a BigInt layout)', () => {
    const reference = (ms: number, counter: number, tail: string): string => {
      const bits = (BigInt(ms) << 80n) | (7n << 76n) | (BigInt(Math.floor(counter / 2 ** 30)) << 64n) | (2n << 62n) | (BigInt(counter % 2 ** 30) << 32n);
      const h = bits.toString(16).padStart(32, '0').slice(0, 24) + tail;
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
    };
    // Without counterStart: the tail from random bytes 0–3, the start from bytes 4–9 (below 2^41).
    const seeded = generator({ randomBytes: (bytes) => bytes.set([1, 2, 3, 4, 0xff, 5, 6, 7, 8, 9]) });
    expect(seeded(1_700_000_000_000)).toBe(reference(1_700_000_000_000, 0x0105_0607_0809 + 1, '01020304'));
    for (const start of [2 ** 16 - 3, 2 ** 30 - 3, 2 ** 41 - 3, 5 * 2 ** 30 + 7 * 2 ** 16 - 2]) {
      const next = generator({ counterStart: start, randomBytes: (bytes) => bytes.fill(0xab) });
      for (let i = 1; i <= 6; i++) {
        const ms = 1_700_000_000_000 + (i >> 1); // the ms changes between some ids, not all
        expect(next(ms)).toBe(reference(ms, start + i, 'abababab'));
      }
    }
  });

  it('never gives a negative millisecond, even from a first reading that is NaN or negative', () => {
    expect(generator()(Number.NaN).slice(0, 13)).toBe('00000000-0000');
    expect(generator()(-5).slice(0, 13)).toBe('00000000-0000');
    const clock = createUuidV7Clock();
    clock.tick(Number.NaN);
    expect(clock.ms).toBe(0);
  });

  it('keeps the last millisecond through a reading of Infinity or past 48 bits, and goes on after it', () => {
    const next = generator();
    const first = next(1_000);
    expect(next(Number.POSITIVE_INFINITY).slice(0, 13)).toBe(first.slice(0, 13));
    expect(next(2 ** 48).slice(0, 13)).toBe(first.slice(0, 13));
    const later = next(2_000);
    expect(later.slice(0, 13)).toBe('00000000-07d0');
    expect(later).toMatch(UUID_V7);
  });

  it('borrows the next millisecond when the counter is spent', () => {
    const next = generator({ counterStart: 2 ** 42 - 2 });
    const last = next(10);
    const borrowed = next(10);
    expect(last.slice(0, 13)).toBe('00000000-000a');
    expect(borrowed.slice(0, 13)).toBe('00000000-000b');
    expect(borrowed > last).toBe(true);
    expect(borrowed).toMatch(UUID_V7);
  });
});
