/**
 * Heatmap tracking in real Chromium against the real server (`main/auto/heatmap.ts`,
 * `main/auto/scroll-depth.ts`): a click carries where in the element it fell, as fractions of the
 * element's box; each page view's scroll depth arrives once, the first at the in-page navigation
 * that ends it, filed under its own page, the second when the page is closed (by the unload path's
 * beacon). Every assertion is on what the database holds, the heatmap report included.
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

/** Waits until the lazily loaded heatmap tracking listens (read through DevTools). */
async function waitForHeatmapTracking(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await waitUntil('heatmap tracking to listen on the document', async () => {
      const { result } = await cdp.send('Runtime.evaluate', { expression: 'document' });
      const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
      // The scroll depth starts in the same task as the heatmap's mousemove listener.
      return listeners.some((listener) => listener.type === 'mousemove');
    });
  } finally {
    await cdp.detach();
  }
}

/** Scrolls to `y` and lets two animation frames pass (the depth is measured in one); answers the depth seen, percent. */
function scrollTo(page: Page, y: number): Promise<number> {
  return page.evaluate(
    (top) =>
      new Promise<number>((resolve) => {
        window.scrollTo(0, top);
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            const height = Math.max(document.documentElement.scrollHeight, document.body.scrollHeight);
            resolve(Math.min(100, Math.round(((window.scrollY + window.innerHeight) / height) * 100)));
          }),
        );
      }),
    y,
  );
}

const props = (row: EventRow): Record<string, unknown> => row.properties as Record<string, unknown>;
const pathOf = (row: EventRow): unknown => (JSON.parse(String(props(row).page)) as { path?: unknown }).path;

describe('heatmap tracking', () => {
  it('sends element fractions with a click and one scroll depth per page view, at an in-page navigation and at close', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page = await openAnalyticsPage(context, env.web, '/shop/long', {
      config: pageConfig(env.server.url, project, { enableHeatmapTracking: true, enableAutoPageTracking: true, flushInterval: 300 }),
    });
    try {
      await page.evaluate(() => {
        document.body.style.margin = '0';
        document.body.insertAdjacentHTML(
          'beforeend',
          '<button id="buy" style="position:absolute;left:100px;top:200px;width:200px;height:40px">Buy</button><div id="tall" style="height:3600px"></div>',
        );
      });
      await waitForHeatmapTracking(page);
      await page.mouse.click(150, 210);
      const deepest = await scrollTo(page, 1500);
      expect(deepest).toBeGreaterThan(40);
      await scrollTo(page, 300);
      await page.evaluate(() => {
        history.pushState(null, '', '/shop/next');
        document.getElementById('tall')!.style.height = '400px';
      });
      const next = await scrollTo(page, 0);
      await waitForEvents(env.server.store, project.id, 'scroll_depth', 1);
      await page.close({ runBeforeUnload: true });

      await waitForEvents(env.server.store, project.id, 'scroll_depth', 2);
      await waitForEvents(env.server.store, project.id, 'click', 1);
      const rows = await readEvents(env.server.store, project.id);
      const [click] = rows.filter((row) => row.eventType === 'click');
      expect(props(click!)).toMatchObject({ selector: '#buy', element: 'button', relativeX: 0.25, relativeY: 0.25, x: 150, y: 210 });
      const depths = rows.filter((row) => row.eventType === 'scroll_depth').map((row) => [pathOf(row), props(row).maxScrollDepth, props(row).action])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      expect(depths).toEqual([
        ['/shop/long', deepest, 'scroll'],
        ['/shop/next', next, 'scroll'],
      ]);

      // The report reads the same rows, under each page.
      const q = { projectId: project.id, from: Date.now() - 3_600_000, to: Date.now() + 60_000, includeBots: false, visitorKey: 'anonymous' as const };
      const long = await env.server.store.reports.heatmap({ ...q, filters: { page: '/shop/long' } }, 10);
      expect(long.elements).toEqual([{ selector: '#buy', count: 1, cells: [{ x: 2, y: 2, count: 1 }] }]);
      expect(long.pageViews).toBe(1);
      expect(long.reached).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100].map((step) => (deepest >= step ? 1 : 0)));
      expect((await env.server.store.reports.heatmap({ ...q, filters: { page: '/shop/next' } }, 10)).pageViews).toBe(1);
    } finally {
      await context.close();
    }
  });
});
