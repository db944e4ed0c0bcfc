/**
 * The replay page's console and network panels (dashboard/, built with Vite as the server package
 * ships it, served by the real server) in Chromium, at desktop (1280×800) and phone (390×844)
 * widths: a recording whose stream holds the recorder's console and network entries
 * (protocol/replay-entries.ts) is replayed; the panels list them in time order, follow the
 * player's clock (the entry at or before it is marked current), filter by level and by failed
 * requests, and a click on an entry seeks the player to its moment. No page is wider than its
 * viewport.
 *
 * Set SA_DASHBOARD_SCREENSHOTS=DIR to keep screenshots of both panels at both widths there.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleEntry, NetworkEntry } from '../../protocol/replay-entries.js';
import { launchChromium } from '../../test-support/chromium.js';
import type { TestServer } from '../../test-support/server/test-server.js';
import { DESKTOP, PHONE, postRecording, recordedPage, screenshot, signInWithReadKey, startDashboardServer } from '../../test-support/browser/dashboard-rig.js';
import { waitUntil } from '../../test-support/browser/harness.js';

const SHOTS = process.env.SA_DASHBOARD_SCREENSHOTS;

let server: TestServer;
let browser: Browser;
const SESSION = 'replay-panels-session';

/** The recorder's entries, at ms from the recording's start. */
const CONSOLE: Array<[number, ConsoleEntry]> = [
  [1000, { level: 'log', message: 'cart loaded with 3 items' }],
  [2500, { level: 'warn', message: 'price list is stale' }],
  [4000, { level: 'error', message: 'TypeError: total is undefined', stack: 'at checkout (https://shop.example/app.js:10:5)\nat onClick (https://shop.example/app.js:42:3)' }],
  [6000, { level: 'error', message: 'Error: payment failed', source: 'uncaught', stack: 'at pay (https://shop.example/app.js:77:9)' }],
];
const NETWORK: Array<[number, NetworkEntry]> = [
  [1500, { initiator: 'fetch', method: 'GET', url: 'https://shop.example/api/cart?user=[redacted]', status: 200, duration: 84, responseSize: 2048 }],
  [
    3000,
    {
      initiator: 'fetch',
      method: 'POST',
      url: 'https://shop.example/api/checkout',
      status: 500,
      duration: 312,
      requestSize: 64,
      responseSize: 40,
      requestHeaders: { authorization: '[denied]', 'content-type': 'application/json' },
      responseHeaders: { 'content-type': 'application/json' },
      requestBody: '{"items":3}',
      responseBody: '{"error":"internal"}',
    },
  ],
  [5000, { initiator: 'xhr', method: 'GET', url: 'https://pay.example/session', status: 0, error: 'network error', duration: 1200 }],
  [7000, { initiator: 'beacon', method: 'POST', url: 'https://shop.example/api/log', status: 0, duration: 0, requestSize: 12 }],
];

async function seedRecording(): Promise<void> {
  const start = Date.now() - 60_000;
  const custom = (at: number, tag: string, payload: unknown) => ({ type: 5, data: { tag, payload }, timestamp: start + at });
  const events = [
    ...recordedPage({ start, href: 'https://shop.example/checkout', text: 'Checkout: the recorded page', firstMoveAt: 400 }),
    // As the recorder hands them over: each when it is complete, so not in time order in the stream.
    ...NETWORK.map(([at, entry]) => custom(at, 'service-analytics:network', entry)).reverse(),
    ...CONSOLE.map(([at, entry]) => custom(at, 'service-analytics:console', entry)),
    { type: 5, data: { tag: 'service-analytics:stop', payload: { reason: 'stop' } }, timestamp: start + 8500 },
  ];
  await postRecording(server, SESSION, events, { durationMs: 8500, startUrl: 'https://shop.example/checkout' });
}

beforeAll(async () => {
  server = await startDashboardServer();
  browser = await launchChromium();
  await seedRecording();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openReplay(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const p = await signInWithReadKey(context, server);
  await p.evaluate((id) => (location.hash = `#/replay/${id}`), SESSION);
  await p.getByTestId('replay-time').waitFor();
  return p;
}

const shot = (p: Page, name: string): Promise<void> => screenshot(p, SHOTS, name);

const clockOf = async (p: Page): Promise<number> => Number(await p.getByTestId('replay-time').getAttribute('data-ms'));
const rowTexts = (p: Page, testId: string) => p.getByTestId(testId).locator('.timed-text').allTextContents();

describe('the replay page beside the player', () => {
  for (const viewport of [DESKTOP, PHONE]) {
    it(`shows the console and the network in step with the player at ${viewport.width} px; filters; a click seeks`, async () => {
      const p = await openReplay(viewport);
      try {
        // Console: every entry in time order, the level filter, the clock marking the current entry.
        await p.getByTestId('tab-console').click();
        expect((await p.getByTestId('tab-console').textContent())?.trim()).toBe('Console (4)');
        const consoleList = p.getByTestId('console-entries');
        expect(await rowTexts(p, 'console-entries')).toEqual(CONSOLE.map(([, e]) => e.message));
        await waitUntil('the first console entry to become current as the replay plays', async () => Number(await consoleList.getAttribute('data-current')) >= 0, 20_000);
        await p.getByTestId('console-entries').locator('details').first().locator('summary').click();
        await shot(p, `replay-console-${viewport.width}`);
        await p.getByTestId('console-level').selectOption('error');
        expect(await rowTexts(p, 'console-entries')).toEqual(['TypeError: total is undefined', 'Error: payment failed']);
        // A click seeks the player to the entry's moment; the entry becomes the current one.
        await consoleList.locator('.timed-pick').nth(1).click();
        await waitUntil('the player at the uncaught error', async () => (await clockOf(p)) >= 6000, 20_000);
        await waitUntil('the chosen entry to be current', async () => (await consoleList.locator('li').nth(1).getAttribute('aria-current')) === 'true', 20_000);
        await p.getByTestId('console-level').selectOption('warn');
        expect(await rowTexts(p, 'console-entries')).toEqual(['price list is stale', 'TypeError: total is undefined', 'Error: payment failed']);

        // Network: the requests, failed only, a click seeks, headers and bodies behind a details.
        await p.getByTestId('tab-network').click();
        expect((await p.getByTestId('tab-network').textContent())?.trim()).toBe('Network (4)');
        expect(await rowTexts(p, 'network-entries')).toEqual(['/api/cart?user=[redacted]', '/api/checkout', '/session', '/api/log']);
        const statuses = await p.getByTestId('network-entries').locator('.status').allTextContents();
        expect(statuses).toEqual(['200', '500', 'network error', 'sent']);
        await p.getByTestId('network-entries').locator('details').first().locator('summary').click();
        expect(await p.getByTestId('network-entries').locator('details').first().textContent()).toContain('[denied]');
        await shot(p, `replay-network-${viewport.width}`);
        await p.getByTestId('network-failed').check();
        expect(await rowTexts(p, 'network-entries')).toEqual(['/api/checkout', '/session']);
        await p.getByTestId('network-entries').locator('.timed-pick').first().click();
        await waitUntil('the player back at the failed checkout', async () => {
          const ms = await clockOf(p);
          return ms >= 3000 && ms < 6000;
        }, 20_000);
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      } finally {
        await p.context().close();
      }
    });
  }
});
