/**
 * The dashboard (dashboard/, built with Vite as the server package ships it) served by the real
 * server, in Chromium: sign in with the read key, the overview shows what the report endpoints
 * answer for the same range, the live view lists the newest events, a funnel built by clicking
 * shows the funnel report's numbers, and a recorded session replays (the player's clock moves).
 *
 * Set SA_DASHBOARD_SCREENSHOTS=DIR to keep screenshots at desktop (1280×800) and phone (390×844)
 * widths there.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCount, formatDuration, formatPercent } from '../../dashboard/src/lib/format.js';
import { generateKey } from '../../server/api-keys.js';
import { launchChromium } from '../../test-support/chromium.js';
import { type TestServer, startTestServer } from '../../test-support/server/test-server.js';
import { waitUntil } from '../../test-support/browser/harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHOTS = process.env.SA_DASHBOARD_SCREENSHOTS;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

let out: string;
let server: TestServer;
let browser: Browser;

/** A UUIDv7 of `ms` with a random tail, as the client makes them. */
function uuid7(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  const rnd = () => Math.floor(Math.random() * 0x10000).toString(16).padStart(4, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${rnd().slice(1)}-8${rnd().slice(1)}-${rnd()}${rnd()}${rnd()}`;
}

const page = (path: string, referrer = '') => JSON.stringify({ url: `https://shop.example${path}`, path, referrer, title: path, search: '' });

/** Three sessions of page views, two signups, an error and a performance sample, all in the last minutes. */
async function seed(now: number): Promise<string[]> {
  const sessions = [uuid7(now - 240_000), uuid7(now - 180_000), uuid7(now - 120_000)];
  const events: unknown[] = [];
  const add = (session: string, k: number, type: string, at: number, properties: Record<string, string | number>) =>
    events.push({ event_id: uuid7(at), event_type: type, session_id: session, timestamp: new Date(at).toISOString(), user_agent: UA, properties: { anonymous_id: `anon-${k}`, screen: JSON.stringify({ width: 1280, height: 800 }), ...properties } });
  sessions.forEach((s, k) => {
    const t = now - 200_000 + k * 30_000;
    add(s, k, 'page_view', t, { page: page('/', k === 0 ? 'https://news.example/item' : '') });
    if (k < 2) add(s, k, 'page_view', t + 10_000, { page: page('/pricing') });
    if (k < 2) add(s, k, 'signup', t + 20_000, { page: page('/pricing'), plan: 'pro' });
  });
  add(sessions[0]!, 0, 'error', now - 60_000, { page: page('/pricing'), message: 'TypeError: price is undefined', stack: 'TypeError: price is undefined\n    at total (app.js:10:5)' });
  add(sessions[1]!, 1, 'performance', now - 50_000, { page: page('/'), largestContentfulPaint: 1800, firstContentfulPaint: 900, cumulativeLayoutShift: 0.02, interactionToNextPaint: 120 });
  const res = await server.postBatch(events);
  expect(res.status).toBe(200);
  // A recording of the first session: a page, then the mouse moving for a few seconds.
  const start = now - 200_000;
  const snapshot = {
    node: {
      type: 0,
      id: 1,
      childNodes: [
        { type: 1, id: 2, name: 'html', publicId: '', systemId: '' },
        {
          type: 2, id: 3, tagName: 'html', attributes: {}, childNodes: [
            { type: 2, id: 4, tagName: 'head', attributes: {}, childNodes: [] },
            { type: 2, id: 5, tagName: 'body', attributes: { style: 'font: 24px sans-serif; padding: 40px' }, childNodes: [{ type: 3, id: 6, textContent: 'Pricing: the recorded page' }] },
          ],
        },
      ],
    },
    initialOffset: { left: 0, top: 0 },
  };
  const recorded = [
    { type: 4, data: { href: 'https://shop.example/', width: 1024, height: 640 }, timestamp: start },
    { type: 2, data: snapshot, timestamp: start + 10 },
    ...Array.from({ length: 20 }, (_, i) => ({ type: 3, data: { source: 1, positions: [{ x: 40 + i * 20, y: 100 + i * 10, id: 5, timeOffset: 0 }] }, timestamp: start + 500 + i * 400 })),
  ];
  const rec = await fetch(`${server.url}/api/v1/sessions/${sessions[0]}/recordings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `ApiKey ${server.project.writeKey}`, 'x-project-id': server.project.id },
    body: JSON.stringify({ events: recorded, duration: 8.5, event_offset: 0, is_final: true, start_url: 'https://shop.example/' }),
  });
  expect(rec.status).toBe(200);
  return sessions;
}

/** GETs a report with the read key. */
async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${server.url}/api/v1/${path}`, { headers: { authorization: `ApiKey ${server.project.readKey}`, 'x-project-id': server.project.id } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

async function shot(p: Page, name: string): Promise<void> {
  if (SHOTS === undefined) return;
  mkdirSync(SHOTS, { recursive: true });
  await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Opens the server's root (redirected to the dashboard) and signs in with the read key. */
async function signIn(viewport: { width: number; height: number }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const p = await context.newPage();
  await p.goto(`${server.url}/`);
  expect(new URL(p.url()).pathname).toBe('/dashboard/');
  await p.getByLabel('Project id').fill(server.project.id);
  await p.getByLabel('Read key').fill(server.project.readKey);
  await shot(p, `sign-in-${viewport.width}`);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByTestId('stat-visitors').waitFor();
  // The key is in this tab's sessionStorage, never in the address.
  expect(p.url()).not.toContain(server.project.readKey);
  return p;
}

let sessions: string[];

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'sa-dashboard-build-'));
  await build({ configFile: join(ROOT, 'dashboard/vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: out } });
  server = await startTestServer('sqlite', { dashboard: { root: out } });
  browser = await launchChromium();
  sessions = await seed(Date.now());
});
afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await server?.close();
  rmSync(out, { recursive: true, force: true });
});

describe('the dashboard in Chromium', () => {
  it('signs in and shows on the overview what the report endpoints answer for the same range', async () => {
    const p = await signIn(DESKTOP);
    const overview = p.getByTestId('overview');
    const from = await overview.getAttribute('data-from');
    const to = await overview.getAttribute('data-to');
    const range = `from=${from}&to=${to}`;
    const series = await api<{ totals: { visitors: number; page_views: number; events: number } }>(`reports/timeseries?${range}&interval=day`);
    const stats = await api<{ sessions: number; bounce_rate: number | null; average_duration_ms: number | null }>(`reports/sessions?${range}`);
    expect(series.totals.page_views).toBe(5);
    const text = async (id: string) => (await p.getByTestId(id).textContent())?.trim();
    expect(await text('stat-visitors')).toBe(formatCount(series.totals.visitors));
    expect(await text('stat-page-views')).toBe(formatCount(series.totals.page_views));
    expect(await text('stat-events')).toBe(formatCount(series.totals.events));
    expect(await text('stat-sessions')).toBe(formatCount(stats.sessions));
    expect(await text('stat-bounce-rate')).toBe(formatPercent(stats.bounce_rate));
    expect(await text('stat-duration')).toBe(formatDuration(stats.average_duration_ms));
    await p.getByTestId('top-page').getByText('/pricing').waitFor();
    await shot(p, 'overview-1280');
    await p.getByRole('button', { name: 'Today' }).click();
    await p.getByTestId('chart').getByText('By hour').waitFor();

    // Live.
    await p.getByRole('link', { name: 'Live' }).click();
    await p.getByTestId('live-events-list').getByText('signup').first().waitFor();
    await p.getByTestId('live-totals').locator('svg').waitFor();
    await shot(p, 'live-1280');

    // Errors: a click shows the last stack.
    await p.getByRole('link', { name: 'Errors' }).click();
    await p.getByText('TypeError: price is undefined').first().click();
    await p.getByText('at total (app.js:10:5)').waitFor();
    await shot(p, 'errors-1280');
    await p.getByRole('link', { name: 'Web vitals' }).click();
    await p.getByTestId('vitals').locator('table').waitFor();
    await shot(p, 'vitals-1280');

    // Sign-out forgets the key: the tab's storage is empty and a reload asks again.
    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByLabel('Read key').waitFor();
    expect(await p.evaluate(() => JSON.stringify(window.sessionStorage))).toBe('{}');
    await p.reload();
    await p.getByLabel('Read key').waitFor();
  });

  it('builds a funnel by clicking and shows the funnel report', async () => {
    const p = await signIn(DESKTOP);
    await p.getByRole('link', { name: 'Funnels' }).click();
    const select = p.getByLabel('Step to add');
    await select.waitFor();
    await select.selectOption('page:/');
    await p.getByRole('button', { name: 'Add step' }).click();
    await select.selectOption('page:/pricing');
    await p.getByRole('button', { name: 'Add step' }).click();
    await select.selectOption('event:signup');
    await p.getByRole('button', { name: 'Add step' }).click();
    await waitUntil('three funnel steps', async () => (await p.getByTestId('funnel-step').count()) === 3, 10_000);
    const shown = await p.getByTestId('funnel-sessions').allTextContents();
    const funnel = await api<{ steps: Array<{ sessions: number }> }>(`reports/funnel?step=page:/&step=page:/pricing&step=event:signup&from=${new Date(Date.now() - 30 * 86_400_000).toISOString()}`);
    expect(funnel.steps.map((s) => s.sessions)).toEqual([3, 2, 2]);
    expect(shown.map((t) => Number(t.split(' ')[0]))).toEqual(funnel.steps.map((s) => s.sessions));
    await shot(p, 'funnel-1280');
  });

  it('on a demo server reached over loopback, one button signs in with the demo project', async () => {
    // The demo's keys, made as `start --demo` makes them; the project is stored once the server runs.
    const now = Date.now();
    const projectId = `proj_demo${now.toString(36)}`;
    const write = generateKey(projectId, 'write', now);
    const read = generateKey(projectId, 'read', now);
    const demoServer = await startTestServer('sqlite', { dashboard: { root: out }, demo: { projectId, apiKey: write.key, readKey: read.key } });
    try {
      await demoServer.store.createProject({ id: projectId, name: 'demo', createdAt: now, fullIp: false, corsOrigins: [], bots: 'keep' });
      await demoServer.store.createKey(write.record);
      await demoServer.store.createKey(read.record);
      const context = await browser.newContext({ viewport: DESKTOP });
      const p = await context.newPage();
      await p.goto(`${demoServer.url}/dashboard/`);
      await p.getByRole('button', { name: 'Open the demo project' }).click();
      await p.getByTestId('stat-visitors').waitFor();
      expect((await p.getByTestId('stat-visitors').textContent())?.trim()).toBe('0');
      expect(p.url()).not.toContain(read.key);
      await context.close();
    } finally {
      await demoServer.close();
    }
  });

  it('opens a session from the list and replays it: the player clock moves', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const p = await signIn(viewport);
      if (viewport === PHONE) await shot(p, 'overview-390');
      await p.getByRole('link', { name: 'Sessions' }).click();
      const link = p.getByTestId('session-link').first();
      // Shown by the random tail of the UUIDv7, not its time prefix.
      expect((await link.textContent())?.trim()).toBe(sessions[0]!.slice(-12));
      await link.click();
      const clock = p.getByTestId('replay-time');
      await clock.waitFor();
      const first = Number(await clock.getAttribute('data-ms'));
      await waitUntil('the replay to advance', async () => Number(await clock.getAttribute('data-ms')) > first, 10_000);
      await p.getByTestId('replay-events').getByText('page_view').first().waitFor();
      await shot(p, `replay-${viewport.width}`);
      await p.context().close();
    }
  });
});
