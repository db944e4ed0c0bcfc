import { describe, expect, it } from 'vitest';
import { createEventQueue } from './queue.js';
import { makeEvents } from '../test-support/worker/delivery-fakes.js';

const ids = (events: Array<{ id: string }>) => events.map((e) => e.id);
const retryAfter = (ms: number) => () => ms;

// One test per transition of a queued event (queued, sending, removed, discarded), named after the
// transition; the rules are in docs/decisions.md, "Client delivery", and docs/protocol.md, "How the
// bundled client uses the protocol".
describe('queue: the queued-event lifecycle (docs/decisions.md, "Client delivery")', () => {
  it('(none) → queued, retries 0 on a tracking call', () => {
    const queue = createEventQueue(1000);
    const [event] = makeEvents(1);
    const { added, dropped } = queue.enqueue([event!]);
    expect(added).toEqual([event]);
    expect(dropped).toEqual([]);
    expect(queue.size).toBe(1);
    const [entry] = queue.takeBatch(0, 20);
    expect(entry).toMatchObject({ event, retries: 0, timestamp: event!.timestamp });
  });

  it('queued → sending when a batch is taken: at most batchSize, oldest first, split into batches', () => {
    const queue = createEventQueue(1000);
    const events = makeEvents(45);
    queue.enqueue(events);
    const first = queue.takeBatch(0, 20);
    const second = queue.takeBatch(0, 20);
    const third = queue.takeBatch(0, 20);
    expect(first.map((e) => e.event)).toEqual(events.slice(0, 20));
    expect(second.map((e) => e.event)).toEqual(events.slice(20, 40));
    expect(third.map((e) => e.event)).toEqual(events.slice(40));
    expect(first.every((e) => e.inFlight)).toBe(true);
    // Events being sent are not taken twice.
    expect(queue.takeBatch(0, 20)).toEqual([]);
  });

  it('sending → removed on response 200', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(3));
    const batch = queue.takeBatch(0, 20);
    expect(ids(queue.ack(batch.map((e) => e.event.id)))).toEqual(['evt-000000', 'evt-000001', 'evt-000002']);
    expect(queue.size).toBe(0);
  });

  it('sending → queued, retries increased by 1 on network failure or 5xx while retries are below retryAttempts', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    const batch = queue.takeBatch(0, 20);
    const attempts: number[] = [];
    const result = queue.fail(batch.map((e) => e.event.id), 5_000, (attempt) => {
      attempts.push(attempt);
      return 1000 * 2 ** (attempt - 1);
    });
    expect(result).toEqual({ requeued: 2, discarded: [] });
    expect(attempts).toEqual([1, 1]);
    expect(queue.size).toBe(2);
    // Re-queued after the wait: not before it, then with retries 1.
    expect(queue.takeBatch(5_999, 20)).toEqual([]);
    expect(queue.nextRetryAt(5_000)).toBe(6_000);
    const again = queue.takeBatch(6_000, 20);
    expect(again.map((e) => e.retries)).toEqual([1, 1]);
  });

  it('sending → discarded on failure when attempts are used up', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(1));
    const decide = (attempt: number) => (attempt > 3 ? ('give-up' as const) : 0);
    let discarded: string[] = [];
    let sends = 0;
    for (;;) {
      const batch = queue.takeBatch(0, 20);
      if (batch.length === 0) break;
      sends += 1;
      discarded = ids(queue.fail(batch.map((e) => e.event.id), 0, decide).discarded);
    }
    expect(sends).toBe(4);
    expect(discarded).toEqual(['evt-000000']);
    expect(queue.size).toBe(0);
  });

  it('sending → not retried on a 4xx response (discarded)', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    const batch = queue.takeBatch(0, 20);
    expect(ids(queue.reject(batch.map((e) => e.event.id)))).toEqual(['evt-000000', 'evt-000001']);
    expect(queue.size).toBe(0);
    expect(queue.takeBatch(Number.MAX_SAFE_INTEGER, 20)).toEqual([]);
  });

  it('queued → oldest event removed when the queue size goes above maxQueueSize', () => {
    const queue = createEventQueue(3);
    queue.enqueue(makeEvents(3));
    const { added, dropped } = queue.enqueue(makeEvents(2, 3));
    expect(ids(added)).toEqual(['evt-000003', 'evt-000004']);
    expect(ids(dropped)).toEqual(['evt-000000', 'evt-000001']);
    expect(queue.ids()).toEqual(['evt-000002', 'evt-000003', 'evt-000004']);
  });

  it('queued → discarded on clearQueue()', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(3));
    queue.takeBatch(0, 1);
    expect(queue.clear()).toHaveLength(3);
    expect(queue.size).toBe(0);
  });
});

