/**
 * Consent, memory persistence and beforeSend in Chromium (README, "Consent and privacy"): while
 * consent is pending or denied no worker is started and the page makes no request to the analytics
 * server (the page's own requests are logged; a worker that does not exist sends nothing), nothing
 * is written to localStorage or IndexedDB, and a navigation away sends no beacon; `optIn()` sends
 * what was held. In memory mode the device keeps nothing. `beforeSend` redacts and drops.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { captureConsole, type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents } from '../../test-support/browser/harness.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

/** Every request the page's context makes to the analytics server (page requests and beacons). */
function logApiRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on('request', (request) => {
    if (request.url().startsWith(env.server.url)) seen.push(`${request.method()} ${request.url()}`);
  });
  return seen;
}

/** What the page keeps on the device: localStorage keys and IndexedDB database names. */
function deviceStorage(page: Page): Promise<{ local: string[]; idb: string[] }> {
  return page.evaluate(async () => ({
    local: Object.keys(localStorage),
    idb: (await indexedDB.databases()).map((d) => d.name ?? ''),
  }));
}

const harness = (page: Page) => ({
  track: (name: string, count: number, run: string) => page.evaluate(([n, c, r]) => (window as unknown as HarnessWindow).harness.trackMany(n, c, r), [name, count, run] as const),
  call: (op: 'optIn' | 'optOut') => page.evaluate((o) => (window as unknown as HarnessWindow).harness.analytics[o](), op),
  stats: () => page.evaluate(() => (window as unknown as HarnessWindow).harness.stats()),
  flush: () => page.evaluate(() => (window as unknown as HarnessWindow).harness.flush()),
});

