/**
 * Delivery under faults against a real `node:http` server: every event arrives exactly once
 * (docs/decisions.md, "Idempotency and deduplication"). Real timers with tiny retry delays; the
 * test waits for outcomes, never for time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDeliveryCore } from './delivery-core.js';
import { type Reply, type ServerRequest, type TestServer, postOf, uuidEvents, startTestServer, testConfig } from '../test-support/worker/delivery-fakes.js';
import type { DeliveryCore } from '../protocol/worker/worker-contract.js';

let server: TestServer | undefined;
let core: DeliveryCore | undefined;
afterEach(async () => {
  await core?.shutdown(0);
  await server?.close();
});

describe('createDeliveryCore against a flaky node:http server', () => {
  it('delivers every event exactly once through 5xx, dropped connections and 429', async () => {
    const accepted: string[] = [];
    const faults: Reply[] = [
      { status: 500, body: { error: 'Internal error', code: 'INTERNAL_ERROR' } },
      'network-error',
      { status: 429, headers: { 'retry-after': '0' }, body: { error: 'slow down', code: 'RATE_LIMITED' } },
      { status: 503, headers: { 'retry-after': '0' }, body: { error: 'busy', code: 'STORAGE_UNAVAILABLE' } },
    ];
    let count = 0;
    server = await startTestServer((request: ServerRequest) => {
      count += 1;
      // Every third request fails, cycling through the kinds of fault.
      if (count % 3 === 0) return faults[(count / 3) % faults.length]!;
      const batch = request.body as Array<{ event_id: string }>;
      for (const event of batch) accepted.push(event.event_id);
      return { status: 200, body: { success: true, processed: batch.length } };
    });
    core = createDeliveryCore(
      testConfig({ endpoint: server.url, compress: true, retryDelay: 1, retryAttempts: 10, maxQueueSize: 5_000 }),
      { random: () => 0 },
    );
    // Stamped with the real clock these tests run on: a 429 gives up on events older than a day
    // (MAX_DEFERRAL_AGE_MS), which the fixed fixture date soon is.
    const events = uuidEvents(2_000).map((e) => ({ ...e, timestamp: Date.now() }));
    for (let i = 0; i < events.length; i += 100) core.receive(postOf(events.slice(i, i + 100)));

    // Retry flush until it succeeds: a failed flush leaves its events queued (README, "Using the
    // client library").
    let result = await core.flush(events.length - 1);
    while (!result.ok) result = await core.flush(events.length - 1);

    expect(accepted).toHaveLength(events.length);
    expect(new Set(accepted).size).toBe(events.length);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: events.length, discarded: 0 });
    expect(server.requests.some((r) => r.gzipped)).toBe(true);
  });
});
