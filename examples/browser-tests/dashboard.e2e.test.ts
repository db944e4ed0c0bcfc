/**
 * The dashboard (dashboard/, built with Vite as the server package ships it) served by the real
 * server (a real SQLite file, events sent through the real API), in Chromium: sign in with the
 * read key; every panel shows what the report endpoints answer for the same query, each headline
 * number with its change against the previous period, and the visitors of the last 5 minutes
 * beside the title; a top row
 * filters every panel, as a chip, in the address's query (and survives a reload); the experiments
 * page shows the experiment report per variant; a funnel built by clicking shows the funnel
 * report's numbers, and its steps too survive a reload; on a phone the navigation is a menu that
 * opens and closes by keyboard; the countries of the seed's client addresses are listed by name
 * and filter like any list; a recorded session replays (the player's clock moves, its timeline
 * scrubs), and an event links to its session's replay. All of it under the server's
 * Content-Security-Policy (server/static-files.ts), with no violation reported by any page, frame
 * or worker.
 *
 * Set SA_DASHBOARD_SCREENSHOTS=DIR to keep screenshots at desktop (1280×800) and phone (390×844)
 * widths there.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { countryFlag, countryName } from '../../dashboard/src/lib/country.js';
import { formatCount, formatDuration, formatPercent, formatVital } from '../../dashboard/src/lib/format.js';
import { type PeriodChange, changeLabel, changeText, percentChange, pointChange, previousPeriodName, previousSpan } from '../../dashboard/src/lib/period-change.js';
import { parseViewState } from '../../dashboard/src/lib/view-state.js';
import { generateKey } from '../../server/api-keys.js';
import { NO_STORE, contentSecurityPolicy } from '../../server/static-files.js';
import { launchChromium } from '../../test-support/chromium.js';
import { type TestServer, startTestServer } from '../../test-support/server/test-server.js';
import { DESKTOP, PHONE, dashboardBuild, postRecording, recordedPage, screenshot, signInWithReadKey, startDashboardServer } from '../../test-support/browser/dashboard-rig.js';
import { waitUntil } from '../../test-support/browser/harness.js';
import { watchCspViolations } from '../../test-support/browser/csp-violations.js';

const SHOTS = process.env.SA_DASHBOARD_SCREENSHOTS;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
const PHONE_UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

let server: TestServer;
let browser: Browser;
/** Content-Security-Policy violations reported since the last test ended. */
const cspViolations: string[] = [];

/**
 * A browser context whose Content-Security-Policy violations land in {@link cspViolations}: the
 * `securitypolicyviolation` events of its documents, and Chromium's console reports, which also
 * come from frames (the replay's iframe) and workers.
 */
async function newContext(options: BrowserContextOptions): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await watchCspViolations(context, cspViolations);
  return context;
}

