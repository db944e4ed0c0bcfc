/**
 * `persistQueue: true` (docs/decisions.md, the durable queue): events tracked while the server is
 * unreachable are journalled to IndexedDB by the worker (`worker/queue-journal.ts`), survive a
 * reload, are back in the queue of the next page load, and are sent once the server is reachable.
 *
 * The server stays unreachable (a proxy that does not listen) until the reloaded page has restored
 * the events, so neither the first page's worker nor its `pagehide` beacon can have delivered them:
 * what arrives came from the journal.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitUntil } from '../../test-support/browser/harness.js';
import { type SwitchableProxy, startSwitchableProxy } from '../../test-support/browser/switchable-proxy.js';

/** A few events, and a backlog of thousands (with room for it in the queue). */
const CASES = [
  { n: 20, maxQueueSize: 1000 },
  { n: 3000, maxQueueSize: 5000 },
];

let env: BrowserTestEnvironment;
let proxy: SwitchableProxy;
beforeAll(async () => {
  env = await startEnvironment();
  proxy = await startSwitchableProxy(env.server.url, { startDown: true });
});
afterAll(async () => {
  await proxy?.close();
  await env?.close();
});
printPageLogOnFailure();

describe('persistQueue: true', () => {
  it.each(CASES)('sends $n events journalled while the server was unreachable on the next load', async ({ n: N, maxQueueSize }) => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      // A long retry delay: the failed sends must not use up the retries during the test.
      const config = pageConfig(proxy.url, project, { persistQueue: true, retryDelay: 600_000, flushInterval: 600_000, maxQueueSize });
      const page = await openAnalyticsPage(context, env.web, '/persist.html', { config });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });

      const run = runId();
      await page.evaluate(({ r, n }) => (window as unknown as HarnessWindow).harness.trackMany('offline_persisted', n, r), { r: run, n: N });
      // The worker tried to send (so it has opened and loaded its journal) and failed.
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toMatchObject({ ok: false });
      // The journal holds all N before the page goes.
      const database = `service-analytics-queue:${project.id}`;
      await waitUntil('the journal to hold the events', async () => (await countJournal(page, database)) === N);

      await page.reload();
      await page.waitForFunction(() => 'harness' in window, undefined, { timeout: 30_000 });
      // The reloaded page's worker put the journalled events back in its queue.
      await waitUntil('the restored queue', async () => (await page.evaluate(() => (window as unknown as HarnessWindow).harness.queueSize())) === N);
      expect(await readEvents(env.server.store, project.id)).toEqual([]);

      await proxy.up();
      // flush() sends without waiting out backoff; on a loaded machine one of the 150 requests may
      // still fail at the network level right after the proxy came up: a second flush sends it.
      let outcome = await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush());
      for (let attempt = 1; !outcome.ok && outcome.code === 'NETWORK_ERROR' && attempt < 3; attempt++) {
        outcome = await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush());
      }
      expect(outcome).toEqual({ ok: true });
      const rows = await readEvents(env.server.store, project.id);
      expect(rows).toHaveLength(N);
      expect(new Set(rows.map((row) => row.eventId)).size).toBe(N);
      expect(rows.every((row) => row.eventType === 'offline_persisted' && row.properties.run === run)).toBe(true);
      expect(new Set(rows.map((row) => row.properties.i)).size).toBe(N);
      // Sent events leave the journal.
      await waitUntil('the journal to be empty', async () => (await countJournal(page, database)) === 0);
    } finally {
      await proxy.down();
      await context.close();
    }
  });
});

/** Events in the queue journal, read from the page (the database exists once the worker opened it). */
function countJournal(page: Page, database: string): Promise<number> {
  return page.evaluate(
    (name) =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open(name);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const count = db.transaction('events', 'readonly').objectStore('events').count();
          count.onsuccess = () => {
            db.close();
            resolve(count.result);
          };
          count.onerror = () => reject(count.error);
        };
      }),
    database,
  );
}
