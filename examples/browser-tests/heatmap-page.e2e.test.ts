/**
 * The dashboard's Heatmaps page (built with Vite as the server package ships it, served by the real
 * server), in Chromium at desktop (1280×800) and phone (390×844) widths: a page's clicks are drawn
 * on the elements clicked, over a recording's snapshot of the page rendered at the recorded width,
 * with the scroll map over it and the same numbers in tables; a page without a recording is drawn
 * over the live page (its site answered by the browser context itself: no request leaves the
 * machine). No page is wider than its viewport, and no page breaks the Content-Security-Policy.
 *
 * Set SA_DASHBOARD_SCREENSHOTS=DIR to keep screenshots at both widths there.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test-support/chromium.js';
import { type TestServer, startTestServer } from '../../test-support/server/test-server.js';
import { waitUntil } from '../../test-support/browser/harness.js';
import { watchCspViolations } from '../../test-support/browser/csp-violations.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHOTS = process.env.SA_DASHBOARD_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const SESSION = 'heatmap-page-recorded';

let out: string;
let server: TestServer;
let browser: Browser;
const cspViolations: string[] = [];

/** The live page of `/about` as its site would serve it. */
const ABOUT_HTML = `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;font:20px sans-serif">
<header style="background:#063;color:#fff;padding:24px">Shop · About us</header>
<main style="padding:40px"><p id="team">Our team</p><div style="height:1800px;background:#f4f0e8">History</div></main></body></html>`;

async function post(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `ApiKey ${server.project.writeKey}`, 'x-project-id': server.project.id },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
}

/** A serialized DOM (rrweb-snapshot's format) of the pricing page, ids numbered as made. */
function pricingSnapshot(): unknown {
  let id = 0;
  const text = (textContent: string) => ({ type: 3, id: ++id, textContent });
  const el = (tagName: string, attributes: Record<string, string>, childNodes: unknown[] = []) => ({ type: 2, id: ++id, tagName, attributes, childNodes });
  const doctype = { type: 1, id: ++id, name: 'html', publicId: '', systemId: '' };
  const html = el('html', {}, [
    el('head', {}, []),
    el('body', { style: 'margin: 0; font: 18px sans-serif; color: #222' }, [
      el('header', { style: 'height: 80px; background: #223; color: #fff; padding: 24px 40px; box-sizing: border-box' }, [text('Shop · Pricing')]),
      el('main', { style: 'padding: 40px' }, [
        el('h1', {}, [text('Choose a plan')]),
        el('button', { id: 'buy', style: 'width: 240px; height: 60px; font-size: 20px' }, [text('Buy now')]),
        el('a', { 'data-testid': 'plan', href: '#', style: 'display: block; margin-top: 40px; width: 300px; height: 30px' }, [text('Compare plans')]),
        el('section', { style: 'height: 1600px; margin-top: 40px; background: linear-gradient(#eef, #fee); padding: 20px' }, [text('The long part of the page')]),
      ]),
    ]),
  ]);
  return { node: { type: 0, id: ++id, childNodes: [doctype, html] }, initialOffset: { left: 0, top: 0 } };
}

/** Clicks: [selector, relativeX, relativeY, times]. */
const CLICKS: Array<[string, number, number, number]> = [
  ['#buy', 0.5, 0.5, 12],
  ['#buy', 0.15, 0.8, 4],
  ['a[data-testid="plan"]', 0.2, 0.5, 6],
  ['#gone', 0.5, 0.5, 3],
];
/** Scroll depths of the pricing page's page views. */
const DEPTHS = [100, 100, 80, 62, 45, 45, 30, 25, 20, 15];