/** A UUIDv7 of `ms` with a random tail, as the client makes them. */
function uuid7(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0');
  const rnd = () => Math.floor(Math.random() * 0x10000).toString(16).padStart(4, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${rnd().slice(1)}-8${rnd().slice(1)}-${rnd()}${rnd()}${rnd()}`;
}

const page = (path: string, referrer = '') => JSON.stringify({ url: `https://shop.example${path}`, path, referrer, title: path, search: '' });

/**
 * Client addresses of known countries (`server/reports/country.test.ts`), sent as the address a
 * trusted proxy on this machine saw: the server of these tests trusts loopback proxies.
 */
const GB_CLIENT = '81.2.69.160';
const US_CLIENT = '8.8.8.8';

/**
 * Four sessions, all in the last minutes: three on a desktop Chrome (one from a news site) from the
 * United Kingdom, one on an iPhone from a search engine from the United States; page views, two
 * signups, an error, a performance sample, and the exposures of two experiments with purchases
 * before and after them. Eight days before, in the previous period of the 7-day view and in no
 * view's range the tests open but 30 and 90 days: two visitors, one who bounced, one who read ten
 * pages in 90 s, from this machine (no country).
 */
async function seed(now: number): Promise<string[]> {
  const sessions = [uuid7(now - 240_000), uuid7(now - 180_000), uuid7(now - 120_000), uuid7(now - 100_000)];
  const events: unknown[] = [];
  const add = (k: number, type: string, at: number, properties: Record<string, string | number | boolean>) =>
    events.push({
      event_id: uuid7(at),
      event_type: type,
      session_id: sessions[k],
      timestamp: new Date(at).toISOString(),
      user_agent: k === 3 ? PHONE_UA : UA,
      properties: { anonymous_id: `anon-${k}`, screen: JSON.stringify(k === 3 ? { width: 390, height: 844 } : { width: 1280, height: 800 }), ...properties },
    });
  const referrers = ['https://news.example/item', '', '', 'https://www.google.com/'];
  sessions.forEach((_, k) => {
    const t = now - 200_000 + k * 30_000;
    add(k, 'page_view', t, { page: page('/', referrers[k]) });
    if (k !== 2) add(k, 'page_view', t + 10_000, { page: page('/pricing', 'https://shop.example/') });
    if (k < 2) add(k, 'signup', t + 20_000, { page: page('/pricing', 'https://shop.example/'), plan: 'pro' });
  });
  add(0, 'error', now - 60_000, { page: page('/pricing'), message: 'TypeError: price is undefined', stack: 'TypeError: price is undefined\n    at total (app.js:10:5)' });
  add(1, 'performance', now - 50_000, { page: page('/'), largestContentfulPaint: 1800, firstContentfulPaint: 900, cumulativeLayoutShift: 0.02, interactionToNextPaint: 120 });
  // cta-copy: control anon-0 (bought before exposure only) and anon-2 (bought after), free-trial
  // anon-1 and anon-3 (both bought after): control 1 of 2, free-trial 2 of 2.
  const exposure = (k: number, at: number, experiment: string, variant: string) =>
    add(k, 'experiment_exposure', at, { page: page('/pricing'), experiment, variant, experiment_id: `exp_${experiment}`, variant_id: `var_${variant}`, is_control: variant === 'control' });
  add(0, 'purchase', now - 46_000, { page: page('/pricing'), amount: 10 });
  exposure(0, now - 45_000, 'cta-copy', 'control');
  exposure(1, now - 44_000, 'cta-copy', 'free-trial');
  exposure(2, now - 43_000, 'cta-copy', 'control');
  exposure(3, now - 42_000, 'cta-copy', 'free-trial');
  exposure(1, now - 41_000, 'pricing-table', 'wide');
  for (const k of [1, 2, 3]) add(k, 'purchase', now - 30_000 + k * 1000, { page: page('/pricing'), amount: 10 });
  const before = now - 8 * 86_400_000;
  const sessionsBefore = [uuid7(before), uuid7(before)];
  const earlier = (n: number, at: number, path: string) =>
    events.push({
      event_id: uuid7(at),
      event_type: 'page_view',
      session_id: sessionsBefore[n],
      timestamp: new Date(at).toISOString(),
      user_agent: UA,
      properties: { anonymous_id: `anon-before-${n}`, page: page(path) },
    });
  earlier(0, before, '/');
  for (let i = 0; i < 10; i++) earlier(1, before + i * 10_000, i === 0 ? '/' : '/pricing');
  // One request per client address: the server finds a request's country once, from its address.
  const sessionOf = (e: unknown) => (e as { session_id: string }).session_id;
  const fromUs = events.filter((e) => sessionOf(e) === sessions[3]);
  const fromGb = events.filter((e) => sessions.includes(sessionOf(e)) && sessionOf(e) !== sessions[3]);
  const local = events.filter((e) => !sessions.includes(sessionOf(e)));
  for (const [batch, client] of [[fromGb, GB_CLIENT], [fromUs, US_CLIENT], [local, null]] as const) {
    const res = await server.postBatch(batch, client === null ? {} : { headers: { 'x-forwarded-for': client } });
    expect(res.status).toBe(200);
  }
  // A recording of the first session: a page, then the mouse moving for a few seconds.
  const start = now - 200_000;
  const recorded = recordedPage({ start, href: 'https://shop.example/', text: 'Pricing: the recorded page', firstMoveAt: 500 });
  await postRecording(server, sessions[0]!, recorded, { durationMs: 8500, startUrl: 'https://shop.example/' });
  return sessions;
}

/** GETs a report with the read key. */
async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${server.url}/api/v1/${path}`, { headers: { authorization: `ApiKey ${server.project.readKey}`, 'x-project-id': server.project.id } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

const shot = (p: Page, name: string): Promise<void> => screenshot(p, SHOTS, name);

/** Waits until `read()` gives `expected` (panels load on their own), then asserts it, so a mismatch shows both. */
async function expectShown(what: string, read: () => Promise<unknown>, expected: unknown): Promise<void> {
  await waitUntil(what, async () => JSON.stringify(await read()) === JSON.stringify(expected), 15_000).catch(() => undefined);
  expect(await read()).toEqual(expected);
}

/** The page's report range and the given filters as report parameters. */
async function viewQuery(p: Page, filters: Record<string, string> = {}): Promise<string> {
  const view = p.getByTestId('view');
  const params = new URLSearchParams({ from: (await view.getAttribute('data-from')) ?? '', to: (await view.getAttribute('data-to')) ?? '', ...filters });
  return params.toString();
}

/** A country as the Countries list writes it: flag, name, code. */
const countryText = (code: string): string => `${countryFlag(code)} ${countryName(code)} (${code})`;

/** The overview's top lists: their dimension, which count they show, how an empty value reads, and any other. */
const TOP_PANELS: ReadonlyArray<{ dimension: string; count: 'events' | 'visitors'; empty: string; text?: (value: string) => string }> = [
  { dimension: 'page', count: 'events', empty: '(none)' },
  { dimension: 'referrer', count: 'visitors', empty: '(direct)' },
  { dimension: 'channel', count: 'visitors', empty: '(none)' },
  { dimension: 'browser', count: 'visitors', empty: '(unknown)' },
  { dimension: 'os', count: 'visitors', empty: '(unknown)' },
  { dimension: 'device', count: 'visitors', empty: '(unknown)' },
  { dimension: 'country', count: 'visitors', empty: '(unknown)', text: countryText },
  { dimension: 'custom_event', count: 'events', empty: '(none)' },
];

type TopAnswer = { rows: Array<{ value: string; events: number; visitors: number }> };

/** What one panel shows: a top list's rows as [value, count], or its line when it is empty. */
async function shownTop(p: Page, dimension: string): Promise<string[][] | string> {
  const panel = p.getByTestId(`top-${dimension}`);
  if ((await panel.getAttribute('data-state')) !== 'ready') return 'loading';
  const rows = await panel.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells, (c) => c.textContent?.trim() ?? '')));
  return rows.length > 0 ? rows : ((await panel.locator('p').first().textContent()) ?? '');
}

type SeriesAnswer = { totals: { visitors: number; page_views: number; events: number } };
type StatsAnswer = { sessions: number; bounce_rate: number | null; average_duration_ms: number | null };

/** The change notes under the headline numbers, in order: [test id, what it shows, what it says]; 'loading' until each is there. */
const shownChanges = (p: Page) =>
  p
    .getByTestId('overview')
    .locator('.stat-change')
    .evaluateAll((notes) =>
      notes.map((n) =>
        n.getAttribute('data-state') === 'ready'
          ? [n.getAttribute('data-testid'), n.querySelector('[aria-hidden="true"]')?.textContent ?? '', n.querySelector('.visually-hidden')?.textContent ?? '']
          : 'loading',
      ),
    );

/**
 * What the change notes should show: the report endpoints asked for the previous period of the
 * page's range (as long, just before, same filters), compared with the current answers.
 */
async function expectedChanges(p: Page, filters: Record<string, string>, series: SeriesAnswer, stats: StatsAnswer): Promise<string[][]> {
  const view = p.getByTestId('view');
  const span = { from: Date.parse((await view.getAttribute('data-from')) ?? ''), to: Date.parse((await view.getAttribute('data-to')) ?? '') };
  const previous = previousSpan(span);
  const query = new URLSearchParams({ from: new Date(previous.from).toISOString(), to: new Date(previous.to).toISOString(), ...filters }).toString();
  const before = await api<SeriesAnswer>(`reports/timeseries?${query}&interval=day`);
  const beforeStats = await api<StatsAnswer>(`reports/sessions?${query}`);
  const period = previousPeriodName(parseViewState(new URL(p.url()).search).range, span);
  const note = (id: string, change: PeriodChange) => [id, changeText(change), changeLabel(change, period)];
  return [
    note('stat-visitors-change', percentChange(series.totals.visitors, before.totals.visitors)),
    note('stat-page-views-change', percentChange(series.totals.page_views, before.totals.page_views)),
    note('stat-events-change', percentChange(series.totals.events, before.totals.events)),
    note('stat-sessions-change', percentChange(stats.sessions, beforeStats.sessions)),
    note('stat-bounce-rate-change', pointChange(stats.bounce_rate, beforeStats.bounce_rate)),
    note('stat-duration-change', percentChange(stats.average_duration_ms, beforeStats.average_duration_ms)),
  ];
}

/**
 * The overview shows, for its range and `filters`, the numbers of the report endpoints for the
 * same query, and their changes against the same endpoints' answers for the previous period.
 */
async function expectOverviewAsApi(p: Page, filters: Record<string, string> = {}): Promise<{ visitors: number; changes: unknown[] }> {
  const query = await viewQuery(p, filters);
  const series = await api<SeriesAnswer>(`reports/timeseries?${query}&interval=day`);
  const stats = await api<StatsAnswer>(`reports/sessions?${query}`);
  const text = async (id: string) => (await p.getByTestId(id).textContent())?.trim();
  const headline = async () => Promise.all(['stat-visitors', 'stat-page-views', 'stat-events', 'stat-sessions', 'stat-bounce-rate', 'stat-duration'].map(text));
  await expectShown('the headline numbers', headline, [
    formatCount(series.totals.visitors),
    formatCount(series.totals.page_views),
    formatCount(series.totals.events),
    formatCount(stats.sessions),
    formatPercent(stats.bounce_rate),
    formatDuration(stats.average_duration_ms),
  ]);
  const changes = await expectedChanges(p, filters, series, stats);
  await expectShown('the changes against the previous period', () => shownChanges(p), changes);
  for (const panel of TOP_PANELS) {
    const top = await api<TopAnswer>(`reports/top/${panel.dimension}?${query}&limit=8`);
    const text = (value: string) => (value === '' ? panel.empty : (panel.text?.(value) ?? value));
    const expected = top.rows.length === 0 ? 'Nothing in this range.' : top.rows.map((r) => [text(r.value), formatCount(r[panel.count])]);
    await expectShown(`the top ${panel.dimension} list`, () => shownTop(p, panel.dimension), expected);
  }
  return { visitors: series.totals.visitors, changes };
}

/** Opens the server's root (redirected to the dashboard) and signs in with the read key. */
async function signIn(viewport: { width: number; height: number }): Promise<Page> {
  const context = await newContext({ viewport });
  const p = await signInWithReadKey(context, server, {
    url: `${server.url}/`,
    beforeSubmit: async (signInPage) => {
      expect(new URL(signInPage.url()).pathname).toBe('/dashboard/');
      await shot(signInPage, `sign-in-${viewport.width}`);
    },
  });
  // The key is in this tab's sessionStorage, never in the address.
  expect(p.url()).not.toContain(server.project.readKey);
  return p;
}

let sessions: string[];

beforeAll(async () => {
  server = await startDashboardServer({ trustProxy: true });
  browser = await launchChromium();
  sessions = await seed(Date.now());
});
afterEach(() => {
  expect(cspViolations.splice(0), 'Content-Security-Policy violations').toEqual([]);
});
afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await server?.close();
});

describe('the dashboard in Chromium', () => {
  it('is served with its Content-Security-Policy, no inline script, and never stored', async () => {
    for (const path of ['/dashboard/', '/dashboard/index.html']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.headers.get('content-security-policy'), path).toBe(contentSecurityPolicy());
      expect(res.headers.get('cache-control'), path).toBe(NO_STORE);
      // Every <script> of the built page has a src: the policy allows no inline script.
      expect(await res.text(), path).not.toMatch(/<script\b(?![^>]*\bsrc=)[^>]*>/i);
    }
    // The watch sees a violation when there is one: an inline script, refused.
    const context = await newContext({ viewport: DESKTOP });
    const p = await context.newPage();
    await p.goto(`${server.url}/dashboard/`);
    await p.evaluate(() => document.head.append(Object.assign(document.createElement('script'), { textContent: 'window.inlineRan = true' })));
    await waitUntil('the refused inline script to be reported', () => cspViolations.some((v) => v.startsWith('script-src-elem inline')), 10_000);
    expect(await p.evaluate(() => (window as unknown as { inlineRan?: boolean }).inlineRan)).toBeUndefined();
    cspViolations.splice(0);
    await context.close();
  });

  it('signs in and shows in every panel what the report endpoints answer for the same query', async () => {
    const p = await signIn(DESKTOP);
    const { visitors, changes } = await expectOverviewAsApi(p);
    expect(visitors).toBe(4);
    // Against the 2 visitors, 11 page views (and events), 2 sessions, one of them a bounce, of eight days ago.
    expect(changes.slice(0, 2)).toEqual([
      ['stat-visitors-change', '▲ 100%', 'up 100% from the previous 7 days'],
      ['stat-page-views-change', '▼ 36%', 'down 36% from the previous 7 days'],
    ]);
    expect(changes[4]).toEqual(['stat-bounce-rate-change', '▼ 25 pp', 'down 25 percentage points from the previous 7 days']);
    // Colour says good or bad news for that number: fewer page views is bad, fewer bounces good.
    expect(await p.getByTestId('stat-page-views-change').getAttribute('class')).toBe('stat-change bad');
    expect(await p.getByTestId('stat-bounce-rate-change').getAttribute('class')).toBe('stat-change good');

    // Visitors now: the 4 visitors of the last minutes (the seed's newest events are under a minute
    // old), what the live report answers for 5 minutes, announced politely.
    const now = await api<{ totals: { visitors: number } }>('reports/live?minutes=5');
    expect(now.totals.visitors).toBe(4);
    const badge = p.getByTestId('visitors-now');
    await expectShown('the visitors now', async () => (await badge.textContent())?.trim(), `${formatCount(now.totals.visitors)} visitors now`);
    expect(await badge.getAttribute('aria-live')).toBe('polite');
    // Beside the title, on its line.
    const [title, badgeBox] = await Promise.all([p.getByRole('heading', { name: 'Overview' }).boundingBox(), badge.boundingBox()]);
    expect(Math.abs(title!.y + title!.height / 2 - (badgeBox!.y + badgeBox!.height / 2))).toBeLessThan(6);
    await shot(p, 'overview-1280');

    await p.getByRole('button', { name: 'Today' }).click();
    await p.getByTestId('chart').getByText('By hour').waitFor();
    // Nothing in the hours before today: every count is new, the bounce rate has nothing to compare with.
    const today = await expectOverviewAsApi(p);
    expect(today.changes.map((c) => (c as string[])[1])).toEqual(['new', 'new', 'new', 'new', '—', 'new']);
    expect(new URL(p.url()).searchParams.get('range')).toBe('today');

    // Live: the totals of the last 30 minutes, and the newest events.
    await p.getByRole('link', { name: 'Live' }).click();
    await p.getByTestId('live-events-list').getByText('signup').first().waitFor();
    await p.getByTestId('live-totals').locator('svg').waitFor();
    const live = await api<{ totals: { visitors: number; events: number } }>('reports/live?minutes=30');
    await expectShown('the live totals', async () => [await p.getByTestId('live-visitors').textContent(), await p.getByTestId('live-events').textContent()], [
      formatCount(live.totals.visitors),
      formatCount(live.totals.events),
    ]);
    await shot(p, 'live-1280');

    // Errors: the count per message; a click shows the last stack.
    await p.getByRole('link', { name: 'Errors' }).click();
    const errors = await api<{ errors: Array<{ message: string; count: number }> }>(`reports/errors?${await viewQuery(p)}&limit=50`);
    expect(errors.errors.map((e) => e.message)).toEqual(['TypeError: price is undefined']);
    await expectShown('the error counts', () => p.locator('.error-row .num').allTextContents(), errors.errors.map((e) => `${formatCount(e.count)}×`));
    await p.getByText('TypeError: price is undefined').first().click();
    await p.getByText('at total (app.js:10:5)').waitFor();
    await shot(p, 'errors-1280');

    // Web vitals: the p75 of each metric per page.
    await p.getByRole('link', { name: 'Web vitals' }).click();
    const vitals = await api<{ pages: Array<{ path: string; samples: number; lcp: number | null; inp: number | null; cls: number | null; fcp: number | null }> }>(`reports/vitals?${await viewQuery(p)}&limit=50`);
    expect(vitals.pages).toHaveLength(1);
    const shownVitals = () => p.getByTestId('vitals').locator('tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells, (c) => c.textContent?.trim() ?? '')));
    await expectShown(
      'the vitals table',
      shownVitals,
      vitals.pages.map((v) => [v.path, formatVital('lcp', v.lcp), formatVital('inp', v.inp), formatVital('cls', v.cls), formatVital('fcp', v.fcp), formatCount(v.samples)]),
    );
    await shot(p, 'vitals-1280');

    // Sign-out forgets the key: the tab's storage is empty and a reload asks again.
    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.getByLabel('Read key').waitFor();
    expect(await p.evaluate(() => JSON.stringify(window.sessionStorage))).toBe('{}');
    await p.reload();
    await p.getByLabel('Read key').waitFor();
  });

  it('filters every panel by a top row, as a removable chip kept in the address through a reload', async () => {
    const p = await signIn(DESKTOP);
    await expectOverviewAsApi(p);
    await p.getByTestId('top-device').getByRole('button', { name: 'mobile', exact: true }).click();
    await p.getByRole('button', { name: 'Remove filter Device: mobile' }).waitFor();
    // Chosen far down the page, the filter's chip comes into sight, below the sticky bar.
    await waitUntil('the chip in view', async () => {
      const [chip, bar] = await Promise.all([p.getByTestId('filter-chip').boundingBox(), p.locator('.topbar').boundingBox()]);
      return chip !== null && bar !== null && chip.y >= bar.y + bar.height && chip.y + chip.height <= PHONE.height;
    }, 10_000);
    expect(new URL(p.url()).searchParams.get('device')).toBe('mobile');
    expect((await expectOverviewAsApi(p, { device: 'mobile' })).visitors).toBe(1);
    await shot(p, 'overview-filtered-1280');

    // The view is in the address, the key is not: a reload shows the same filtered numbers.
    await p.reload();
    await p.getByRole('button', { name: 'Remove filter Device: mobile' }).waitFor();
    expect(p.url()).not.toContain(server.project.readKey);
    await expectOverviewAsApi(p, { device: 'mobile' });

    // A second filter from another list, by a click on the row's count: both hold.
    await p.getByTestId('top-page').locator('tr', { has: p.getByRole('button', { name: '/pricing', exact: true }) }).locator('td.num').click();
    await waitUntil('two chips', async () => (await p.getByTestId('filter-chip').count()) === 2, 10_000);
    await expectOverviewAsApi(p, { device: 'mobile', page: '/pricing' });

    // The filters go with the view to the other pages.
    await p.getByRole('link', { name: 'Funnels' }).click();
    expect(await p.getByTestId('filter-chip').count()).toBe(2);
    await p.getByRole('link', { name: 'Overview' }).click();

    // Removing a chip removes its filter; Back brings it again.
    await p.getByRole('button', { name: 'Remove filter Device: mobile' }).click();
    await waitUntil('one chip', async () => (await p.getByTestId('filter-chip').count()) === 1, 10_000);
    expect(new URL(p.url()).searchParams.get('device')).toBeNull();
    await expectOverviewAsApi(p, { page: '/pricing' });
    await p.goBack();
    await waitUntil('two chips again', async () => (await p.getByTestId('filter-chip').count()) === 2, 10_000);
    await expectOverviewAsApi(p, { device: 'mobile', page: '/pricing' });
    await p.context().close();
  });

  it('lists the countries of the client addresses by name, and filters by one as by any list', async () => {
    const p = await signIn(DESKTOP);
    await expectOverviewAsApi(p);
    const top = await api<TopAnswer>(`reports/top/country?${await viewQuery(p)}&limit=8`);
    // Three visitors from the United Kingdom, one from the United States; this machine's, none.
    expect(top.rows).toEqual([
      { value: 'GB', events: 5, visitors: 3 },
      { value: 'US', events: 2, visitors: 1 },
    ]);
    const panel = p.getByTestId('top-country');
    expect(await panel.getByRole('heading').textContent()).toBe('Countries');
    await panel.getByRole('button', { name: 'United Kingdom (GB)' }).click();
    await p.getByRole('button', { name: 'Remove filter Country: GB' }).waitFor();
    expect((await p.getByTestId('filter-chip').textContent())?.replace('×', '').trim()).toBe(`Country: ${countryText('GB')}`);
    expect(new URL(p.url()).searchParams.get('country')).toBe('GB');
    expect((await expectOverviewAsApi(p, { country: 'GB' })).visitors).toBe(3);
    await shot(p, 'overview-country-1280');
    await p.context().close();
  });

  it('shows the experiment report per variant for the picked experiment and conversion event', async () => {
    const p = await signIn(DESKTOP);
    await p.getByRole('link', { name: 'Experiments' }).click();
    const experiment = p.getByLabel('Experiment', { exact: true });
    await experiment.waitFor();
    // The most exposed experiment first, then the others of the range.
    expect(await experiment.inputValue()).toBe('cta-copy');
    expect(await experiment.locator('option').allTextContents()).toEqual(['cta-copy', 'pricing-table']);
    await p.getByLabel('Conversion event').selectOption('purchase');
    await waitUntil('the conversion in the address', () => new URL(p.url()).searchParams.get('conversion') === 'purchase', 10_000);
    expect(new URL(p.url()).searchParams.get('experiment')).toBe('cta-copy');

    type Answer = { variants: Array<{ variant: string; exposures: number; conversions: number | null; conversion_rate: number | null }> };
    const shownVariants = () =>
      p.getByTestId('variant-row').evaluateAll((trs) => trs.map((tr) => ['variant-name', 'variant-exposures', 'variant-conversions', 'variant-rate'].map((id) => tr.querySelector(`[data-testid="${id}"]`)?.textContent?.trim() ?? '')));
    const asShown = (a: Answer) => a.variants.map((v) => [v.variant, formatCount(v.exposures), formatCount(v.conversions), formatPercent(v.conversion_rate)]);
    const answer = await api<Answer>(`reports/experiments/cta-copy?${await viewQuery(p)}&conversion=purchase`);
    // anon-0 bought before its exposure only: it is exposed, not converted.
    expect(answer.variants).toEqual([
      { variant: 'control', exposures: 2, conversions: 1, conversion_rate: 0.5 },
      { variant: 'free-trial', exposures: 2, conversions: 2, conversion_rate: 1 },
    ]);
    await expectShown('the variants', shownVariants, asShown(answer));
    await shot(p, 'experiments-1280');

    // The choice survives a reload; another experiment shows its own variants.
    await p.reload();
    await expectShown('the variants after a reload', shownVariants, asShown(answer));
    await experiment.selectOption('pricing-table');
    const other = await api<Answer>(`reports/experiments/pricing-table?${await viewQuery(p)}&conversion=purchase`);
    expect(other.variants.map((v) => [v.variant, v.exposures, v.conversions])).toEqual([['wide', 1, 1]]);
    await expectShown('the other experiment', shownVariants, asShown(other));

    // With a filter, the numbers are the filtered report's.
    await p.getByLabel('Experiment', { exact: true }).selectOption('cta-copy');
    await p.goto(`${p.url().replace('?', '?device=mobile&')}`);
    await p.getByRole('button', { name: 'Remove filter Device: mobile' }).waitFor();
    const filtered = await api<Answer>(`reports/experiments/cta-copy?${await viewQuery(p, { device: 'mobile' })}&conversion=purchase`);
    expect(filtered.variants.map((v) => [v.variant, v.exposures, v.conversions])).toEqual([['free-trial', 1, 1]]);
    await expectShown('the filtered variants', shownVariants, asShown(filtered));
    await p.context().close();
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
    const funnel = await api<{ steps: Array<{ sessions: number }> }>(`reports/funnel?step=page:/&step=page:/pricing&step=event:signup&${await viewQuery(p)}`);
    expect(funnel.steps.map((s) => s.sessions)).toEqual([4, 3, 2]);
    expect(shown.map((t) => Number(t.split(' ')[0]))).toEqual(funnel.steps.map((s) => s.sessions));
    await shot(p, 'funnel-1280');
    // The steps are in the address: a reload (or the link, shared) shows the same funnel.
    expect(new URL(p.url()).searchParams.getAll('step')).toEqual(['page:/', 'page:/pricing', 'event:signup']);
    await p.reload();
    await expectShown('the funnel after a reload', async () => (await p.getByTestId('funnel-sessions').allTextContents()).map((t) => Number(t.split(' ')[0])), [4, 3, 2]);
    await p.getByRole('button', { name: 'Remove step 2' }).click();
    const shorter = await api<{ steps: Array<{ sessions: number }> }>(`reports/funnel?step=page:/&step=event:signup&${await viewQuery(p)}`);
    await expectShown('the funnel without its second step', async () => (await p.getByTestId('funnel-sessions').allTextContents()).map((t) => Number(t.split(' ')[0])), shorter.steps.map((s) => s.sessions));
    await p.context().close();
  });

  it('on a phone, the navigation is a menu: it opens with focus inside, Escape closes it, a choice closes it', async () => {
    const p = await signIn(PHONE);
    const menu = p.getByRole('button', { name: 'Menu' });
    const nav = p.locator('nav[aria-label="Dashboard"]');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.isVisible()).toBe(false);
    // The overview at phone width, changes and visitors now included.
    await expectOverviewAsApi(p);
    await p.getByTestId('visitors-now').getByText('visitors now').waitFor();
    await shot(p, 'overview-390');
    // Nothing is wider than the phone: no sideways scrolling.
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await menu.getAttribute('aria-controls')).toBe(await nav.getAttribute('id'));
    await nav.waitFor({ state: 'visible' });
    // Focus moves to the current page's link.
    await waitUntil('focus in the menu', async () => (await p.evaluate(() => document.activeElement?.textContent)) === 'Overview', 5_000);
    await shot(p, 'menu-390');
    await p.keyboard.press('Escape');
    await nav.waitFor({ state: 'hidden' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await p.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Menu');
    // Tab past its last link closes it; a tap outside too.
    await p.keyboard.press('Enter');
    await nav.waitFor({ state: 'visible' });
    for (let i = 0; i < 8; i++) await p.keyboard.press('Tab');
    await nav.waitFor({ state: 'hidden' });
    await menu.click();
    await nav.waitFor({ state: 'visible' });
    // On the chart's legend, below the open menu: a place where a tap does nothing else.
    const legend = await p.getByTestId('chart').locator('figcaption').boundingBox();
    expect(legend).not.toBeNull();
    await p.mouse.click(legend!.x + legend!.width - 5, legend!.y + legend!.height / 2);
    await nav.waitFor({ state: 'hidden' });
    await menu.focus();
    // By keyboard: Enter opens it, Tab walks its links, Enter follows one, and the menu closes.
    await p.keyboard.press('Enter');
    await nav.waitFor({ state: 'visible' });
    for (let i = 0; i < 5; i++) await p.keyboard.press('Tab');
    expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Experiments');
    await p.keyboard.press('Enter');
    await p.getByTestId('experiments').waitFor();
    await nav.waitFor({ state: 'hidden' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await p.getByLabel('Conversion event').selectOption('purchase');
    await p.getByTestId('variant-rate').first().waitFor();
    await expectShown('the variants at phone width', () => p.getByTestId('variant-rate').allTextContents(), ['50%', '100%']);
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await shot(p, 'experiments-390');

    // The filtered overview at phone width.
    await menu.click();
    await p.getByRole('link', { name: 'Overview' }).click();
    await p.getByTestId('top-device').getByRole('button', { name: 'mobile', exact: true }).click();
    await p.getByRole('button', { name: 'Remove filter Device: mobile' }).waitFor();
    // Chosen far down the page, the filter's chip comes into sight, below the sticky bar.
    await waitUntil('the chip in view', async () => {
      const [chip, bar] = await Promise.all([p.getByTestId('filter-chip').boundingBox(), p.locator('.topbar').boundingBox()]);
      return chip !== null && bar !== null && chip.y >= bar.y + bar.height && chip.y + chip.height <= PHONE.height;
    }, 10_000);
    await expectOverviewAsApi(p, { device: 'mobile' });
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await shot(p, 'overview-filtered-390');

    // The wide tables scroll sideways inside their panel, as regions a keyboard can reach; the page
    // itself never does.
    await p.getByRole('button', { name: 'Remove filter Device: mobile' }).click();
    for (const [link, region, name] of [
      ['Web vitals', 'Web vitals per page', 'vitals-390'],
      ['Sessions', 'Recorded sessions', 'sessions-390'],
      ['Live', 'Events', 'live-390'],
    ] as const) {
      await menu.click();
      await p.getByRole('link', { name: link }).click();
      const box = p.locator(`.scroll-x[role="region"][aria-label="${region}"]`).first();
      await box.waitFor();
      expect(await box.getAttribute('tabindex')).toBe('0');
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
      await shot(p, name);
    }

    // On a desktop there is no menu button: the links are in the bar.
    const desktop = await signIn(DESKTOP);
    expect(await desktop.locator('.menu-button').isVisible()).toBe(false);
    expect(await desktop.locator('nav[aria-label="Dashboard"] a').count()).toBe(8);
    expect(await desktop.getByRole('link', { name: 'Experiments' }).isVisible()).toBe(true);
    await desktop.context().close();
    await p.context().close();
  });

  it('on a demo server reached over loopback, one button signs in with the demo project', async () => {
    // The demo's keys, made as `start --demo` makes them; the project is stored once the server runs.
    const now = Date.now();
    const projectId = `proj_demo${now.toString(36)}`;
    const write = generateKey(projectId, 'write', now);
    const read = generateKey(projectId, 'read', now);
    const demoServer = await startTestServer('sqlite', { dashboard: { root: dashboardBuild() }, demo: { projectId, apiKey: write.key, readKey: read.key } });
    try {
      await demoServer.store.createProject({ id: projectId, name: 'demo', createdAt: now, fullIp: false, corsOrigins: [], bots: 'keep' });
      await demoServer.store.createKey(write.record);
      await demoServer.store.createKey(read.record);
      const context = await newContext({ viewport: DESKTOP });
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

  it('opens a session from the list and replays it: the player clock moves, with its timeline, speeds and skip-inactivity', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const p = await signIn(viewport);
      if (viewport === PHONE) await p.getByRole('button', { name: 'Menu' }).click();
      await p.getByRole('link', { name: 'Sessions' }).click();
      const link = p.getByTestId('session-link').first();
      // Shown by the random tail of the UUIDv7, not its time prefix.
      expect((await link.textContent())?.trim()).toBe(sessions[0]!.slice(-12));
      if (viewport === DESKTOP) await shot(p, 'sessions-1280');
      await link.click();
      const clock = p.getByTestId('replay-time');
      await clock.waitFor();
      const first = Number(await clock.getAttribute('data-ms'));
      await waitUntil('the replay to advance', async () => Number(await clock.getAttribute('data-ms')) > first, 10_000);
      await p.getByTestId('replay-events').getByText('page_view').first().waitFor();
      // The player's own controls: a timeline to scrub, the speeds, skip inactivity.
      const player = p.getByTestId('replay-frame');
      await player.locator('.rr-timeline').waitFor();
      expect((await player.locator('.rr-controller__btns button').allTextContents()).map((t) => t.trim())).toEqual(expect.arrayContaining(['1x', '2x', '4x', '8x']));
      expect(await player.getByText('skip inactive').count()).toBe(1);
      // Every control has an accessible name (the accessibility tree, as a screen reader gets it).
      const controls = await player.locator('.rr-controller').ariaSnapshot();
      for (const named of ['button "Play or pause"', 'button "Full screen"', 'button "Speed 1x"', 'button "Speed 8x"', 'checkbox "Skip inactive"', 'slider "Timeline"']) expect(controls).toContain(named);
      expect(controls).not.toMatch(/- (button|checkbox|slider)(?! ")/);
      if (viewport === DESKTOP) {
        // At 8× it plays to its end; back at 1×, a click on the timeline a quarter in scrubs back there.
        await player.getByRole('button', { name: 'Speed 8x' }).click();
        const total = Number(await clock.getAttribute('data-total-ms'));
        expect(total).toBeGreaterThan(0);
        await waitUntil('the replay to reach its end', async () => Number(await clock.getAttribute('data-ms')) >= total, 30_000);
        await player.getByRole('button', { name: 'Speed 1x' }).click();
        const box = await player.locator('.rr-progress').boundingBox();
        expect(box).not.toBeNull();
        await p.mouse.click(box!.x + box!.width * 0.25, box!.y + box!.height / 2);
        await waitUntil('the replay to go back', async () => Number(await clock.getAttribute('data-ms')) < total, 10_000);
        // An event beside the player seeks to its moment: the session's first page view is its start.
        await p.getByTestId('replay-events').locator('tr.pickable').first().click();
        await waitUntil('the replay at its start', async () => Number(await clock.getAttribute('data-ms')) < total * 0.5, 10_000);
      }
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      await shot(p, `replay-${viewport.width}`);
      await p.context().close();
    }
  });

  it('links an event of the live list to the replay of its session', async () => {
    const p = await signIn(DESKTOP);
    await p.getByRole('link', { name: 'Live' }).click();
    const row = p.getByTestId('live-events-list').locator('tr', { hasText: 'error' });
    await row.getByRole('link', { name: sessions[0]!.slice(-12) }).click();
    await waitUntil('the replay page', () => decodeURIComponent(new URL(p.url()).hash) === `#/replay/${sessions[0]}`, 10_000);
    await p.getByTestId('replay-time').waitFor();
    await p.context().close();
  });
});
