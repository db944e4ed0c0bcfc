/**
 * The automatic features in real Chromium against the real server, every flag on: page views on
 * load and on SPA navigation (`pushState`, `popstate`), heatmap clicks, uncaught errors and
 * unhandled rejections, and one `performance` event when the page is hidden (here: it navigates
 * away). Every assertion is on what the database holds.
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

/** An app script with a real URL, so errors thrown from it carry filename, line and column. */
const APP_SCRIPT = `
window.failSoon = function () {
  setTimeout(function fail() {
    throw new Error('e2e uncaught boom');
  }, 0);
};
window.rejectSoon = function () {
  Promise.reject(new Error('e2e unhandled rejection'));
};
`;

/** How long the test button's click handler keeps the main thread busy (ms). */
const BUSY_CLICK_MS = 60;

/** Waits until the lazily loaded error tracking listens on the window (read through DevTools). */
async function waitForErrorTracking(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  try {
    await waitUntil('error tracking to listen on the window', async () => {
      const { result } = await cdp.send('Runtime.evaluate', { expression: 'window' });
      const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId! });
      return listeners.some((listener) => listener.type === 'unhandledrejection');
    });
  } finally {
    await cdp.detach();
  }
}

const props = (row: EventRow): Record<string, unknown> => row.properties as Record<string, unknown>;
const byId = (a: EventRow, b: EventRow): number => (a.eventId < b.eventId ? -1 : 1); // UUIDv7: creation order

describe('automatic tracking, every flag on', () => {
  it('stores page views, a click, errors and one performance event', async () => {
    const project = await env.server.createProject();
    env.web.setPage('/app/script.js', { html: APP_SCRIPT, headers: { 'content-type': 'text/javascript; charset=utf-8' } });
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/app/start', {
        config: pageConfig(env.server.url, project, {
          enableAutoPageTracking: true,
          enableErrorTracking: true,
          enableHeatmapTracking: true,
          enablePerformanceTracking: true,
          flushInterval: 500,
        }),
      });
      await page.addScriptTag({ url: '/app/script.js' });
      // The button's handler keeps the main thread busy for BUSY_CLICK_MS: an interaction long
      // enough that Chromium reports it in event timing (the client observes events of 16 ms or more).
      await page.evaluate((busy) => {
        document.body.insertAdjacentHTML('beforeend', '<main><button id="buy">Buy</button></main>');
        document.getElementById('buy')!.addEventListener('click', () => {
          const until = window.performance.now() + busy;
          while (window.performance.now() < until);
        });
      }, BUSY_CLICK_MS);
      await waitForErrorTracking(page);

      // SPA navigation: two pushes (one repeated to the same URL), a state-only replace, then back.
      await page.evaluate(() => {
        history.pushState({}, '', '/app/a');
        history.pushState({ again: true }, '', '/app/a');
        history.pushState({}, '', '/app/b');
        history.replaceState({ state: 'only' }, '', '/app/b');
        history.back();
      });
      await page.waitForFunction(() => location.pathname === '/app/a');

      await page.click('#buy');
      await page.evaluate(() => {
        const w = window as unknown as { failSoon(): void; rejectSoon(): void };
        w.failSoon();
        w.rejectSoon();
      });
      await waitForEvents(env.server.store, project.id, 'error', 2);

      // Hide the page: navigating away fires visibilitychange (hidden) and pagehide.
      await page.goto('about:blank');
      await waitForEvents(env.server.store, project.id, 'performance', 1);
      await waitForEvents(env.server.store, project.id, 'page_view', 4);
      await waitForEvents(env.server.store, project.id, 'click', 1);
      const rows = await readEvents(env.server.store, project.id);

      // Page views: one per URL change, each detected once (no duplicate from pushState to the
      // same URL, replaceState to the same URL, or the patch and popstate both firing).
      const origin = env.web.url;
      const pages = rows
        .filter((row) => row.eventType === 'page_view')
        .sort(byId)
        .map((row) => JSON.parse(String(props(row).page)) as Record<string, unknown>);
      expect(pages.map((p) => p.path)).toEqual(['/app/start', '/app/a', '/app/b', '/app/a']);
      expect(new Set(pages.map((p) => p.url))).toEqual(new Set([`${origin}/app/start`, `${origin}/app/a`, `${origin}/app/b`]));
      expect(pages[1]).toEqual({
        title: 'service-analytics browser test',
        url: `${origin}/app/a`,
        path: '/app/a',
        referrer: `${origin}/app/start`,
        search: '',
      });

      const clicks = rows.filter((row) => row.eventType === 'click');
      expect(clicks).toHaveLength(1);
      expect(props(clicks[0]!)).toMatchObject({ element: 'button', selector: '#buy', action: 'click' });
      expect(typeof props(clicks[0]!).x).toBe('number');
      expect(typeof props(clicks[0]!).y).toBe('number');
      const viewport = JSON.parse(String(props(clicks[0]!).viewport)) as { width: unknown; height: unknown };
      expect(viewport).toEqual({ width: expect.any(Number), height: expect.any(Number) });

      const errors = rows.filter((row) => row.eventType === 'error').map(props);
      expect(errors).toHaveLength(2);
      const uncaught = errors.find((e) => e.type === 'javascript')!;
      expect(uncaught).toMatchObject({ message: expect.stringContaining('e2e uncaught boom'), filename: `${origin}/app/script.js` });
      expect(uncaught.stack).toEqual(expect.stringContaining('/app/script.js'));
      expect([typeof uncaught.lineno, typeof uncaught.colno]).toEqual(['number', 'number']);
      const rejection = errors.find((e) => e.type === 'unhandledrejection')!;
      expect(rejection).toMatchObject({ message: 'e2e unhandled rejection', filename: `${origin}/app/script.js` });
      expect(rejection.stack).toEqual(expect.stringContaining('e2e unhandled rejection'));
      expect([typeof rejection.lineno, typeof rejection.colno]).toEqual(['number', 'number']);

      const performance = rows.filter((row) => row.eventType === 'performance').map(props);
      expect(performance).toHaveLength(1);
      const timings = performance[0]! as Record<string, number>;
      // Every field, each a number: Chromium reports all of them for this page, which painted text
      // (paint, largest-contentful-paint), was clicked (first-input) and had a long interaction.
      const fields = [
        'cumulativeLayoutShift',
        'domReady',
        'firstContentfulPaint',
        'firstInputDelay',
        'firstPaint',
        'interactionToNextPaint',
        'largestContentfulPaint',
        'loadTime',
        'timeToInteractive',
      ];
      for (const field of fields) expect(timings[field], field).toEqual(expect.any(Number));
      // Their order, which holds for any page: the first paint is no later than the first
      // contentful one, the largest contentful paint no earlier; time to interactive starts at
      // max(FCP, DOMContentLoaded).
      expect(timings.firstPaint).toBeLessThanOrEqual(timings.firstContentfulPaint!);
      expect(timings.largestContentfulPaint).toBeGreaterThanOrEqual(timings.firstContentfulPaint!);
      expect(timings.timeToInteractive).toBeGreaterThanOrEqual(Math.max(timings.firstContentfulPaint!, timings.domReady!));
      // The click's handler ran BUSY_CLICK_MS, so the interaction lasted at least that long
      // (event timing rounds durations to 8 ms).
      expect(timings.interactionToNextPaint).toBeGreaterThanOrEqual(BUSY_CLICK_MS - 8);
      expect(timings.cumulativeLayoutShift).toBe(0);
    } finally {
      await context.close();
    }
  });
});
