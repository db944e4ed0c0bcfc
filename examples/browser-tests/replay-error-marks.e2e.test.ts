/**
 * In the dashboard (built with Vite as the server package ships it, served by the real server), in
 * Chromium at desktop (1280×800) and phone (390×844) widths:
 * - the replay player marks the session's `error` events on its timeline, each at its moment, and
 *   a click on a mark jumps the player there;
 * - the errors page lists the elements of each frustration signal (rage, dead, error clicks) with
 *   their page, counts and links to the replays of their sessions.
 * No page is wider than its viewport.
 *
 * Set SA_DASHBOARD_SCREENSHOTS=DIR to keep screenshots of both at both widths there.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test-support/chromium.js';
import type { TestServer } from '../../test-support/server/test-server.js';
import { DESKTOP, PHONE, postRecording, postWithWriteKey, recordedPage, screenshot, signInWithReadKey, startDashboardServer } from '../../test-support/browser/dashboard-rig.js';
import { waitUntil } from '../../test-support/browser/harness.js';

const SHOTS = process.env.SA_DASHBOARD_SCREENSHOTS;

let server: TestServer;
let browser: Browser;
const SESSION = 'replay-error-marks-session';
const OTHER_SESSION = 'replay-error-marks-other';
const LENGTH_MS = 9000;
/** The session's errors, at ms from the recording's start. */
const ERRORS: Array<[number, string]> = [
  [2000, 'TypeError: total is undefined'],
  [6000, 'Error: payment failed'],
];
let start: number;

async function seed(): Promise<void> {
  start = Date.now() - 120_000;
  const recorded = [
    ...recordedPage({ start, href: 'https://shop.example/checkout', text: 'Checkout: the recorded page', firstMoveAt: 400 }),
    { type: 5, data: { tag: 'service-analytics:stop', payload: { reason: 'stop' } }, timestamp: start + LENGTH_MS },
  ];
  await postRecording(server, SESSION, recorded, { durationMs: LENGTH_MS, startUrl: 'https://shop.example/checkout' });
  const page = JSON.stringify({ path: '/checkout', url: 'https://shop.example/checkout' });
  let n = 0;
  const event = (type: string, session: string, at: number, properties: Record<string, unknown>) => ({
    event_id: `0190${String(++n).padStart(4, '0')}-0000-7000-8000-000000000000`,
    event_type: type,
    session_id: session,
    timestamp: new Date(start + at).toISOString(),
    properties: { page, ...properties },
  });
  await postWithWriteKey(server, '/api/v1/events/batch', [
    ...ERRORS.map(([at, message]) => event('error', SESSION, at, { message, type: 'javascript' })),
    event('click', SESSION, 1000, { selector: '#pay', element: 'button' }),
    event('rage_click', SESSION, 1900, { selector: '#pay', element: 'button', clicks: 3 }),
    event('rage_click', OTHER_SESSION, 1900, { selector: '#pay', element: 'button', clicks: 3 }),
    event('rage_click', SESSION, 3000, { selector: 'body > main > div:nth-of-type(2) > ul > li:nth-of-type(3) > a', element: 'a', clicks: 3 }),
    event('dead_click', SESSION, 4000, { selector: '#coupon', element: 'button' }),
    event('error_click', SESSION, 2000, { selector: 'button[data-testid="checkout"]', element: 'button', message: 'TypeError: total is undefined' }),
  ]);
}

beforeAll(async () => {
  server = await startDashboardServer();
  browser = await launchChromium();
  await seed();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function signIn(viewport: { width: number; height: number }): Promise<Page> {
  return signInWithReadKey(await browser.newContext({ viewport }), server);
}

const shot = (p: Page, name: string): Promise<void> => screenshot(p, SHOTS, name);

const clockOf = async (p: Page): Promise<number> => Number(await p.getByTestId('replay-time').getAttribute('data-ms'));

describe('errors on the replay timeline, frustration signals on the errors page', () => {
  for (const viewport of [DESKTOP, PHONE]) {
    it(`marks the session's errors on the timeline at ${viewport.width} px, and a click on a mark jumps there`, async () => {
      const p = await signIn(viewport);
      try {
        await p.evaluate((id) => (location.hash = `#/replay/${id}`), SESSION);
        await p.getByTestId('replay-time').waitFor();
        const marks = p.getByTestId('timeline-error-mark');
        await waitUntil('the error marks on the timeline', async () => (await marks.count()) === ERRORS.length, 20_000);
        expect(await marks.evaluateAll((list) => list.map((m) => m.getAttribute('aria-label')))).toEqual(
          ERRORS.map(([at, message]) => `Error at 0:0${at / 1000}: ${message}`),
        );
        // Each mark sits over its moment of the timeline: its centre at offset / length of the bar.
        const total = Number(await p.getByTestId('replay-time').getAttribute('data-total-ms'));
        const bar = (await p.locator('.rr-progress').boundingBox())!;
        for (const [k, [at]] of ERRORS.entries()) {
          const box = (await marks.nth(k).boundingBox())!;
          expect(Math.abs(box.x + box.width / 2 - (bar.x + (bar.width * at) / total))).toBeLessThan(2);
          expect(box.width).toBeGreaterThanOrEqual(16);
        }
        await p.getByRole('button', { name: 'Play or pause' }).click();
        await marks.nth(1).click();
        await waitUntil('the player at the second error', async () => {
          const ms = await clockOf(p);
          return ms >= 6000 && ms < 8000;
        }, 20_000);
        await shot(p, `replay-error-marks-${viewport.width}`);
        await marks.nth(0).click();
        await waitUntil('the player back at the first error', async () => {
          const ms = await clockOf(p);
          return ms >= 2000 && ms < 4000;
        }, 20_000);
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      } finally {
        await p.context().close();
      }
    });

    it(`lists the top elements of each frustration signal at ${viewport.width} px, with links to their replays`, async () => {
      const p = await signIn(viewport);
      try {
        await p.evaluate(() => (location.hash = '#/errors'));
        const panel = p.getByTestId('frustration');
        await panel.locator('table').waitFor();
        expect((await p.getByTestId('signal-tab-rage_click').textContent())?.trim()).toBe('Rage clicks (2)');
        expect((await p.getByTestId('signal-tab-dead_click').textContent())?.trim()).toBe('Dead clicks (1)');
        expect((await p.getByTestId('signal-tab-error_click').textContent())?.trim()).toBe('Error clicks (1)');
        const rows = async () => panel.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
        const [first, second] = await rows();
        expect(first?.slice(0, 4)).toEqual(['#pay', '/checkout', '2', '2']);
        expect(second?.slice(0, 4)).toEqual(['body > main > div:nth-of-type(2) > ul > li:nth-of-type(3) > a', '/checkout', '1', '1']);
        expect(await panel.locator('tbody tr').first().locator('a').count()).toBe(2);
        await shot(p, `frustration-rage-${viewport.width}`);
        await p.getByTestId('signal-tab-error_click').click();
        expect((await rows()).map((r) => r.slice(0, 4))).toEqual([['button[data-testid="checkout"]', '/checkout', '1', '1']]);
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        // A replay link opens the session's replay.
        await panel.locator('tbody tr').first().locator('a').first().click();
        await p.getByTestId('replay-time').waitFor();
        expect(decodeURIComponent(await p.evaluate(() => location.hash))).toBe(`#/replay/${SESSION}`);
      } finally {
        await p.context().close();
      }
    });
  }
});
