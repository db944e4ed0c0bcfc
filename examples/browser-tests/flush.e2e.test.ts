/**
 * `flush()` (README, "Using the client library"; docs/architecture.md, "Acknowledgements back to
 * the facade"): it resolves once what was queued is accepted, so the database has it right after;
 * it rejects when the server is down, with the events still queued; and once the server is back a
 * second `flush()` delivers them. "Down" is a proxy in front of the server that stops listening (switchable-proxy.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId } from '../../test-support/browser/harness.js';
import { type SwitchableProxy, startSwitchableProxy } from '../../test-support/browser/switchable-proxy.js';

let env: BrowserTestEnvironment;
let proxy: SwitchableProxy;
beforeAll(async () => {
  env = await startEnvironment();
  proxy = await startSwitchableProxy(env.server.url);
});
afterAll(async () => {
  await proxy?.close();
  await env?.close();
});
printPageLogOnFailure();

describe('flush()', () => {
  it('resolves once the server accepted the events, rejects while it is down and keeps them for the next flush', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      // A long retry delay: between the two flushes only flush() itself may send (not a backoff timer).
      const page = await openAnalyticsPage(context, env.web, '/flush.html', {
        config: pageConfig(proxy.url, project, { retryDelay: 600_000, flushInterval: 600_000 }),
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });

      // 1. Server up: the events are in the database as soon as flush() resolves.
      const online = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('online', 7, r), online);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });
      const first = await readEvents(env.server.store, project.id, 'online');
      expect(first.map((row) => row.properties.run)).toEqual(Array(7).fill(online));
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.queueSize())).toBe(0);

      // 2. Server down: flush() rejects with a network error; the events stay queued.
      await proxy.down();
      const offline = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('offline', 5, r), offline);
      const failed = await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush());
      expect(failed).toMatchObject({ ok: false, code: 'NETWORK_ERROR' });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.queueSize())).toBe(5);
      expect(await readEvents(env.server.store, project.id, 'offline')).toEqual([]);

      // 3. Server back on the same address: a second flush() delivers exactly those events.
      await proxy.up();
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.flush())).toEqual({ ok: true });
      const delivered = await readEvents(env.server.store, project.id, 'offline');
      expect(delivered).toHaveLength(5);
      expect(new Set(delivered.map((row) => row.eventId)).size).toBe(5);
      expect(new Set(delivered.map((row) => row.properties.i))).toEqual(new Set([0, 1, 2, 3, 4]));
      expect(delivered.every((row) => row.properties.run === offline)).toBe(true);
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.queueSize())).toBe(0);
      expect(await readEvents(env.server.store, project.id)).toHaveLength(12);
    } finally {
      await context.close();
    }
  });
});
