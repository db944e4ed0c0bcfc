/**
 * Memory under sustained load (a soak): a real server process takes closed-loop load from
 * 127.0.0.1 for SOAK_SECONDS (default 60) in two halves, each on a fresh process: at full load
 * with no rate limit (the write path saturated, the write queue at or near its bound), then with a
 * per-address rate limit far below what the load sends (most requests refused with 429, the rest
 * stored). It stops by itself. Resident memory (RSS, from /proc) is printed before and after, and
 * asserted against a structural bound, never a time: after the warm-up, what the server can still
 * add is what its bounded structures hold when full, the write queue (DEFAULT_MAX_PENDING_ITEMS
 * events) and the requests in flight (one body each, at most the batch body limit), with a
 * generous allowance per queued event (BYTES_PER_QUEUED_EVENT), and on SQLite the page caches. A
 * leak grows past that bound in a long enough soak; a bounded server cannot.
 *
 * SOAK_SECONDS, SOAK_CONCURRENCY and SOAK_STORES=sqlite,postgres (default sqlite) tune it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../protocol/index.js';
import { type LoadResult, readRssBytes, sampleRss, startLoad } from '../../test-support/load-generator.js';
import { buildCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { createCliProject, dbArgs, envNumber, exitWithin, freshLocation, report, sleep } from '../../test-support/server/reliability-support.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import type { StoreKind } from '../../test-support/server/test-server.js';
import { DEFAULT_MAX_PENDING_ITEMS } from '../write-queue.js';

const SOAK_SECONDS = envNumber('SOAK_SECONDS', 60);
const WARMUP_SECONDS = 3;
const CONCURRENCY = envNumber('SOAK_CONCURRENCY', 16);
const STORES = (process.env.SOAK_STORES ?? 'sqlite').split(',').filter((k): k is StoreKind => k === 'sqlite' || k === 'postgres');

/**
 * Memory one queued event may hold, all copies together: the load's events are well under 1 KB of
 * JSON, held parsed, as a stored event with its report columns, and encoded for the store.
 */
const BYTES_PER_QUEUED_EVENT = 4096;
/**
 * SQLite's page caches fill as the tables grow, up to their `cache_size` of 32,000 KiB, on the
 * reading and on the writing connection (`sqlite-database.ts`, `sqlite-writer.ts`).
 */
const SQLITE_PAGE_CACHES = 2 * 32_000 * 1024;
/** What the bounded structures hold when full; see the header. */
const structuralBound = (kind: StoreKind): number =>
  DEFAULT_MAX_PENDING_ITEMS * BYTES_PER_QUEUED_EVENT + CONCURRENCY * LIMITS.maxBatchBodyBytes + (kind === 'sqlite' ? SQLITE_PAGE_CACHES : 0);

const MB = (bytes: number) => Math.round(bytes / 1024 / 1024);

interface Half {
  name: string;
  args: string[];
  /** Answers other than 200 this half may give, each with Retry-After. */
  refusals: string[];
}

const HALVES: Half[] = [
  { name: 'full load, no rate limit', args: ['--no-rate-limit'], refusals: ['503'] },
  { name: 'beyond the rate limit', args: ['--rate-limit-ip', '100:200', '--rate-limit-project', 'off'], refusals: ['429', '503'] },
];

describe.each(STORES)('memory of a server process under sustained load, on %s', (kind) => {
  let cli: string;
  let db: Awaited<ReturnType<typeof freshLocation>>;
  beforeAll(async () => {
    cli = await buildCli();
    db = await freshLocation(kind);
  });
  afterAll(() => db.dispose());

  it.each(HALVES)(
    `stays within the bound of its write queue and requests in flight: $name, ${SOAK_SECONDS / 2} s`,
    { timeout: (SOAK_SECONDS / 2 + WARMUP_SECONDS + 90) * 1000 },
    async (half) => {
      const project = await createCliProject(cli, db.location, `Soak ${half.name}`);
      const server = await startServerProcess(cli, [...half.args, ...dbArgs(db.location)]);
      const pid = server.child.pid as number;
      const target = { url: server.url, projectId: project.projectId, writeKey: project.apiKey, concurrency: CONCURRENCY };
      const startRss = readRssBytes(pid) ?? 0;
      let baseline = 0;
      let warm: LoadResult;
      let main: LoadResult;
      let samples: number[];
      try {
        warm = await startLoad({ ...target, durationMs: WARMUP_SECONDS * 1000, runId: `soak-warm-${kind}-${half.refusals.length}` }).done;
        await sleep(200);
        baseline = readRssBytes(pid) ?? 0;
        const sampler = sampleRss(pid, 500);
        main = await startLoad({ ...target, durationMs: (SOAK_SECONDS / 2) * 1000, runId: `soak-${kind}-${half.refusals.length}` }).done;
        samples = sampler.stop();
      } finally {
        server.child.kill('SIGTERM');
      }
      expect(await exitWithin(server, 30_000)).toBe(0);

      const peak = Math.max(...samples);
      const end = samples.at(-1) ?? 0;
      report(`soak/${kind}/${half.name}`, {
        seconds: main.durationMs / 1000,
        acknowledgedEvents: main.acknowledged.length,
        statuses: JSON.stringify(main.statuses),
        rssStartMB: MB(startRss),
        rssAfterWarmupMB: MB(baseline),
        // Where it went over the soak: a leak keeps climbing, a bounded server levels off.
        rssQuartersMB: [0.25, 0.5, 0.75, 1].map((q) => MB(samples[Math.min(samples.length - 1, Math.floor(q * (samples.length - 1)))] ?? 0)).join(' → '),
        rssPeakMB: MB(peak),
        rssEndMB: MB(end),
        boundMB: MB(structuralBound(kind)),
      });
      expect(baseline).toBeGreaterThan(0);
      expect(peak - baseline).toBeLessThanOrEqual(structuralBound(kind));

      for (const r of [warm, main]) {
        expect(r.unanswered).toEqual([]);
        for (const status of Object.keys(r.statuses)) expect(['200', ...half.refusals]).toContain(status);
        for (const refusal of r.refused) expect(refusal.retryAfter).toMatch(/^\d+$/);
      }
      // Nothing acknowledged was lost on the way.
      const rows = await openStoredRows(db.location);
      const stored = await rows.eventIds(project.projectId).finally(() => rows.close());
      const acknowledged = [...warm.acknowledged, ...main.acknowledged];
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      expect(stored.size).toBe(acknowledged.length);
    },
  );
});
