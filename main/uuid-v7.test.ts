import { describe, expect, it } from 'vitest';
import { createUuidV7Generator } from './uuid-v7.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createUuidV7Generator()', () => {
  it('makes RFC 9562 version 7 ids with the variant bits 10', () => {
    const next = createUuidV7Generator();
    for (let i = 0; i < 1000; i++) expect(next(1_700_000_000_000 + i)).toMatch(UUID_V7);
  });

  it('puts the timestamp in the first 48 bits', () => {
    const id = createUuidV7Generator()(0x0189_abcd_ef01);
    expect(id.slice(0, 13)).toBe('0189abcd-ef01');
  });

  it('is unique and sorts in creation order over 100k ids, also within one millisecond', () => {
    const next = createUuidV7Generator();
    const ids: string[] = [];
    for (let i = 0; i < 100_000; i++) ids.push(next(1_700_000_000_000 + Math.floor(i / 1000)));
    expect(new Set(ids).size).toBe(ids.length);
    const sorted = [...ids].sort();
    expect(sorted).toEqual(ids);
  });

  it('stays monotonic when the clock goes backwards', () => {
    const next = createUuidV7Generator();
    const a = next(2_000_000);
    const b = next(1_000_000);
    const c = next(Number.NaN);
    expect(a < b && b < c).toBe(true);
    expect(b.slice(0, 13)).toBe(a.slice(0, 13));
  });

  it('keeps two pages apart by their random part', () => {
    const a = createUuidV7Generator({ randomBytes: (bytes) => bytes.fill(1) });
    const b = createUuidV7Generator({ randomBytes: (bytes) => bytes.fill(2) });
    expect(a(5)).not.toBe(b(5));
  });

  it('borrows the next millisecond when the counter is spent', () => {
    const next = createUuidV7Generator({ counterStart: 2 ** 42 - 2 });
    const last = next(10);
    const borrowed = next(10);
    expect(last.slice(0, 13)).toBe('00000000-000a');
    expect(borrowed.slice(0, 13)).toBe('00000000-000b');
    expect(borrowed > last).toBe(true);
    expect(borrowed).toMatch(UUID_V7);
  });
});
