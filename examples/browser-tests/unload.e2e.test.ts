/**
 * Events tracked just before the page goes away arrive (DESIGN.md "Unload is the main thread's
 * job"): on `pagehide` the facade sends what the server has not acknowledged by `sendBeacon` (the
 * beacon form of the batch endpoint); whatever the worker also managed to send is deduplicated by
 * event id. The client is set so that the worker would not send these events on its own (a batch
 * size above N, a long interval): without the unload path they would be lost.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from './environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents } from './harness.js';

const N = 60;

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('events tracked right before the page goes away', () => {
  const cases: Array<{ name: string; leave: (page: Page) => Promise<unknown> }> = [
    { name: 'the page is closed', leave: (page) => page.close({ runBeforeUnload: true }) },
    { name: 'the page navigates away', leave: (page) => page.goto('about:blank') },
  ];

  for (const { name, leave } of cases) {
    it(`all arrive, once each, when ${name}`, async () => {
      const project = await env.server.createProject();
      const context = await env.browser.newContext();
      try {
        const page = await openAnalyticsPage(context, env.web, '/unload.html', {
          config: pageConfig(env.server.url, project, { batchSize: 100, flushInterval: 600_000 }),
        });
        expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });

        const run = runId();
        await page.evaluate(({ r, n }) => (window as unknown as HarnessWindow).harness.trackMany('last_moment', n, r), { r: run, n: N });
        await leave(page);

        await waitForEvents(env.server.store, project.id, 'last_moment', N);
        const rows = await readEvents(env.server.store, project.id);
        expect(rows).toHaveLength(N);
        expect(new Set(rows.map((row) => row.eventId)).size).toBe(N);
        expect(rows.every((row) => row.eventType === 'last_moment' && row.properties.run === run)).toBe(true);
        expect(new Set(rows.map((row) => row.properties.i)).size).toBe(N);
      } finally {
        await context.close();
      }
    });
  }
});
