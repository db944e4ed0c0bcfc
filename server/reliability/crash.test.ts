/**
 * Crash safety, "a server killed mid-load loses no event that it acknowledged": a real
 * `service-analytics-server start` process under sustained load is killed with SIGKILL, restarted
 * on the same database, killed again, and so on for several cycles; every event it answered 200
 * for must be in the database. On SQLite and on PostgreSQL.
 *
 * Each kill lands at another moment of its cycle's load (half, once, one and a half times
 * CRASH_LOAD_MS, in turn), so that over the cycles it meets the writer in different states, and
 * every restart starts on a database left by a kill. CRASH_LOAD_MS (default 1000) scales the
 * cycles; CRASH_CYCLES (default 6) sets how many kills.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoadResult, percentile, startLoad } from '../../test-support/load-generator.js';
import { buildCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { STORE_KINDS, makeEvent } from '../../test-support/server/test-server.js';
import { createCliProject, dbArgs, envNumber, exitWithin, freshLocation, report, sleep, waitFor } from '../../test-support/server/reliability-support.js';

const LOAD_MS = envNumber('CRASH_LOAD_MS', 1000);
const CYCLES = envNumber('CRASH_CYCLES', 6);
/** How long cycle `n` runs under load before its kill. */
const killAfterMs = (n: number): number => LOAD_MS * (0.5 + (n % 3) / 2);

let cli: string;
beforeAll(async () => {
  cli = await buildCli();
});

describe.each(STORE_KINDS)('a server process killed with SIGKILL under load, on %s', (kind) => {
  let db: Awaited<ReturnType<typeof freshLocation>>;
  beforeAll(async () => {
    db = await freshLocation(kind);
  });
  afterAll(() => db.dispose());

  it('loses no event it acknowledged, across kills and restarts', { timeout: 60_000 + CYCLES * (2 * LOAD_MS + 10_000) }, async () => {
    const project = await createCliProject(cli, db.location);
    const args = ['--no-rate-limit', ...dbArgs(db.location)];
    const results: LoadResult[] = [];

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const server = await startServerProcess(cli, args);
      const load = startLoad({ url: server.url, projectId: project.projectId, writeKey: project.apiKey, concurrency: 8, runId: `crash-${kind}-${cycle}` });
      await sleep(killAfterMs(cycle));
      await waitFor(() => load.progress().acknowledged > 0, 20_000, 'the first acknowledged batch');
      server.child.kill('SIGKILL');
      await server.exited;
      results.push(await load.stop());
    }

    // A restart on the crashed database serves; then look into the database directly.
    const restarted = await startServerProcess(cli, args);
    try {
      const good = await fetch(`${restarted.url}/api/v1/events/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.apiKey}`, 'x-project-id': project.projectId },
        body: JSON.stringify([makeEvent()]),
      });
      expect(good.status).toBe(200);
    } finally {
      restarted.child.kill('SIGTERM');
    }
    expect(await exitWithin(restarted, 15_000)).toBe(0);

    const rows = await openStoredRows(db.location);
    const stored = await rows.eventIds(project.projectId).finally(() => rows.close());
    const acknowledged = results.flatMap((r) => r.acknowledged);
    const unanswered = results.flatMap((r) => r.unanswered.flat());
    const lost = acknowledged.filter((id) => !stored.has(id));
    const sent = results.reduce((n, r) => n + r.eventsSent, 0);
    const unansweredStored = unanswered.filter((id) => stored.has(id)).length;
    report(`crash/${kind}`, {
      kills: CYCLES,
      sent,
      acknowledged: acknowledged.length,
      stored: stored.size - 1,
      lost: lost.length,
      unanswered: unanswered.length,
      unansweredButStored: unansweredStored,
      p99ms: percentile(results.flatMap((r) => r.latenciesMs), 99),
    });
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    // Nothing is stored that was never sent: every stored id is one of ours (plus the probe).
    expect(stored.size - 1).toBeLessThanOrEqual(sent);
    // Only 200s, clean refusals, or no answer at all (the kill).
    for (const r of results) for (const status of Object.keys(r.statuses)) expect(['200', '503', 'none']).toContain(status);
  });
});
