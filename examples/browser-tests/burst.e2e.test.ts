/**
 * A 10,000-event burst, tracked in one loop (one task), arrives complete: exactly 10,000 distinct
 * event ids in the database, every one from the burst, each index once. With the default
 * maxQueueSize (1,000), the newest 1,000 arrive and the other 9,000 are reported to `onDiscard`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type DiscardsWindow, type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents, waitUntil } from '../../test-support/browser/harness.js';

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

  it('with the default maxQueueSize keeps the newest 1,000 and reports the oldest 9,000 to onDiscard, each once', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/burst-defaults.html', {
        config: pageConfig(env.server.url, project, { debug: false }),
        recordDiscards: true,
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker', queueSize: 0 });

      const run = runId();
      await page.evaluate(({ r, n }) => (window as unknown as HarnessWindow).harness.trackMany('burst', n, r), { r: run, n: BURST });
      await waitForEvents(env.server.store, project.id, 'burst', 1_000, 60_000);
      await waitUntil('the queue to be empty', () => page.evaluate(() => (window as unknown as HarnessWindow).harness.queueSize() === 0));
      await waitUntil('9,000 reported discards', () =>
        page.evaluate(() => (window as unknown as DiscardsWindow).discards.reduce((n, d) => n + d.n, 0) >= 9_000),
      );

      const rows = await readEvents(env.server.store, project.id);
      expect(rows.map((row) => row.properties.i).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 1_000 }, (_, k) => 9_000 + k));
      const discards = await page.evaluate(() => (window as unknown as DiscardsWindow).discards);
      expect(new Set(discards.map((d) => d.reason))).toEqual(new Set(['overflow']));
      const dropped = discards.flatMap((d) => d.ids);
      expect(dropped).toHaveLength(9_000);
      expect(new Set(dropped).size).toBe(9_000);
      // The oldest: every dropped id (UUIDv7, creation order) sorts before every stored one.
      const stored = rows.map((row) => row.eventId).sort();
      expect(dropped.every((id) => id < stored[0]!)).toBe(true);
      expect(new Set([...dropped, ...stored].map((id) => id.slice(-8))).size).toBe(1);

      const stats = await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats());
      expect(stats).toMatchObject({ mode: 'worker', queueSize: 0, discarded: 9_000, sent: 1_000, restarts: 0 });
    } finally {
      await context.close();
    }
  });
});
