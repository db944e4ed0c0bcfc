import { describe, expect, it } from 'vitest';
import { expandColumns, isEventColumns } from './event-columns.js';
import type { EventColumns } from './types.js';

const columns = (): EventColumns => ({
  ids: ['a', 'b', 'c'],
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
    expect(expandColumns(columns())).toEqual([
      { id: 'a', timestamp: 1, type: 'track', event: 'x', properties: { i: 0 }, anonymousId: 'anon', sessionId: 's', context: {} },
      { id: 'b', timestamp: 2, type: 'track', event: 'y', anonymousId: 'anon', sessionId: 's', context: {} },
      { id: 'c', timestamp: 3, type: 'alias', userId: 'u', anonymousId: 'anon', sessionId: 's', context: {}, previousId: 'anon' },
    ]);
  });
});

describe('isEventColumns(value)', () => {
  it('accepts well-formed columns and empty ones', () => {
    expect(isEventColumns(columns())).toBe(true);
    expect(isEventColumns({ ids: [], timestamps: [], names: [], properties: [], runs: [] })).toBe(true);
  });

  it('refuses columns of unequal length, events outside any run, or runs out of order', () => {
    expect(isEventColumns({ ...columns(), timestamps: [1] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 1 }] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 0 }, { start: 0 }] })).toBe(false);
    expect(isEventColumns({ ...columns(), runs: [{ start: 0 }, { start: 3 }] })).toBe(false);
    expect(isEventColumns(null)).toBe(false);
  });
});
