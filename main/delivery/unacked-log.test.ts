import { describe, expect, it } from 'vitest';
import { expandColumns } from '../../protocol/event-model/event-columns.js';
import type { AnalyticsEvent, EventContext } from '../../protocol/event-model/analytics-event.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import { formatEventId } from '../../protocol/event-model/event-id.js';
import { TEST_ID_TAIL, parseEventId } from '../../test-support/worker/delivery-fakes.js';
import { liveColumns } from './log-columns.js';
import { type UnackedLog, appendEvent, createColumns, createUnackedLog, idOf, sliceColumns } from './unacked-log.js';

/** Appends an event object, field by field, as the facade's funnel does. */
function add(columns: EventColumns, e: AnalyticsEvent): void {
  const { ms, counter } = parseEventId(e.id);
  appendEvent(columns, ms, counter, e.timestamp, e.type, e.event, e.properties, e.userId, e.anonymousId, e.sessionId, e.context, e.previousId);
}

/** Pushes events numbered `numbers` into the log's buffer, then seals it (as a post does) unless `open`. */
function push(log: UnackedLog, numbers: number[], open = false): void {
  for (const n of numbers) appendEvent(log.open.columns, n, n, n, 'track', 'x', undefined, undefined, 'a', 's', {}, undefined);
  if (!open) log.seal();
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
const live = (log: UnackedLog, skip: number[] = []): number[] => liveColumns(log.chunks(), skip).idCounters;

const context: EventContext = { userAgent: 'test' };
const otherContext: EventContext = { userAgent: 'test', page: { url: 'https://example.test/next' } };

function event(i: number, over: Partial<AnalyticsEvent> = {}): AnalyticsEvent {
  return { id: formatEventId(1000 + i, 50 + i, TEST_ID_TAIL), timestamp: 1000 + i, type: 'track', event: `e${i}`, properties: { i }, userId: undefined, anonymousId: 'anon', sessionId: 's1', context, ...over };
}

const mixed = (): AnalyticsEvent[] => [
  event(0),
  event(1),
  event(2, { sessionId: 's2' }),
  event(3, { sessionId: 's2', context: otherContext }),
  event(4, { type: 'alias', event: undefined, properties: undefined, userId: 'u1', previousId: 'anon' }),
  event(5, { userId: 'u1' }),
];

describe('createUnackedLog()', () => {
  it('settles ranges of numbers in any order, overlapping or repeated, across posted chunks and the buffer, counting each event once', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(0, 10));
    push(log, range(10, 15), true);
    expect(log.size).toBe(15);
    log.settle([4, 6, 8, 12]); // across a posted chunk and the buffer
    expect(log.size).toBe(9);
    log.settle([0, 2, 5, 9]); // overlaps what is settled: 0, 1, 6, 7 are new
    expect(log.size).toBe(5);
    log.settle([5, 9]); // repeated
    expect(log.size).toBe(5);
    expect(live(log)).toEqual([2, 3, 12, 13, 14]);
    // Sealing keeps what the buffer had settled.
    log.seal();
    expect(live(log)).toEqual([2, 3, 12, 13, 14]);
  });

  it('numbers are the ids\' counters, gaps included (ids made for sessions in between)', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, [3, 7, 8, 20]);
    log.settle([4, 8]);
    expect(live(log)).toEqual([3, 8, 20]);
    log.settle([0, 4, 19, 100]);
    expect(live(log)).toEqual([8]);
    expect(log.size).toBe(1);
  });

  it('liveColumns leaves out the numbers the deferred request carries, settled or not', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(0, 10));
    push(log, range(10, 15));
    log.settle([2, 4, 11, 12]);
    // Covered: 0–2 and 3–11 (across both chunks, overlapping what is settled).
    expect(live(log, [0, 2, 3, 11])).toEqual([12, 13, 14]);
    expect(live(log, [14, 20])).toEqual([0, 1, 4, 5, 6, 7, 8, 9, 10, 12, 13]);
    expect(live(log)).toEqual([0, 1, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14]);
  });

  it('ignores numbers it does not hold and drops a posted chunk once all of it is settled', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(5, 8));
    log.settle([0, 5, 8, 100]);
    expect(log.size).toBe(3);
    log.settle([7, 8, 5, 6]);
    log.settle([6, 7]);
    expect(log.size).toBe(0);
    expect(log.chunks().slice(0, -1)).toEqual([]);
  });

  it('trim(cap) settles the oldest unsettled events beyond cap, and reports their ids when asked', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(0, 4));
    push(log, range(4, 8));
    log.settle([1, 2]);
    expect(log.trim(3, false)).toEqual([]);
    expect(log.size).toBe(3);
    expect(live(log)).toEqual([5, 6, 7]);
    push(log, range(8, 12), true);
    const posted = log.chunks().slice(0, -1)[0]!.columns;
    const { columns } = log.open;
    expect(log.trim(2, true)).toEqual([idOf(posted, 1), idOf(posted, 2), idOf(posted, 3), idOf(columns, 0), idOf(columns, 1)]);
    expect(live(log)).toEqual([10, 11]);
    expect(log.chunks().slice(0, -1)).toEqual([]);
  });

  it('trim(cap) takes the buffer\'s oldest out of it, so that a buffer no core takes stays bounded', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(0, 10), true);
    log.settle([2, 3]);
    log.trim(4, true);
    expect(log.open.columns.idCounters).toEqual([6, 7, 8, 9]);
    expect(log.size).toBe(4);
  });

  it('drop(n) takes the buffer\'s first n events out unposted, keeping what the rest had settled', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(0, 6), true);
    log.settle([1, 2, 4, 5]);
    expect(log.drop(3)).toEqual({ idMs: [0, 1, 2], idCounters: [0, 1, 2] });
    expect(log.open.columns.idCounters).toEqual([3, 4, 5]);
    expect(log.size).toBe(2);
    expect(live(log)).toEqual([3, 5]);
  });

  it('clear() forgets everything', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    push(log, range(0, 3));
    push(log, range(3, 5), true);
    log.clear();
    log.settle([0, 3]);
    expect(log.size).toBe(0);
    expect(log.chunks()).toEqual([{ columns: createColumns(TEST_ID_TAIL), settled: [], done: 0 }]);
  });
});

