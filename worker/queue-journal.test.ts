import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDeliveryCore } from './delivery-core.js';
import { createIndexedDbJournal } from './queue-journal.js';
import type { QueueJournal } from '../protocol/worker/core-deps.js';
import { type Reply, createFakeFetch, idsOf, postOf, testConfig, uuidEvents as makeEvents } from '../test-support/worker/delivery-fakes.js';
import type { AnalyticsEvent } from '../protocol/event-model/analytics-event.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A journal in a Map: what the IndexedDB one does, without IndexedDB. */
function memoryJournal(initial: AnalyticsEvent[] = []) {
  const stored = new Map(initial.map((e) => [e.id, e]));
  const state = { closed: false };
  const journal: QueueJournal = {
    load: async () => [...stored.values()],
    append: (events) => events.forEach((e) => stored.set(e.id, e)),
    remove: (ids) => ids.forEach((id) => stored.delete(id)),
    clear: () => stored.clear(),
    close: async () => void (state.closed = true),
  };
  return { journal, stored, state };
}

function setup(journal: QueueJournal, script: Reply[] = []) {
  const fake = createFakeFetch(script);
  const core = createDeliveryCore(testConfig({ persistQueue: true }), { fetch: fake.fetch, journal, random: () => 0 });
  return { core, fake };
}

describe('delivery core with a queue journal (persistQueue)', () => {
  it('loads the journal on start and sends its events before newer ones', async () => {
    const { journal } = memoryJournal(makeEvents(2, 100));
    const { core, fake } = setup(journal);
    core.receive(postOf(makeEvents(1)));
    const result = core.flush(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(await result).toEqual({ ok: true, sent: 3 });
    expect(idsOf(fake.requests[0]!)).toEqual([...makeEvents(2, 100), ...makeEvents(1)].map((e) => e.id));
  });

  it('counts the restored events, which the facade does not hold, in its status until they are sent', async () => {
    const { journal } = memoryJournal(makeEvents(2, 100));
    const { core, fake } = setup(journal);
    const restored: number[] = [];
    core.onMessage((message) => void (message.t === 'status' && restored.push(message.restored)));
    fake.state.hold = true;
    await vi.advanceTimersByTimeAsync(0);
    expect(restored.at(-1)).toBe(2);
    core.receive(postOf(makeEvents(1)));
    fake.state.hold = false;
    fake.release();
    expect(await core.flush(0)).toEqual({ ok: true, sent: 3 });
    await vi.advanceTimersByTimeAsync(0);
    expect(restored.at(-1)).toBe(0);
  });

  it('appends enqueued events and removes them when acknowledged', async () => {
    const { journal, stored } = memoryJournal();
    const { core, fake } = setup(journal);
    fake.state.hold = true;
    await vi.advanceTimersByTimeAsync(0);
    core.receive(postOf(makeEvents(3)));
    expect([...stored.keys()]).toEqual(makeEvents(3).map((e) => e.id));
    const result = core.flush(2);
    await vi.advanceTimersByTimeAsync(0);
    fake.state.hold = false;
    fake.release();
    expect(await result).toEqual({ ok: true, sent: 3 });
    expect(stored.size).toBe(0);
  });

  it('removes discarded events and clears with clearQueue()', async () => {
    const { journal, stored } = memoryJournal();
    const { core } = setup(journal, [{ status: 400, body: { error: 'bad', code: 'INVALID_BATCH' } }]);
    await vi.advanceTimersByTimeAsync(0);
    core.receive(postOf(makeEvents(20)));
    await vi.advanceTimersByTimeAsync(0);
    expect(stored.size).toBe(0);
    core.receive(postOf(makeEvents(1, 20)));
    expect(stored.size).toBe(1);
    await core.clear();
    expect(stored.size).toBe(0);
  });

  it('keeps events it could not send in the journal and closes it on shutdown', async () => {
    const { journal, stored, state } = memoryJournal();
    const { core } = setup(journal, Array<Reply>(10).fill('network-error'));
    await vi.advanceTimersByTimeAsync(0);
    core.receive(postOf(makeEvents(2)));
    const done = core.shutdown(1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    await done;
    expect(stored.size).toBe(2);
    expect(state.closed).toBe(true);
  });

  it('starts sending without the journal when loading hangs', async () => {
    const hanging: QueueJournal = { ...memoryJournal().journal, load: () => new Promise(() => {}) };
    const { core, fake } = setup(hanging);
    core.receive(postOf(makeEvents(20)));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(fake.requests).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('createIndexedDbJournal', () => {
  it('returns undefined where IndexedDB does not exist (Node)', () => {
    expect(createIndexedDbJournal({ name: 'q', log: () => {} })).toBeUndefined();
  });
});
