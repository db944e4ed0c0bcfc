/**
 * Graceful shutdown: SIGTERM to a real server process under load. Every request that got an
 * answer got 200 or a clean refusal, every acknowledged event is stored, and the process exits
 * with code 0 within 15 s (its grace period for in-flight requests is 10 s). On SQLite and on
 * PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { percentile, startLoad } from '../../test-support/load-generator.js';
import { buildCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { STORE_KINDS } from '../../test-support/server/test-server.js';
import { createCliProject, dbArgs, exitWithin, freshLocation, report, sleep, waitFor } from '../../test-support/server/reliability-support.js';

const EXIT_BOUND_MS = 15_000;

let cli: string;
beforeAll(async () => {
  cli = await buildCli();
});

describe.each(STORE_KINDS)('SIGTERM to a server process under load, on %s', (kind) => {
  let db: Awaited<ReturnType<typeof freshLocation>>;
  beforeAll(async () => {
    db = await freshLocation(kind);
  });
  afterAll(() => db.dispose());

  it('finishes in-flight requests, loses nothing acknowledged, and exits 0 within 15 s', { timeout: 60_000 }, async () => {
    const project = await createCliProject(cli, db.location);
    const server = await startServerProcess(cli, ['--no-rate-limit', ...dbArgs(db.location)]);
    const load = startLoad({ url: server.url, projectId: project.projectId, writeKey: project.apiKey, concurrency: 8, runId: `term-${kind}` });
    await sleep(1500);
    await waitFor(() => load.progress().acknowledged > 0, 20_000, 'the first acknowledged batch');

    const termAt = performance.now();
    server.child.kill('SIGTERM');
    const code = await exitWithin(server, EXIT_BOUND_MS);
    const exitMs = performance.now() - termAt;
    const result = await load.stop();

    const rows = await openStoredRows(db.location);
    const stored = await rows.eventIds(project.projectId).finally(() => rows.close());
    const lost = result.acknowledged.filter((id) => !stored.has(id));
    report(`shutdown/${kind}`, {
      exitCode: String(code),
      exitMs,
      requests: result.requests,
      acknowledged: result.acknowledged.length,
      stored: stored.size,
      lost: lost.length,
      refused: result.refused.length,
      unansweredRequests: result.unanswered.length,
      unansweredBy: JSON.stringify(result.errors),
      p99ms: percentile(result.latenciesMs, 99),
    });
    expect(code).toBe(0);
    expect(server.log()).toContain('"msg":"stopped"');
    expect(lost).toEqual([]);
    // Answered requests got 200 or a clean, documented refusal; the rest found the port closed.
    for (const status of Object.keys(result.statuses)) expect(['200', '503', 'none']).toContain(status);
    for (const r of result.refused) expect(r).toMatchObject({ status: 503, code: 'STORAGE_UNAVAILABLE', retryAfter: expect.any(String) });
    // A refused or unanswered batch is never half stored.
    for (const batch of [...result.unanswered, ...result.refused.map((r) => r.ids)]) {
      const n = batch.filter((id) => stored.has(id)).length;
      expect([0, batch.length]).toContain(n);
    }
  });
});
