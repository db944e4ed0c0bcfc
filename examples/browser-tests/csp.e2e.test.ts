/**
 * A page whose Content-Security-Policy forbids every worker (`worker-src 'none'`, so neither the
 * worker file nor a `blob:` URL may start) still delivers: the same core runs in-process on the
 * main thread (docs/decisions.md, the in-process fallback). With `worker: false` the page goes
 * there at once, and the browser reports no CSP violation at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitUntil } from '../../test-support/browser/harness.js';
import { batchPosts, watchPageRequests } from '../../test-support/browser/request-origins.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('a page whose CSP forbids workers', () => {
  it('delivers through the in-process core', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const nonce = 'e2e-csp-nonce';
      const csp = [
        "default-src 'none'",
        `script-src 'self' 'nonce-${nonce}'`,
        `connect-src ${env.server.url}`,
        "worker-src 'none'",
      ].join('; ');
      const page = await openAnalyticsPage(context, env.web, '/csp.html', {
        config: pageConfig(env.server.url, project),
        nonce,
        headers: { 'content-security-policy': csp },
      });
      const pageRequests = await watchPageRequests(context, page);

      const stats = await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats());
      expect(stats).toMatchObject({ mode: 'in-process', strategy: 'in-process' });
      // The browser did block both worker starts (the file and the inline Blob).
      const violations = await page.evaluate(() => (window as unknown as HarnessWindow).harness.violations);
      expect(violations.some((v) => v === `worker-src ${env.web.url}/dist/client/worker.js`)).toBe(true);
      expect(violations.some((v) => v === 'worker-src blob')).toBe(true);

      const run = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('csp_check', 25, r), run);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });

      const rows = await readEvents(env.server.store, project.id, 'csp_check');
      expect(rows).toHaveLength(25);
      expect(new Set(rows.map((row) => row.eventId)).size).toBe(25);
      expect(rows.every((row) => row.properties.run === run)).toBe(true);
      // The batches were sent by the page's own realm.
      await waitUntil('the page target to report the batch requests', () => batchPosts(pageRequests.requests).length >= 2);
      await pageRequests.stop();
    } finally {
      await context.close();
    }
  });

  it('with worker: false, delivers in-process without trying a worker: no CSP violation, no console error', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const nonce = 'e2e-csp-nonce-2';
      const csp = ["default-src 'none'", `script-src 'self' 'nonce-${nonce}'`, `connect-src ${env.server.url}`, "worker-src 'none'"].join('; ');
      const errors: string[] = [];
      context.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      const page = await openAnalyticsPage(context, env.web, '/csp-no-worker.html', {
        config: pageConfig(env.server.url, project, { worker: false }),
        nonce,
        headers: { 'content-security-policy': csp },
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'in-process', strategy: 'in-process' });
      const run = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('csp_no_worker', 5, r), run);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });
      expect(await readEvents(env.server.store, project.id, 'csp_no_worker')).toHaveLength(5);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.violations)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
