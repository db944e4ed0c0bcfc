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
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleEntry, NetworkEntry } from '../../protocol/replay-entries.js';
import { launchChromium } from '../../test-support/chromium.js';
import { type TestServer, startTestServer } from '../../test-support/server/test-server.js';
import { waitUntil } from '../../test-support/browser/harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHOTS = process.env.SA_DASHBOARD_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let out: string;
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
  const snapshot = {
    node: {
      type: 0,
      id: 1,
      childNodes: [
        { type: 1, id: 2, name: 'html', publicId: '', systemId: '' },
        {
          type: 2, id: 3, tagName: 'html', attributes: {}, childNodes: [
            { type: 2, id: 4, tagName: 'head', attributes: {}, childNodes: [] },
            { type: 2, id: 5, tagName: 'body', attributes: { style: 'font: 24px sans-serif; padding: 40px' }, childNodes: [{ type: 3, id: 6, textContent: 'Checkout: the recorded page' }] },
          ],
        },
      ],
    },
    initialOffset: { left: 0, top: 0 },
  };
  const custom = (at: number, tag: string, payload: unknown) => ({ type: 5, data: { tag, payload }, timestamp: start + at });
  const events = [
    { type: 4, data: { href: 'https://shop.example/checkout', width: 1024, height: 640 }, timestamp: start },
    { type: 2, data: snapshot, timestamp: start + 10 },
    ...Array.from({ length: 20 }, (_, i) => ({ type: 3, data: { source: 1, positions: [{ x: 40 + i * 20, y: 100 + i * 10, id: 5, timeOffset: 0 }] }, timestamp: start + 400 + i * 400 })),
    // As the recorder hands them over: each when it is complete, so not in time order in the stream.
    ...NETWORK.map(([at, entry]) => custom(at, 'service-analytics:network', entry)).reverse(),
    ...CONSOLE.map(([at, entry]) => custom(at, 'service-analytics:console', entry)),
    { type: 5, data: { tag: 'service-analytics:stop', payload: { reason: 'stop' } }, timestamp: start + 8500 },
  ];
  const res = await fetch(`${server.url}/api/v1/sessions/${SESSION}/recordings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `ApiKey ${server.project.writeKey}`, 'x-project-id': server.project.id },
    body: JSON.stringify({ events, duration: 8.5, event_offset: 0, is_final: true, start_url: 'https://shop.example/checkout' }),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'sa-dashboard-build-'));
  await build({ configFile: join(ROOT, 'dashboard/vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: out } });
  server = await startTestServer('sqlite', { dashboard: { root: out } });
  browser = await launchChromium();
  await seedRecording();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(out, { recursive: true, force: true });
});

async function openReplay(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const p = await context.newPage();
  await p.goto(`${server.url}/dashboard/`);
  await p.getByLabel('Project id').fill(server.project.id);
  await p.getByLabel('Read key').fill(server.project.readKey);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByTestId('stat-visitors').waitFor();
  await p.evaluate((id) => (location.hash = `#/replay/${id}`), SESSION);
  await p.getByTestId('replay-time').waitFor();
  return p;
}

async function shot(p: Page, name: string): Promise<void> {
  if (SHOTS === undefined) return;
  mkdirSync(SHOTS, { recursive: true });
  await p.evaluate(() => window.scrollTo(0, 0));
  await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

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
