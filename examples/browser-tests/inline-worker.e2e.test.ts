/**
 * The inline-worker fallback: when neither the `workerUrl` option nor the worker file shipped beside
 * the library can be loaded (both answer 404, as when a bundler did not copy worker.js), the client
 * still runs its core in a worker, started from the worker source built into the library (a Blob
 * URL), and delivers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitUntil } from '../../test-support/browser/harness.js';
import { batchPosts, watchPageRequests, watchWorkerRequests } from '../../test-support/browser/request-origins.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  // This deployment lacks dist/client/worker.js.
  env = await startEnvironment({ missing: ['worker.js'] });
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('when worker.js is missing', () => {
  it('starts the inline worker and delivers from it', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/inline.html', {
        config: pageConfig(env.server.url, project, { workerUrl: '/not-deployed/worker.js' }),
      });
      const stats = await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats());
      expect(stats).toMatchObject({ mode: 'worker', strategy: 'inline-worker', restarts: 0 });
      // Both earlier strategies were really tried, and failed on a 404.
      const served = env.web.served.map((r) => `${r.status} ${r.path}`);
      expect(served).toContain('404 /not-deployed/worker.js');
      expect(served).toContain('404 /dist/client/worker.js');

      const workerRequests = await watchWorkerRequests(env.browser, (url) => url.startsWith('blob:'));
      const pageRequests = await watchPageRequests(context, page);
      const run = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('inline_check', 25, r), run);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });

      const rows = await readEvents(env.server.store, project.id, 'inline_check');
      expect(rows).toHaveLength(25);
      expect(new Set(rows.map((row) => row.eventId)).size).toBe(25);
      expect(rows.every((row) => row.properties.run === run)).toBe(true);
      // Sent from the Blob worker's target, none from the page's.
      await waitUntil('the worker target to report the batch requests', () => batchPosts(workerRequests.requests).length >= 2);
      expect(batchPosts(pageRequests.requests)).toEqual([]);
      await Promise.all([workerRequests.stop(), pageRequests.stop()]);
    } finally {
      await context.close();
    }
  });
});
