import { describe, expect, it } from 'vitest';
import { expandColumns, isEventColumns } from './event-columns.js';
import { formatEventId } from './event-id.js';
import { createEventIdFormatter } from './event-id-formatter.js';
import type { EventColumns } from './event-columns.js';

const MS = 1_764_000_000_000;
const columns = (): EventColumns => ({
  idMs: [MS, MS, MS + 1],
  idCounters: [0xffff, 0x1_0000, 2 ** 41 + 7],
  idTail: 'c0ffee00',
  timestamps: [1, 2, 3],
  names: ['x', 'y', undefined],
  properties: [{ i: 0 }, undefined, undefined],
  runs: [
    { start: 0, type: 'track', anonymousId: 'anon', sessionId: 's', context: {} },
    { start: 2, type: 'alias', userId: 'u', anonymousId: 'anon', sessionId: 's', context: {}, previousId: 'anon' },
  ],
});

describe('expandColumns(columns)', () => {
  it('makes one event per id with the fields of its run', () => {
    const [a, b, c] = [formatEventId(MS, 0xffff, 'c0ffee00'), formatEventId(MS, 0x1_0000, 'c0ffee00'), formatEventId(MS + 1, 2 ** 41 + 7, 'c0ffee00')];
    expect([a, b, c]).toEqual(['019ab697-e800-7000-8000-ffffc0ffee00', '019ab697-e800-7000-8001-0000c0ffee00', '019ab697-e801-7800-8000-0007c0ffee00']);
    expect(expandColumns(columns())).toEqual([
      { id: a, timestamp: 1, type: 'track', event: 'x', properties: { i: 0 }, anonymousId: 'anon', sessionId: 's', context: {} },
      { id: b, timestamp: 2, type: 'track', event: 'y', anonymousId: 'anon', sessionId: 's', context: {} },
      { id: c, timestamp: 3, type: 'alias', userId: 'u', anonymousId: 'anon', sessionId: 's', context: {}, previousId: 'anon' },
    ]);
  });
});

describe('isEventColumns(value)', () => {
  it('accepts well-formed columns and empty ones', () => {
    expect(isEventColumns(columns())).toBe(true);
    expect(isEventColumns({ idMs: [], idCounters: [], idTail: '00000000', timestamps: [], names: [], properties: [], runs: [] })).toBe(true);
  });

  it('refuses columns of unequal length, events outside any run, or runs out of order', () => {
    expect(isEventColumns({ ...columns(), timestamps: [1] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 1 }] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 0 }, { start: 0 }] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 0 }, { start: 3 }] })).toBe(false);
    // Starts that are no index: every comparison with NaN is false, and 1.5 falls between events.
    expect(isEventColumns({ ...columns(), runs: [{ start: 0 }, { start: Number.NaN }] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 0 }, { start: 1.5 }] })).toBe(false);
    expect(isEventColumns(null)).toBe(false);
  });

  it('refuses ids that are no UUIDv7: a bad tail, or numbers out of range', () => {
    expect(isEventColumns({ ...columns(), idTail: 'C0FFEE00' })).toBe(false);
    expect(isEventColumns({ ...columns(), idTail: undefined })).toBe(false);
    expect(isEventColumns({ ...columns(), idMs: [MS, MS, 2 ** 48] })).toBe(false);
    expect(isEventColumns({ ...columns(), idCounters: [0, 1, 2 ** 42] })).toBe(false);
    expect(isEventColumns({ ...columns(), idCounters: [0, 1.5, 2] })).toBe(false);
    expect(isEventColumns({ ...columns(), idMs: [MS, MS] })).toBe(false);
  });
});

describe('createEventIdFormatter()', () => {
  it('makes the same text as formatEventId, across millisecond and 2^16 counter changes', () => {
    const format = createEventIdFormatter();
    for (const [ms, counter] of [[MS, 0xfffe], [MS, 0xffff], [MS, 0x1_0000], [MS + 1, 0x1_0001], [MS + 1, 2 ** 30 - 1], [MS + 1, 2 ** 30], [MS, 2 ** 30 + 1]] as const) {
      expect(format(ms, counter, 'c0ffee00')).toBe(formatEventId(ms, counter, 'c0ffee00'));
    }
  });
});