describe("consent: 'pending'", () => {
  it('sends nothing, starts no worker and stores nothing until optIn(), which sends what was held', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    const api = logApiRequests(context);
    try {
      const config = pageConfig(env.server.url, project, { consent: 'pending', persistQueue: true, enableAutoPageTracking: true });
      const page = await openAnalyticsPage(context, env.web, '/consent-pending.html', { config });
      const h = harness(page);
      const run = runId();
      await h.track('held', 50, run);
      await page.waitForTimeout(1_500);
      expect(api).toEqual([]);
      expect(page.workers()).toEqual([]);
      expect(await deviceStorage(page)).toEqual({ local: [], idb: [] });
      expect(await h.stats()).toMatchObject({ mode: 'held', queueSize: 51 });
      expect(await h.flush()).toMatchObject({ ok: false, code: 'NO_CONSENT' });
      expect(await readEvents(env.server.store, project.id)).toEqual([]);

      await h.call('optIn');
      expect(await h.flush()).toEqual({ ok: true });
      const rows = await waitForEvents(env.server.store, project.id, 'held', 50);
      expect(new Set(rows.map((r) => r.properties.i)).size).toBe(50);
      expect(await readEvents(env.server.store, project.id, 'page_view')).toHaveLength(1);
      const stored = await deviceStorage(page);
      expect(stored.local).toEqual(expect.arrayContaining([`service-analytics:${project.id}:anonymous_id`, `service-analytics:${project.id}:consent`]));
    } finally {
      await context.close();
    }
  });

  it('sends no beacon when the page goes away while pending, and after optOut() nothing is stored but the choice, which the next load honours', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    const api = logApiRequests(context);
    try {
      const config = pageConfig(env.server.url, project, { consent: 'pending' });
      const page = await openAnalyticsPage(context, env.web, '/consent-leave.html', { config });
      const run = runId();
      await harness(page).track('left_pending', 20, run);
      await page.goto(`${env.web.url}/blank`).catch(() => undefined);
      await page.waitForTimeout(1_000);
      expect(api).toEqual([]);

      const second = await openAnalyticsPage(context, env.web, '/consent-out.html', { config: pageConfig(env.server.url, project, { consent: 'granted' }) });
      await harness(second).track('before_opt_out', 3, run);
      await harness(second).call('optOut');
      await harness(second).track('after_opt_out', 3, run);
      expect((await deviceStorage(second)).local).toEqual([`service-analytics:${project.id}:consent`]);

      // The next load starts opted out although its config says granted: nothing goes out.
      const third = await openAnalyticsPage(context, env.web, '/consent-again.html', { config: pageConfig(env.server.url, project, { consent: 'granted' }) });
      expect(await third.evaluate(() => (window as unknown as HarnessWindow).harness.analytics.hasOptedOut())).toBe(true);
      await harness(third).track('third_load', 3, run);
      await third.goto(`${env.web.url}/blank`).catch(() => undefined);
      await third.waitForTimeout(1_000);
      const types = new Set((await readEvents(env.server.store, project.id)).map((r) => r.eventType));
      expect(types.has('left_pending')).toBe(false);
      expect(types.has('after_opt_out')).toBe(false);
      expect(types.has('third_load')).toBe(false);
    } finally {
      await context.close();
    }
  });

  it('treats Global Privacy Control as denied with respectDoNotTrack', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    // What a browser or extension that sends GPC exposes to the page.
    await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true }));
    const api = logApiRequests(context);
    try {
      const page = await openAnalyticsPage(context, env.web, '/gpc.html', { config: pageConfig(env.server.url, project, { respectDoNotTrack: true }) });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.analytics.hasOptedOut())).toBe(true);
      await harness(page).track('gpc', 10, runId());
      await page.goto(`${env.web.url}/blank`).catch(() => undefined);
      await page.waitForTimeout(1_000);
      expect(api).toEqual([]);
      expect(await readEvents(env.server.store, project.id)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe("persistence: 'memory'", () => {
  it('sends events from the worker while localStorage and IndexedDB stay empty', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const config = pageConfig(env.server.url, project, { persistence: 'memory', persistQueue: true, enableAutoPageTracking: true });
      const page = await openAnalyticsPage(context, env.web, '/memory.html', { config });
      await page.evaluate(() => {
        const { analytics } = (window as unknown as HarnessWindow).harness;
        analytics.identify('user-1');
        analytics.register({ plan: 'pro' });
        analytics.group('company', 'acme');
      });
      await harness(page).track('cookieless', 10, runId());
      expect(await harness(page).flush()).toEqual({ ok: true });
      expect(await harness(page).stats()).toMatchObject({ mode: 'worker' });
      const rows = await waitForEvents(env.server.store, project.id, 'cookieless', 10);
      expect(rows[0]!.properties).toMatchObject({ plan: 'pro', groups: '{"company":"acme"}' });
      expect(await deviceStorage(page)).toEqual({ local: [], idb: [] });
    } finally {
      await context.close();
    }
  });
});

describe('beforeSend', () => {
  it('redacts and drops on the page, before anything is queued', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const config = pageConfig(env.server.url, project);
      env.web.setPage('/before-send.html', {
        html: `<!doctype html><html><body><script type="module">
import { createAnalytics } from '/dist/client/index.js';
window.analytics = createAnalytics({
  ...${JSON.stringify(config)},
  beforeSend(event) {
    if (event.event === 'internal') return null;
    if (event.properties && 'email' in event.properties) event.properties.email = '[redacted]';
    return event;
  },
});
</script></body></html>`,
      });
      const page = await context.newPage();
      captureConsole(page);
      await page.goto(`${env.web.url}/before-send.html`);
      await page.waitForFunction(() => 'analytics' in window);
      await page.evaluate(async () => {
        const { analytics } = window as unknown as { analytics: HarnessWindow['harness']['analytics'] };
        analytics.track('internal', { secret: 'x' });
        analytics.track('signup', { email: 'someone@example.com', plan: 'pro' });
        await analytics.flush();
      });
      const rows = await waitForEvents(env.server.store, project.id, 'signup', 1);
      expect(rows[0]!.properties).toMatchObject({ email: '[redacted]', plan: 'pro' });
      expect(await readEvents(env.server.store, project.id, 'internal')).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