describe('queue details', () => {
  it('never drops an event that is being sent to make room; the oldest waiting one goes', () => {
    const queue = createEventQueue(2);
    queue.enqueue(makeEvents(2));
    queue.takeBatch(0, 1); // evt-0 in flight
    expect(ids(queue.enqueue(makeEvents(1, 2)).dropped)).toEqual(['evt-000001']);
    expect(queue.ids()).toEqual(['evt-000000', 'evt-000002']);
  });

  it('keeps an event enqueued twice once (a replay after a worker restart)', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    expect(queue.enqueue(makeEvents(3)).added).toHaveLength(1);
    expect(queue.size).toBe(3);
  });

  it('keeps a failed event in its place, so order survives retries', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    const [first] = queue.takeBatch(0, 1);
    queue.fail([first!.event.id], 0, retryAfter(10));
    expect(queue.takeBatch(10, 20).map((e) => e.event.id)).toEqual(['evt-000000', 'evt-000001']);
  });

  it('takes nothing when fewer than `min` events are ready', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(19));
    expect(queue.takeBatch(0, 20, 20)).toEqual([]);
    queue.enqueue(makeEvents(1, 19));
    expect(queue.takeBatch(0, 20, 20)).toHaveLength(20);
  });

  it('expedite() lets waiting events go before their retry time', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(1));
    queue.fail(queue.takeBatch(0, 1).map((e) => e.event.id), 0, retryAfter(60_000));
    expect(queue.takeBatch(1, 20)).toEqual([]);
    queue.expedite(['evt-000000']);
    expect(queue.takeBatch(1, 20)).toHaveLength(1);
  });

  it('ignores the outcome of a request whose events were cleared meanwhile', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    const batch = queue.takeBatch(0, 20).map((e) => e.event.id);
    queue.clear();
    expect(queue.ack(batch)).toEqual([]);
    expect(queue.fail(batch, 0, retryAfter(1))).toEqual({ requeued: 0, discarded: [] });
    expect(queue.size).toBe(0);
  });
});

describe('queue.defer(ids, now, decide): the server asked to wait (429, 503 with Retry-After)', () => {
  it('sending → queued with retries unchanged and the wait given, counting deferrals in a row', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    const seen: Array<[number, number]> = [];
    const decide = (deferral: number, createdAt: number) => (seen.push([deferral, createdAt]), 30_000);
    const batch = queue.takeBatch(0, 20).map((e) => e.event.id);
    expect(queue.defer(batch, 1_000, decide)).toEqual({ requeued: 2, discarded: [] });
    expect(queue.takeBatch(30_999, 20)).toEqual([]);
    const again = queue.takeBatch(31_000, 20);
    expect(again.map((e) => [e.retries, e.deferrals])).toEqual([[0, 1], [0, 1]]);
    queue.defer(again.map((e) => e.event.id), 31_000, decide);
    expect(seen.map(([n]) => n)).toEqual([1, 1, 2, 2]);
    expect(seen[0]![1]).toBe(makeEvents(1)[0]!.timestamp);
  });

  it('never uses up retryAttempts: a hundred deferrals in a row lose nothing', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(3));
    const giveUpAfter3 = (attempt: number) => (attempt > 3 ? ('give-up' as const) : 0);
    for (let i = 0; i < 100; i++) {
      const result = queue.defer(queue.takeBatch(0, 20).map((e) => e.event.id), 0, () => 0);
      expect(result).toEqual({ requeued: 3, discarded: [] });
    }
    // A real failure afterwards still has its full budget: retries start from 0.
    const batch = queue.takeBatch(0, 20);
    expect(batch.map((e) => e.retries)).toEqual([0, 0, 0]);
    expect(queue.fail(batch.map((e) => e.event.id), 0, giveUpAfter3)).toEqual({ requeued: 3, discarded: [] });
    expect(queue.takeBatch(0, 20).map((e) => e.deferrals)).toEqual([0, 0, 0]);
  });

  it('discards the events `decide` gives up on (too old)', () => {
    const queue = createEventQueue(1000);
    queue.enqueue(makeEvents(2));
    const batch = queue.takeBatch(0, 20).map((e) => e.event.id);
    const oldest = makeEvents(1)[0]!.timestamp;
    const result = queue.defer(batch, 0, (_n, createdAt) => (createdAt === oldest ? 'give-up' : 5));
    expect(result.requeued).toBe(1);
    expect(ids(result.discarded)).toEqual(['evt-000000']);
    expect(queue.size).toBe(1);
  });
});
