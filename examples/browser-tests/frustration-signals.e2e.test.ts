/**
 * Frustration signals in real Chromium against the real server (`main/auto/frustration-signals.ts`):
 * a scripted page with a button clicked in a burst (rage click), a button that does nothing (dead
 * click), a button whose handler throws (error click), and buttons that answer with a DOM change or
 * a request (no signal). Every assertion is on what the database holds, the report included.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRow } from '../../server/store/event-store.js';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { openAnalyticsPage, pageConfig, readEvents, waitForEvents, waitUntil } from '../../test-support/browser/harness.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

const APP = `
<main>
  <button id="rage">Apply coupon</button> <output id="tries">0</output>
  <button id="dead">Checkout</button>
  <button id="broken">Save</button>
  <button id="opens">Details</button>
  <button id="loads">Refresh</button>
</main>`;

/** Waits until the lazily loaded heatmap and frustration tracking listen (read through DevTools). */
async function waitForClickTracking(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await waitUntil('heatmap tracking to listen on the document', async () => {
      const { result } = await cdp.send('Runtime.evaluate', { expression: 'document' });
      const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
      // The heatmap's mousemove listener is added in the same task as the frustration signals' click listener.
      return listeners.some((listener) => listener.type === 'mousemove');
    });
  } finally {
    await cdp.detach();
  }
}

const props = (row: EventRow): Record<string, unknown> => row.properties as Record<string, unknown>;
const pathOf = (row: EventRow): unknown => (JSON.parse(String(props(row).page)) as { path?: unknown }).path;

describe('frustration signals', () => {
  it('stores a rage click, a dead click and an error click, and nothing for clicks the page answered', async () => {
    const project = await env.server.createProject();
    env.web.setPage('/shop/data.json', { html: '{"ok":true}', headers: { 'content-type': 'application/json' } });
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/shop/cart', {
        config: pageConfig(env.server.url, project, { enableHeatmapTracking: true, flushInterval: 300 }),
      });
      await page.evaluate((html) => {
        document.body.insertAdjacentHTML('beforeend', html);
        const tries = document.getElementById('tries')!;
        // Each click updates a counter: the page answers, yet the user clicks on in a burst.
        document.getElementById('rage')!.addEventListener('click', () => (tries.textContent = String(Number(tries.textContent) + 1)));
        document.getElementById('broken')!.addEventListener('click', () => {
          throw new Error('e2e save failed');
        });
        document.getElementById('opens')!.addEventListener('click', () => document.body.append(document.createElement('dialog')));
        // The page reads the answer, as pages do: Chromium lists a request in resource timing once its
        // body is read, and a body nobody reads can wait past the watch on a busy machine.
        document.getElementById('loads')!.addEventListener('click', () => void fetch('/shop/data.json').then((response) => response.json()));
      }, APP);
      await waitForClickTracking(page);

      // Each scenario is given its own second so that the next click does not end its watch.
      for (let i = 0; i < 4; i++) await page.click('#rage', { delay: 10 });
      await page.waitForTimeout(1200);
      await page.click('#dead');
      await page.waitForTimeout(1200);
      await page.click('#broken');
      await page.waitForTimeout(1200);
      await page.click('#opens');
      await page.waitForTimeout(1200);
      await page.click('#loads');
      await page.waitForTimeout(1200);

      await waitForEvents(env.server.store, project.id, 'rage_click', 1);
      await waitForEvents(env.server.store, project.id, 'dead_click', 1);
      await waitForEvents(env.server.store, project.id, 'error_click', 1);
      await waitForEvents(env.server.store, project.id, 'click', 8);
      const signals = (await readEvents(env.server.store, project.id)).filter((row) => row.eventType.endsWith('_click'));
      const summary = signals
        .map((row) => ({ type: row.eventType, selector: props(row).selector, element: props(row).element, path: pathOf(row) }))
        .sort((a, b) => a.type.localeCompare(b.type));
      expect(summary).toEqual([
        { type: 'dead_click', selector: '#dead', element: 'button', path: '/shop/cart' },
        { type: 'error_click', selector: '#broken', element: 'button', path: '/shop/cart' },
        { type: 'rage_click', selector: '#rage', element: 'button', path: '/shop/cart' },
      ]);
      const errorClick = signals.find((row) => row.eventType === 'error_click')!;
      expect(props(errorClick).message).toContain('e2e save failed');
      expect(props(signals.find((row) => row.eventType === 'rage_click')!).clicks).toBe(3);

      // The report reads the same rows, by selector and page, each with its session.
      await env.server.store.reports.refreshRollups();
      const q = { projectId: project.id, from: Date.now() - 3_600_000, to: Date.now() + 60_000, filters: {}, includeBots: false, visitorKey: 'anonymous' as const };
      const rows = await env.server.store.reports.frustration(q, 10);
      expect(rows.map((r) => [r.signal, r.selector, r.path, r.count, r.sessions, r.sessionIds.length])).toEqual([
        ['dead_click', '#dead', '/shop/cart', 1, 1, 1],
        ['error_click', '#broken', '/shop/cart', 1, 1, 1],
        ['rage_click', '#rage', '/shop/cart', 1, 1, 1],
      ]);
      expect(rows[0]!.sessionIds).toEqual([signals[0]!.sessionId]);
    } finally {
      await context.close();
    }
  });
});
