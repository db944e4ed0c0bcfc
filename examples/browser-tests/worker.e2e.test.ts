/**
 * The delivery core really runs in a Web Worker: the client reports `mode: 'worker'`, and the batch
 * requests that put the events in the database were made by the worker, not by the page (how that
 * is told apart: `request-origins.ts`).
 */
import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitUntil } from '../../test-support/browser/harness.js';
import { batchPosts, watchPageRequests, watchWorkerRequests } from '../../test-support/browser/request-origins.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('the client in Chromium', () => {
  it('sends its batches from the worker it started from the shipped worker.js', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext({ timezoneId: 'Europe/Paris' });
    try {
      const page = await openAnalyticsPage(context, env.web, '/worker.html', { config: pageConfig(env.server.url, project) });
      const stats = await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats());
      expect(stats).toMatchObject({ mode: 'worker', strategy: 'shipped-worker', restarts: 0 });

      const workerUrl = `${env.web.url}/dist/client/worker.js`;
      const workerRequests = await watchWorkerRequests(env.browser, (url) => url === workerUrl);
      const pageRequests = await watchPageRequests(context, page);
      const referers: string[] = [];
      page.on('request', (request: Request) => {
        if (request.method() === 'POST' && request.url().includes('/api/v1/events/batch')) {
          void request.headerValue('referer').then((value) => referers.push(value ?? '(none)'));
        }
      });

      const run = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('worker_check', 30, r), run);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });

      // The database has every event, right after flush() resolved.
      const rows = await readEvents(env.server.store, project.id, 'worker_check');
      expect(rows).toHaveLength(30);
      expect(new Set(rows.map((row) => row.eventId)).size).toBe(30);
      expect(new Set(rows.map((row) => row.properties.i))).toEqual(new Set(Array.from({ length: 30 }, (_, i) => i)));
      expect(rows.every((row) => row.properties.run === run)).toBe(true);
      // The time zone, read by the worker (the page reads none: docs/decisions.md, "Start-up").
      expect(new Set(rows.map((row) => row.properties.timezone))).toEqual(new Set(['Europe/Paris']));

      // 30 events at batchSize 20: at least two batch POSTs, every one on the worker's target with
      // the worker script on its initiator stack; none on the page's target.
      await waitUntil('the worker target to report the batch requests', () => batchPosts(workerRequests.requests).length >= 2);
      const fromWorker = batchPosts(workerRequests.requests);
      expect(fromWorker.every((r) => r.initiatorUrl === workerUrl)).toBe(true);
      expect(batchPosts(pageRequests.requests)).toEqual([]);
      // Independently: the Referer of every batch POST is the worker script, not the page.
      await waitUntil('the Referer of every batch request', () => referers.length >= fromWorker.length);
      expect(referers.length).toBe(fromWorker.length);
      expect(new Set(referers)).toEqual(new Set([workerUrl]));

      await Promise.all([workerRequests.stop(), pageRequests.stop()]);
    } finally {
      await context.close();
    }
  });

  it('starts the worker from the workerUrl option when it is given', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/worker-url.html', {
        config: pageConfig(env.server.url, project, { workerUrl: '/dist/client/worker.js' }),
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({
        mode: 'worker',
        strategy: 'worker-url',
      });
      const run = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('worker_url_check', 5, r), run);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });
      const rows = await readEvents(env.server.store, project.id, 'worker_url_check');
      expect(rows.map((row) => row.properties.run)).toEqual(Array(5).fill(run));
    } finally {
      await context.close();
    }
  });
});