describe('appendEvent(columns, …fields)', () => {
  it('starts a run only when a shared field changes', () => {
    const columns = createColumns(TEST_ID_TAIL);
    for (const e of [event(0), event(1), event(2)]) add(columns, e);
    expect(columns.runs).toHaveLength(1);
    expect([0, 1, 2].map((i) => idOf(columns, i))).toEqual([0, 1, 2].map((i) => event(i).id));
    expect(columns.idCounters).toEqual([50, 51, 52]);
    const more = createColumns(TEST_ID_TAIL);
    for (const e of mixed()) add(more, e);
    expect(more.runs.map((r) => r.start)).toEqual([0, 2, 3, 4, 5]);
  });

  it('keeps every field: the facade and the worker make the same events back', () => {
    const columns = createColumns(TEST_ID_TAIL);
    for (const e of mixed()) add(columns, e);
    const cloned = structuredClone(columns);
    expect(expandColumns(columns)).toEqual(mixed());
    expect(expandColumns(cloned)).toEqual(mixed());
    expect(expandColumns(cloned)[4]!.previousId).toBe('anon');
  });
});

describe('liveColumns(chunks) over several chunks', () => {
  it('keeps the unsettled events in order, with their runs', () => {
    const log = createUnackedLog(TEST_ID_TAIL);
    mixed().forEach((e, i) => {
      add(log.open.columns, e);
      if (i === 2) log.seal();
    });
    log.settle([51, 52, 55, 56]);
    expect(expandColumns(liveColumns(log.chunks()))).toEqual(mixed().filter((e) => e.id !== event(1).id && e.id !== event(5).id));
  });
});

describe('sliceColumns(columns, from, to)', () => {
  it('keeps the events from … to − 1 with the runs that reach into them', () => {
    const columns = createColumns(TEST_ID_TAIL);
    for (const e of mixed()) add(columns, e);
    expect(expandColumns(sliceColumns(columns, 1, 4))).toEqual(mixed().slice(1, 4));
    expect(expandColumns(sliceColumns(columns, 4, 6))).toEqual(mixed().slice(4));
    expect(sliceColumns(columns, 3, 3)).toEqual(createColumns(TEST_ID_TAIL));
  });
});