async function seed(): Promise<void> {
  const start = Date.now() - 3_600_000;
  const recorded = [
    { type: 4, data: { href: 'https://shop.example/pricing', width: 1280, height: 800 }, timestamp: start },
    { type: 2, data: pricingSnapshot(), timestamp: start + 10 },
    ...Array.from({ length: 10 }, (_, i) => ({ type: 3, data: { source: 1, positions: [{ x: 40 + i * 20, y: 100, id: 5, timeOffset: 0 }] }, timestamp: start + 500 + i * 500 })),
  ];
  await post(`/api/v1/sessions/${SESSION}/recordings`, { events: recorded, duration: 5.5, event_offset: 0, is_final: true, start_url: 'https://shop.example/pricing' });
  const page = (path: string) => JSON.stringify({ path, url: `https://shop.example${path}` });
  let n = 0;
  const event = (type: string, session: string, at: number, path: string, properties: Record<string, unknown> = {}) => ({
    event_id: `0191${String(++n).padStart(4, '0')}-0000-7000-8000-000000000000`,
    event_type: type,
    session_id: session,
    timestamp: new Date(start + at).toISOString(),
    properties: { page: page(path), ...properties },
  });
  await post('/api/v1/events/batch', [
    event('page_view', SESSION, 100, '/pricing'),
    ...DEPTHS.map((_, i) => event('page_view', `visitor-${i}`, 2000 + i, '/pricing')),
    ...DEPTHS.map((d, i) => event('scroll_depth', `visitor-${i}`, 3000 + i, '/pricing', { maxScrollDepth: d, action: 'scroll' })),
    ...CLICKS.flatMap(([selector, x, y, times], k) =>
      Array.from({ length: times }, (_, i) => event('click', `visitor-${i % 5}`, 4000 + k * 100 + i, '/pricing', { selector, relativeX: x, relativeY: y, element: 'button' })),
    ),
    event('page_view', 'visitor-about', 5000, '/about'),
    event('click', 'visitor-about', 5100, '/about', { selector: '#team', relativeX: 0.5, relativeY: 0.5 }),
  ]);
}

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'sa-dashboard-build-'));
  await build({ configFile: join(ROOT, 'dashboard/vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: out } });
  server = await startTestServer('sqlite', { dashboard: { root: out } });
  browser = await launchChromium();
  await seed();
});

afterAll(async () => {
  expect(cspViolations).toEqual([]);
  await browser?.close();
  await server?.close();
  rmSync(out, { recursive: true, force: true });
});

async function openHeatmaps(viewport: { width: number; height: number }, path: string): Promise<Page> {
  const context = await browser.newContext({ viewport });
  await watchCspViolations(context, cspViolations);
  // The recorded site, answered here: the live backdrop loads it without leaving the machine.
  await context.route('https://shop.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: ABOUT_HTML }));
  const p = await context.newPage();
  await p.goto(`${server.url}/dashboard/`);
  await p.getByLabel('Project id').fill(server.project.id);
  await p.getByLabel('Read key').fill(server.project.readKey);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByTestId('stat-visitors').waitFor();
  await p.goto(`${server.url}/dashboard/?page=${encodeURIComponent(path)}#/heatmaps`);
  await p.getByTestId('heatmap-map').waitFor();
  return p;
}

async function shot(p: Page, name: string): Promise<void> {
  if (SHOTS === undefined) return;
  mkdirSync(SHOTS, { recursive: true });
  await p.evaluate(() => window.scrollTo(0, 0));
  await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

const rowsOf = (p: Page, testId: string) =>
  p.getByTestId(testId).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));

describe('the Heatmaps page', () => {
  for (const viewport of [DESKTOP, PHONE]) {
    it(`draws the clicks on the elements clicked and the scroll map over the recorded page at ${viewport.width} px`, async () => {
      const p = await openHeatmaps(viewport, '/pricing');
      try {
        expect(await p.getByTestId('heatmap-map').getAttribute('data-backdrop')).toBe('snapshot');
        const spots = p.getByTestId('click-spots').locator('circle');
        // Three cells on two elements; #gone is not on the recorded page.
        await waitUntil('the click spots', async () => (await spots.count()) === 3, 20_000);
        const frame = p.frameLocator('.heatmap-snapshot iframe');
        const buy = (await frame.locator('#buy').boundingBox())!;
        const plan = (await frame.locator('a[data-testid="plan"]').boundingBox())!;
        const centres = await Promise.all(
          [0, 1, 2].map(async (i) => {
            const box = (await spots.nth(i).boundingBox())!;
            return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
          }),
        );
        const inside = (point: { x: number; y: number }, box: { x: number; y: number; width: number; height: number }) =>
          point.x >= box.x && point.x <= box.x + box.width && point.y >= box.y && point.y <= box.y + box.height;
        // Each spot in its element, at its cell: #buy's centre cell and its lower-left one, the plan link's left.
        expect(centres.filter((c) => inside(c, buy))).toHaveLength(2);
        expect(centres.filter((c) => inside(c, plan))).toHaveLength(1);
        const lowerLeft = centres.find((c) => inside(c, buy) && c.x < buy.x + buy.width / 2)!;
        expect(Math.abs(lowerLeft.x - (buy.x + 0.15 * buy.width))).toBeLessThan(buy.width / 10);
        expect(lowerLeft.y).toBeGreaterThan(buy.y + buy.height / 2);

        expect(await rowsOf(p, 'heatmap-clicks')).toEqual([
          ['#buy', '16', '64%', 'yes'],
          ['a[data-testid="plan"]', '6', '24%', 'yes'],
          ['#gone', '3', '12%', 'not on this page'],
        ]);
        const scroll = await rowsOf(p, 'heatmap-scroll');
        expect(scroll.map((r) => r[2])).toEqual(['100%', '90%', '70%', '60%', '40%', '40%', '30%', '30%', '20%', '20%']);
        expect(await p.getByTestId('scroll-bands').locator('.scroll-line').count()).toBe(10);
        expect(await p.getByTestId('heatmap-summary').textContent()).toContain('25 clicks · 10 page views with a scroll depth · drawn over a recording');
        expect(await p.getByTestId('heatmap-summary').textContent()).toContain('at 1280 px');
        await shot(p, `heatmap-${viewport.width}`);
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      } finally {
        await p.context().close();
      }
    });
  }

  it('shows a shared link the heatmap over the live page: it may not read recordings', async () => {
    const res = await fetch(`${server.url}/api/v1/links`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${server.project.adminKey}`, 'x-project-id': server.project.id },
      body: JSON.stringify({ name: 'heatmap wall' }),
    });
    expect(res.status).toBe(201);
    const { path } = (await res.json()) as { path: string };
    const context = await browser.newContext({ viewport: DESKTOP });
    await watchCspViolations(context, cspViolations);
    await context.route('https://shop.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: ABOUT_HTML }));
    const p = await context.newPage();
    try {
      await p.goto(`${server.url}${path}`);
      await p.getByTestId('shared-view').waitFor();
      await p.goto(`${server.url}/dashboard/?page=${encodeURIComponent('/pricing')}#/heatmaps`);
      await p.getByTestId('heatmap-map').waitFor();
      expect(await p.getByTestId('heatmap-map').getAttribute('data-backdrop')).toBe('live');
      expect((await rowsOf(p, 'heatmap-clicks')).map((r) => r.slice(0, 2))).toEqual([
        ['#buy', '16'],
        ['a[data-testid="plan"]', '6'],
        ['#gone', '3'],
      ]);
    } finally {
      await context.close();
    }
  });

  it('draws a page without a recording over the live page, its clicks in the table', async () => {
    const p = await openHeatmaps(DESKTOP, '/about');
    try {
      expect(await p.getByTestId('heatmap-map').getAttribute('data-backdrop')).toBe('live');
      const live = p.locator('iframe.heatmap-live');
      expect([await live.getAttribute('sandbox'), await live.getAttribute('src')]).toEqual(['', 'https://shop.example/about']);
      await p.frameLocator('iframe.heatmap-live').locator('#team').waitFor();
      expect(await rowsOf(p, 'heatmap-clicks')).toEqual([['#team', '1', '100%', '—']]);
      await shot(p, 'heatmap-live-1280');
      // The chooser offers the pages viewed, and choosing one is a new view.
      await p.getByTestId('heatmap-path').selectOption('/pricing');
      await waitUntil('the pricing page drawn', async () => (await p.getByTestId('heatmap-map').getAttribute('data-backdrop')) === 'snapshot', 20_000);
      expect(decodeURIComponent(await p.evaluate(() => location.search))).toContain('page=/pricing');
    } finally {
      await p.context().close();
    }
  });
});
