/**
 * Sustained load, as a leak detector and a backpressure check, never a speed check: figures
 * (events/s, p99, memory) are printed, not asserted.
 *
 * 1. A real server process takes closed-loop load (as fast as it answers) for LOAD_SECONDS
 *    (default 15) after a warm-up; its RSS, sampled from /proc, must stay within 200 MB of the
 *    warmed-up baseline; no answer but 200 or the documented 503 with Retry-After; every
 *    acknowledged event stored. LOAD_STORES=sqlite,postgres (default sqlite) picks the stores.
 * 2. An in-process server with a tiny write queue (`maxPendingItems`) and a slowed store must
 *    refuse with 503 `STORAGE_UNAVAILABLE` and `Retry-After`, store every acknowledged event, never
 *    half of a refused batch, and everything once refused batches are resent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadResult, percentile, readRssBytes, sampleRss, startLoad } from '../../test-support/load-generator.js';
import { silentLogger } from '../logger.js';
import { serve } from '../serve.js';
import type { EventStore } from '../store/event-store.js';
import { buildCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { type StoreKind, createTestProject, openTestStore } from '../../test-support/server/test-server.js';
import { createCliProject, dbArgs, envNumber, exitWithin, freshLocation, report, sleep } from '../../test-support/server/reliability-support.js';

const LOAD_SECONDS = envNumber('LOAD_SECONDS', 15);
const WARMUP_SECONDS = envNumber('LOAD_WARMUP_SECONDS', 3);
const CONCURRENCY = envNumber('LOAD_CONCURRENCY', 16);
const MAX_GROWTH_BYTES = 200 * 1024 * 1024;
const STORES = (process.env.LOAD_STORES ?? 'sqlite').split(',').filter((k): k is StoreKind => k === 'sqlite' || k === 'postgres');

const MB = (bytes: number) => bytes / 1024 / 1024;

function summary(r: LoadResult) {
  return {
    seconds: r.durationMs / 1000,
    requests: r.requests,
    acknowledged: r.acknowledged.length,
    eventsPerSec: r.acknowledged.length / (r.durationMs / 1000),
    p50ms: percentile(r.latenciesMs, 50),
    p99ms: percentile(r.latenciesMs, 99),
    statuses: JSON.stringify(r.statuses),
  };
}

describe.each(STORES)('sustained load on a server process, on %s', (kind) => {
  let cli: string;
  let db: Awaited<ReturnType<typeof freshLocation>>;
  beforeAll(async () => {
    cli = await buildCli();
    db = await freshLocation(kind);
  });
  afterAll(() => db.dispose());

  it(
    `holds ${LOAD_SECONDS} s of load without a leak, with only 200 or 503 + Retry-After, storing every acknowledged event`,
    { timeout: (LOAD_SECONDS + WARMUP_SECONDS + 60) * 1000 },
    async () => {
      const project = await createCliProject(cli, db.location);
      const server = await startServerProcess(cli, ['--no-rate-limit', ...dbArgs(db.location)]);
      const pid = server.child.pid as number;
      const target = { url: server.url, projectId: project.projectId, writeKey: project.apiKey, concurrency: CONCURRENCY };
      let warm: LoadResult;
      let main: LoadResult;
      let samples: number[];
      const startRss = readRssBytes(pid) ?? 0;
      let baseline = 0;
      try {
        warm = await startLoad({ ...target, durationMs: WARMUP_SECONDS * 1000, runId: `warm-${kind}` }).done;
        await sleep(200);
        baseline = readRssBytes(pid) ?? 0;
        const sampler = sampleRss(pid, 250);
        main = await startLoad({ ...target, durationMs: LOAD_SECONDS * 1000, runId: `load-${kind}` }).done;
        samples = sampler.stop();
      } finally {
        server.child.kill('SIGTERM');
      }
      expect(await exitWithin(server, 15_000)).toBe(0);

      const peak = Math.max(...samples);
      report(`load/${kind}`, {
        ...summary(main),
        concurrency: CONCURRENCY,
        batch: 20,
        rssStartMB: MB(startRss),
        rssBaselineMB: MB(baseline),
        rssPeakMB: MB(peak),
        rssEndMB: MB(samples.at(-1) ?? 0),
        growthMB: MB(peak - baseline),
      });
      expect(baseline).toBeGreaterThan(0);
      expect(peak - baseline).toBeLessThan(MAX_GROWTH_BYTES);

      for (const r of [warm, main]) {
        expect(r.unanswered).toEqual([]);
        for (const status of Object.keys(r.statuses)) expect(['200', '503']).toContain(status);
        for (const refusal of r.refused) expect(refusal).toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE', retryAfter: expect.stringMatching(/^\d+$/) });
      }
      const rows = await openStoredRows(db.location);
      const stored = await rows.eventIds(project.projectId).finally(() => rows.close());
      const acknowledged = [...warm.acknowledged, ...main.acknowledged];
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      // Refused batches were not resent here, so nothing else is stored.
      expect(stored.size).toBe(acknowledged.length);
    },
  );
});

describe('the write-queue bound (maxPendingItems) under load', () => {
  let store: EventStore;
  let location: string;
  let dispose: () => Promise<void>;
  beforeAll(async () => {
    ({ store, location, dispose } = await openTestStore('sqlite'));
  });
  afterAll(() => dispose());

  /** The store with each commit slowed by 10 ms, so requests pile up behind it. */
  function slowed(inner: EventStore): EventStore {
    return Object.assign(Object.create(inner) as EventStore, {
      write: async (batch: Parameters<EventStore['write']>[0]) => {
        await sleep(10);
        return inner.write(batch);
      },
    });
  }

  it('refuses with 503 STORAGE_UNAVAILABLE and Retry-After, and stores all or nothing of each batch', { timeout: 60_000 }, async () => {
    const project = await createTestProject(store);
    const running = await serve({
      store: slowed(store),
      logger: silentLogger,
      port: 0,
      host: '127.0.0.1',
      writeQueue: { maxPendingItems: 60, retryAfterSeconds: 1 },
    });
    const target = { url: running.url, projectId: project.id, writeKey: project.writeKey, concurrency: 16 };
    let once: LoadResult;
    let resent: LoadResult;
    try {
      // First without resending: a refused batch is simply dropped by this client.
      once = await startLoad({ ...target, durationMs: 2000, runId: 'bound-once' }).done;
      // Then as the real client does: wait as told and resend until acknowledged.
      resent = await startLoad({ ...target, durationMs: 3000, runId: 'bound-resend', resendRefused: true, errorBackoffMs: 10 }).done;
    } finally {
      await running.close();
    }
    const rows = await openStoredRows(location);
    const stored = await rows.eventIds(project.id).finally(() => rows.close());
    report('write-queue bound', {
      onceRequests: once.requests,
      onceAcknowledged: once.acknowledged.length,
      onceRefusedBatches: once.refused.length,
      resentRequests: resent.requests,
      resentAcknowledged: resent.acknowledged.length,
      resentRefusals: resent.refused.length,
      stored: stored.size,
    });

    for (const r of [once, resent]) {
      expect(r.unanswered).toEqual([]);
      for (const status of Object.keys(r.statuses)) expect(['200', '503']).toContain(status);
      for (const refusal of r.refused) expect(refusal).toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE', retryAfter: '1' });
    }
    expect(once.refused.length).toBeGreaterThan(0);
    expect(resent.refused.length).toBeGreaterThan(0);

    const acknowledged = new Set([...once.acknowledged, ...resent.acknowledged]);
    expect([...acknowledged].filter((id) => !stored.has(id))).toEqual([]);
    // A refused batch that was not resent left nothing behind.
    for (const refusal of once.refused) expect(refusal.ids.filter((id) => stored.has(id))).toEqual([]);
    // Resent batches: stored whole once acknowledged, else (still waiting at the end) not at all.
    for (const refusal of resent.refused) {
      const n = refusal.ids.filter((id) => stored.has(id)).length;
      expect(n).toBe(refusal.ids.every((id) => acknowledged.has(id)) ? refusal.ids.length : 0);
    }
    expect(stored.size).toBe(acknowledged.size);
  });
});
