import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore, WriteBatch, WriteResult } from './store/event-store.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../test-support/server/test-server.js';

/**
 * Wraps the real store so a test can hold commits back and count them. The store itself is real;
 * only the timing of its `write` is controlled.
 */
function gateWrites(store: EventStore) {
  const batches: WriteBatch[] = [];
  let release: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  let failNext = false;
  const write = store.write.bind(store);
  store.write = async (batch): Promise<WriteResult> => {
    batches.push(batch);
    await gate;
    if (failNext) {
      failNext = false;
      throw new Error('disk full');
    }
    return write(batch);
  };
  return {
    batches,
    close() {
      gate = new Promise<void>((resolve) => (release = resolve));
    },
    open: () => release(),
    failNextWrite() {
      failNext = true;
    },
  };
}

describe.each(STORE_KINDS)('group commit on %s', (kind) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('commits concurrent requests together and answers only after the commit', async () => {
    server = await startTestServer(kind, { writeQueue: { concurrency: 1 } });
    const gate = gateWrites(server.store);
    gate.close();
    const s = server;
    const first = s.postBatch([makeEvent()]);
    // Wait until the first commit is held, then send 20 more that must queue behind it.
    while (gate.batches.length === 0) await new Promise((r) => setTimeout(r, 5));
    let answered = 0;
    const rest = Array.from({ length: 20 }, () => s.postBatch([makeEvent(), makeEvent()]).then((r) => (answered++, r)));
    // Every request has been read and is waiting for the held commit: 1 + 20 × 2 events.
    while (s.running.app.writeQueue.depth() < 41) await new Promise((r) => setTimeout(r, 5));
    expect(answered).toBe(0);
    gate.open();
    const responses = await Promise.all([first, ...rest]);
    for (const res of responses) expect(res.status).toBe(200);
    // One held commit, then the 20 waiting requests in one group.
    expect(gate.batches.length).toBe(2);
    expect(gate.batches[1]?.events.length).toBe(40);
  });

  it('answers 503 STORAGE_UNAVAILABLE with Retry-After when the write queue is full, losing nothing it acknowledged', async () => {
    server = await startTestServer(kind, { writeQueue: { maxPendingItems: 10, concurrency: 1 } });
    const gate = gateWrites(server.store);
    gate.close();
    const s = server;
    const accepted = Array.from({ length: 5 }, () => [makeEvent(), makeEvent()]);
    const pending = accepted.map((batch) => s.postBatch(batch));
    while (s.running.app.writeQueue.depth() < 10) await new Promise((r) => setTimeout(r, 5));
    const refused = await s.postBatch([makeEvent()]);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    gate.open();
    for (const res of await Promise.all(pending)) expect(res.status).toBe(200);
    const stored = await s.store.queryEvents({ projectId: s.project.id, limit: 100 });
    expect(stored.events.map((e) => e.eventId).sort()).toEqual(accepted.flat().map((e) => e.event_id as string).sort());
  });

  it('answers 503 when the database refuses a commit, and stores the events on retry', async () => {
    server = await startTestServer(kind);
    const gate = gateWrites(server.store);
    gate.failNextWrite();
    const events = [makeEvent(), makeEvent()];
    const failed = await server.postBatch(events);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    const retried = await server.postBatch(events);
    expect(await retried.json()).toEqual({ success: true, processed: 2 });
    const stored = await server.store.queryEvents({ projectId: server.project.id, limit: 10 });
    expect(stored.events).toHaveLength(2);
  });

  /** Holds a first commit, then queues 20 requests of 2 events behind it; `check` runs while it is held. */
  async function behindHeldCommit(overlapMinItems: number, check: (gate: ReturnType<typeof gateWrites>) => Promise<void>) {
    server = await startTestServer(kind, { writeQueue: { concurrency: 2, overlapMinItems } });
    const gate = gateWrites(server.store);
    gate.close();
    const s = server;
    const first = s.postBatch([makeEvent()]);
    while (gate.batches.length === 0) await new Promise((r) => setTimeout(r, 5));
    const rest = Array.from({ length: 20 }, () => s.postBatch([makeEvent(), makeEvent()]));
    while (s.running.app.writeQueue.depth() < 41) await new Promise((r) => setTimeout(r, 5));
    await check(gate);
    gate.open();
    for (const res of await Promise.all([first, ...rest])) expect(res.status).toBe(200);
    expect((await s.store.queryEvents({ projectId: s.project.id, limit: 100 })).events).toHaveLength(41);
    return gate;
  }

  it('fewer items than the overlap threshold wait for the commit in flight, then go as one group', async () => {
    const gate = await behindHeldCommit(250, async (held) => {
      // Every request is queued; after the queue's scheduled turn has run, still only the held group has left.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(held.batches.length).toBe(1);
    });
    expect(gate.batches.map((b) => b.events.length)).toEqual([1, 40]);
  });

  it('as many items as the overlap threshold start a second group beside the one in flight', async () => {
    await behindHeldCommit(30, async (held) => {
      while (held.batches.length < 2) await new Promise((r) => setTimeout(r, 5));
      expect(held.batches[1]?.events.length).toBeGreaterThanOrEqual(30);
    });
  });
});
