import { describe, expect, it } from 'vitest';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import { createAckMirror } from './ack-mirror.js';
import { appendEvent, createColumns } from './event-buffer.js';
import { liveColumns, rangesOfCounters } from './mirror-columns.js';

/** Columns of `count` events with id counters `from` … */
function columns(count: number, from = 0): EventColumns {
  const c = createColumns('0e0e0e0e');
  for (let i = from; i < from + count; i++) appendEvent(c, i, i, i, 'track', 'x', undefined, undefined, 'a', 's', {}, undefined);
  return c;
}

describe('createAckMirror()', () => {
  it('settles ranges in any order, overlapping or repeated, and counts each event once', () => {
    const mirror = createAckMirror();
    mirror.add(0, columns(10));
    mirror.add(10, columns(5, 10));
    expect(mirror.size).toBe(15);
    mirror.settle([4, 6, 8, 12]); // across both chunks
    expect(mirror.size).toBe(9);
    mirror.settle([0, 2, 5, 9]); // overlaps what is settled: 0, 1, 6, 7 are new
    expect(mirror.size).toBe(5);
    mirror.settle([5, 9]); // repeated
    expect(mirror.size).toBe(5);
    expect(liveColumns(mirror.chunks()).idCounters).toEqual([2, 3, 12, 13, 14]);
  });

  it('liveColumns leaves out the numbers the deferred request carries, settled or not', () => {
    const mirror = createAckMirror();
    mirror.add(0, columns(10));
    mirror.add(10, columns(5, 10));
    mirror.settle([2, 4, 11, 12]);
    // Covered: 0–2 and 3–11 (across both chunks, overlapping what is settled).
    expect(liveColumns(mirror.chunks(), [0, 2, 3, 11]).idCounters).toEqual([12, 13, 14]);
    expect(liveColumns(mirror.chunks(), [14, 20]).idCounters).toEqual([0, 1, 4, 5, 6, 7, 8, 9, 10, 12, 13]);
    expect(liveColumns(mirror.chunks(), []).idCounters).toEqual([0, 1, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14]);
  });

  it('ignores numbers it does not hold and drops a chunk once all of it is settled', () => {
    const mirror = createAckMirror();
    mirror.add(5, columns(3, 5));
    mirror.settle([0, 5, 8, 100]);
    expect(mirror.size).toBe(3);
    mirror.settle([7, 8, 5, 6]);
    mirror.settle([6, 7]);
    expect(mirror.size).toBe(0);
    expect(mirror.chunks()).toEqual([]);
  });

  it('trim(cap) settles the oldest unsettled events beyond cap', () => {
    const mirror = createAckMirror();
    mirror.add(0, columns(4));
    mirror.add(4, columns(4, 4));
    mirror.settle([1, 2]);
    mirror.trim(3);
    expect(mirror.size).toBe(3);
    expect(liveColumns(mirror.chunks()).idCounters).toEqual([5, 6, 7]);
  });

  it('clear() forgets everything', () => {
    const mirror = createAckMirror();
    mirror.add(0, columns(3));
    mirror.clear();
    mirror.settle([0, 3]);
    expect(mirror.size).toBe(0);
    expect(mirror.chunks()).toEqual([]);
  });
});

describe('rangesOfCounters(chunks, counters)', () => {
  it('numbers the events with those id counters as ranges, adjacent ones merged', () => {
    const mirror = createAckMirror();
    mirror.add(0, columns(3));
    mirror.add(10, columns(3, 3));
    expect(rangesOfCounters(mirror.chunks(), new Set([0, 1, 3, 5, 999]))).toEqual([0, 2, 10, 11, 12, 13]);
  });
});
