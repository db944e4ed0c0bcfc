/**
 * A 10,000-event burst, tracked in one loop (one task), arrives complete: exactly 10,000 distinct
 * event ids in the database, every one from the burst, each index once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents, waitUntil } from '../../test-support/browser/harness.js';

const BURST = 10_000;

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('a burst of 10,000 track() calls', () => {
  it('puts exactly the 10,000 events in the database, once each', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      // maxQueueSize must hold the burst (the default, 1000, would drop the oldest by design).
      const page = await openAnalyticsPage(context, env.web, '/burst.html', {
        config: pageConfig(env.server.url, project, { maxQueueSize: 20_000, debug: false }),
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });

      const run = runId();
      await page.evaluate(({ r, n }) => (window as unknown as HarnessWindow).harness.trackMany('burst', n, r), { r: run, n: BURST });
      // No flush(): batching by size and the interval timer must deliver it all on their own.
      await waitForEvents(env.server.store, project.id, 'burst', BURST, 120_000);
      await waitUntil('the queue to be empty', () => page.evaluate(() => (window as unknown as HarnessWindow).harness.queueSize() === 0));

      const rows = await readEvents(env.server.store, project.id);
      expect(rows).toHaveLength(BURST);
      expect(new Set(rows.map((row) => row.eventId)).size).toBe(BURST);
      expect(rows.every((row) => row.eventType === 'burst' && row.properties.run === run)).toBe(true);
      const indices = new Set(rows.map((row) => row.properties.i));
      expect(indices.size).toBe(BURST);
      for (let i = 0; i < BURST; i++) expect(indices.has(i)).toBe(true);
      // The worker made the ids' text from the facade's numbers: UUIDv7s of one page (one random
      // end), in creation order.
      expect(rows.every((row) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(row.eventId))).toBe(true);
      expect(new Set(rows.map((row) => row.eventId.slice(-8))).size).toBe(1);
      const byId = [...rows].sort((a, b) => (a.eventId < b.eventId ? -1 : 1));
      expect(byId.map((row) => row.properties.i)).toEqual(Array.from({ length: BURST }, (_, i) => i));

      const stats = await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats());
      expect(stats).toMatchObject({ mode: 'worker', queueSize: 0, discarded: 0, restarts: 0 });
      expect(stats.sent).toBe(BURST);
    } finally {
      await context.close();
    }
  });
});
