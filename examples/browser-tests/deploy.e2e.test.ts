/**
 * docs/deploy.md's recipe end to end in a browser: a server started as the systemd unit starts it
 * (test-support/server/deploy-recipes.ts), the nginx site with TLS in front of it, and a page on
 * another origin whose client sends to `https://…/stats`, the endpoint the page gives. Its events
 * arrive, through the worker, over TLS, under the base path; the browser trusts the test's
 * certificate (the context ignores certificate errors: the certificate is made by the test).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, runId, waitUntil } from '../../test-support/browser/harness.js';
import type { Nginx } from '../../test-support/nginx.js';
import { buildCli } from '../../test-support/server/cli-process.js';
import { startNginxSite, startUnitServer } from '../../test-support/server/deploy-recipes.js';

let env: BrowserTestEnvironment;
let dir: string;
let server: ChildProcess | undefined;
let nginx: Nginx | undefined;
beforeAll(async () => {
  env = await startEnvironment();
  dir = mkdtempSync(join(tmpdir(), 'sa-deploy-e2e-'));
});
afterAll(async () => {
  await nginx?.stop();
  server?.kill('SIGTERM');
  await env?.close();
  rmSync(dir, { recursive: true, force: true });
});
printPageLogOnFailure();

describe('the deployment of docs/deploy.md', () => {
  it('carries a page’s events from its worker over TLS through nginx to the server under /stats', async () => {
    const started = await startUnitServer(await buildCli(), dir);
    server = started.child;
    const site = await startNginxSite(started.url, dir);
    nginx = site.nginx;
    const context = await env.browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const run = runId();
      const page = await openAnalyticsPage(context, env.web, `/deploy-${run}.html`, {
        config: pageConfig(`${site.base}/stats`, { id: started.project.projectId, writeKey: started.project.writeKey }, { flushInterval: 200 }),
      });
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('deployed', 25, r), run);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });
      const db = new Database(started.env.SA_DB as string, { readonly: true });
      try {
        const count = () => (db.prepare("SELECT count(*) AS n FROM events WHERE event_type = 'deployed'").get() as { n: number }).n;
        await waitUntil('25 events stored', () => count() === 25);
        expect(count()).toBe(25);
      } finally {
        db.close();
      }
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.violations)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
