/**
 * The delivery core with real timers and real HTTP through the seeded fault proxy
 * (`test-support/fault-proxy.ts`) in front of a recording `node:http` server: rate limiting never
 * costs an event, even with no retries left, and with every kind of fault each event is accepted
 * exactly once (the server side dedupes by id, as the real server does).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from '../test-support/fault-proxy.js';
import { createDeliveryCore } from './delivery-core.js';
import { type ServerRequest, type TestServer, postOf, uuidEvents, startTestServer, testConfig } from '../test-support/worker/delivery-fakes.js';
import type { DeliveryCore } from '../protocol/worker/worker-contract.js';

let server: TestServer | undefined;
let proxy: FaultProxy | undefined;
let core: DeliveryCore | undefined;
afterEach(async () => {
  await core?.shutdown(0);
  await proxy?.close();
  await server?.close();
  core = proxy = server = undefined;
});

/** A server that accepts every batch and remembers each event id, and how often it came. */
async function countingServer() {
  const seen = new Map<string, number>();
  const s = await startTestServer((request: ServerRequest) => {
    const batch = request.body as Array<{ event_id: string }>;
    for (const e of batch) seen.set(e.event_id, (seen.get(e.event_id) ?? 0) + 1);
    return { status: 200, body: { success: true, processed: batch.length } };
  });
  return { server: s, seen };
}

async function deliverAll(c: DeliveryCore, count: number): Promise<void> {
  // Stamped with the real clock these tests run on: a 429 gives up on events older than a day
  // (MAX_DEFERRAL_AGE_MS), which the fixed fixture date soon is.
  const events = uuidEvents(count).map((e) => ({ ...e, timestamp: Date.now() }));
  for (let i = 0; i < events.length; i += 50) c.receive(postOf(events.slice(i, i + 50)));
  // A failed flush leaves its events queued (README, "Using the client library"); flush again until
  // everything is accepted.
  for (let round = 0; round < 200; round++) {
    const result = await c.flush(count - 1);
    if (result.ok) return;
  }
  throw new Error('the events were never all accepted');
}

describe('createDeliveryCore through the fault proxy', () => {
  it('loses nothing to 429s though retryAttempts is 0: waiting as told uses up no attempt', async () => {
    const counting = await countingServer();
    server = counting.server;
    proxy = await startFaultProxy({ target: server.url, seed: 7, faultRate: 0.6, mix: { 'rate-limit': 1 }, retryAfterSeconds: 0 });
    core = createDeliveryCore(testConfig({ endpoint: proxy.url, retryAttempts: 0, retryDelay: 1, maxQueueSize: 5_000 }), { random: () => 0 });
    await deliverAll(core, 1_000);
    expect(proxy.counts()['rate-limit']).toBeGreaterThan(10);
    expect(counting.seen.size).toBe(1_000);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 1_000, discarded: 0 });
  });

  it('delivers every event exactly once through every kind of fault', async () => {
    const counting = await countingServer();
    server = counting.server;
    proxy = await startFaultProxy({ target: server.url, seed: 11, faultRate: 0.4, delayMs: [1, 30], retryAfterSeconds: 0 });
    core = createDeliveryCore(testConfig({ endpoint: proxy.url, retryAttempts: 20, retryDelay: 1, maxQueueSize: 5_000, compress: true }), { random: () => 0 });
    await deliverAll(core, 2_000);
    const counts = proxy.counts();
    for (const kind of ['status-500', 'status-502', 'status-503', 'rate-limit', 'drop-before', 'drop-after', 'delay'] as const) {
      expect(counts[kind], kind).toBeGreaterThan(0);
    }
    expect(counting.seen.size).toBe(2_000);
    // Resent after a lost answer ("drop-after"): the server saw those twice, and dedupe keeps one.
    const resent = [...counting.seen.values()].filter((n) => n > 1).length;
    console.log(`fault proxy delivery: ${JSON.stringify(counts)}; events received more than once: ${resent}`);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 2_000, discarded: 0 });
  });
});
