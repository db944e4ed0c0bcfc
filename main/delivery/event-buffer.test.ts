import { describe, expect, it } from 'vitest';
import { expandColumns } from '../../protocol/event-model/event-columns.js';
import type { AnalyticsEvent, EventContext } from '../../protocol/event-model/analytics-event.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import { formatEventId } from '../../protocol/event-model/event-id.js';
import { TEST_ID_TAIL, parseEventId } from '../../test-support/worker/delivery-fakes.js';
import { appendEvent, createColumns, idsOf, sliceColumns } from './event-buffer.js';
import { filterColumns } from './mirror-columns.js';

/** Appends an event object, field by field, as the facade's funnel does. */
function add(columns: EventColumns, e: AnalyticsEvent): void {
  const { ms, counter } = parseEventId(e.id);
  appendEvent(columns, ms, counter, e.timestamp, e.type, e.event, e.properties, e.userId, e.anonymousId, e.sessionId, e.context, e.previousId);
}

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

describe('add(columns, event)', () => {
  it('starts a run only when a shared field changes', () => {
    const columns = createColumns(TEST_ID_TAIL);
    for (const e of [event(0), event(1), event(2)]) add(columns, e);
    expect(columns.runs).toHaveLength(1);
    expect(idsOf(columns)).toEqual([0, 1, 2].map((i) => event(i).id));
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

describe('filterColumns(chunks, keep)', () => {
  it('keeps the accepted events of several chunks in order, with their runs', () => {
    const a = createColumns(TEST_ID_TAIL);
    const b = createColumns(TEST_ID_TAIL);
    mixed().forEach((e, i) => add(i < 3 ? a : b, e));
    const kept = filterColumns([a, b], (counter, n) => counter !== 51 && n !== 5);
    expect(expandColumns(kept)).toEqual(mixed().filter((e) => e.id !== event(1).id && e.id !== event(5).id));
    expect(filterColumns([a, b], () => false)).toEqual(createColumns(TEST_ID_TAIL));
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
