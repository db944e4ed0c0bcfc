/**
 * End to end, the way a newcomer meets the product: the server started as `npm start` starts it
 * (`start --serve-example … --demo`, SQLite in a temporary data directory) serving the example app
 * built by Vite against the built client, driven in headless Chromium through every page. Every
 * claim is checked in the database the server wrote, and the replay in the Replayer's iframe. All
 * of it under the server's Content-Security-Policy (server/static-files.ts), with no violation
 * reported by any page, frame or worker.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { NO_STORE, contentSecurityPolicy } from '../../server/static-files.js';
import { buildCli, startServerProcess, type ServerProcess } from '../../test-support/server/cli-process.js';
import { launchChromium } from '../../test-support/chromium.js';
import { printPageLogOnFailure } from '../../test-support/browser/environment.js';
import { captureConsole, waitUntil } from '../../test-support/browser/harness.js';
import { watchCspViolations } from '../../test-support/browser/csp-violations.js';

const APP_ROOT = import.meta.dirname;

/** Strings typed into the signup form; none may reach the database, in events or recordings. */
const SENTINELS = { name: 'Zelda-sentinel-name-4f1c', email: 'sentinel-mail-9b2e@example.test', password: 'sentinel-pass-77aa' };

/** Errors the demo throws on purpose. */
const EXPECTED_PAGE_ERRORS = ['Demo: something broke in a timer', 'Demo: a request promise was rejected'];

interface DemoConfig {
  projectId: string;
  apiKey: string;
  readKey: string;
}

/** Content-Security-Policy violations reported since the last test ended. */
const cspViolations: string[] = [];

interface Row {
  event_type: string;
  user_id: string | null;
  session_id: string | null;
  properties: Record<string, string | number | boolean | null>;
}

describe('the example app, served by `start --serve-example --demo`', () => {
  let work: string;
  let shots: string;
  let dbPath: string;
  let server: ServerProcess;
  let demo: DemoConfig;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  /** The session that was recorded, read from the session panel. */
  let recordedSession = '';
  let shownVariant = '';

  /** Every event of the demo project, from the database file the server writes. */
  function rows(): Row[] {
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      const raw = db
        .prepare('SELECT event_type, user_id, session_id, properties FROM events WHERE project_id = ? ORDER BY timestamp')
        .all(demo.projectId) as Array<Omit<Row, 'properties'> & { properties: string }>;
      return raw.map((r) => ({ ...r, properties: JSON.parse(r.properties) as Row['properties'] }));
    } finally {
      db.close();
    }
  }

  function ofType(type: string): Row[] {
    return rows().filter((r) => r.event_type === type);
  }

  async function shot(target: Page, name: string): Promise<void> {
    await target.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  }

  async function go(target: Page, linkName: string, heading: string): Promise<void> {
    await target.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: linkName, exact: true }).click();
    await target.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'sa-example-e2e-'));
    shots = process.env.SA_E2E_SCREENSHOTS ?? join(work, 'screenshots');
    mkdirSync(shots, { recursive: true });
    const outDir = join(work, 'example');
    // The app as `npm run build:example` builds it, against the client build of this run.
    process.env.SA_EXAMPLE_CLIENT_DIR = inject('clientDir');
    process.env.SA_EXAMPLE_OUT_DIR = outDir;
    // Vitest sets NODE_ENV=test, which Vite would keep, building React for development.
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({ configFile: resolve(APP_ROOT, 'vite.config.ts'), logLevel: 'warn', mode: 'production' });
    } finally {
      delete process.env.SA_EXAMPLE_CLIENT_DIR;
      delete process.env.SA_EXAMPLE_OUT_DIR;
      if (nodeEnv === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = nodeEnv;
    }
    const cli = await buildCli();
    const data = join(work, 'data');
    dbPath = join(data, 'analytics.db');
    server = await startServerProcess(cli, ['--db', dbPath, '--serve-example', outDir, '--demo']);
    demo = JSON.parse(readFileSync(join(data, 'demo-project.json'), 'utf8')) as DemoConfig;
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await watchCspViolations(context, cspViolations);
    page = await context.newPage();
    captureConsole(page);
    page.on('pageerror', (error) => pageErrors.push(error.message));
    console.log(`example e2e: screenshots in ${shots}`);
  });

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    if (server !== undefined) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    // The screenshots stay for a human to look at when they were asked for elsewhere.
    if (work !== undefined) {
      if (process.env.SA_E2E_SCREENSHOTS === undefined) rmSync(join(work, 'example'), { recursive: true, force: true });
      rmSync(join(work, 'data'), { recursive: true, force: true });
    }
  });

  printPageLogOnFailure();
  afterEach(() => {
    expect(cspViolations.splice(0), 'Content-Security-Policy violations').toEqual([]);
  });

  it('serves the app at / and hands its demo keys to the page', async () => {
    const html = await fetch(`${server.url}/`);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toBe(contentSecurityPolicy());
    expect(html.headers.get('cache-control')).toBe(NO_STORE);
    // Every <script> of the built page has a src: the policy allows no inline script.
    expect(await html.text()).not.toMatch(/<script\b(?![^>]*\bsrc=)[^>]*>/i);
    expect(await (await fetch(`${server.url}/demo/config.json`)).json()).toEqual(demo);
    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { level: 1, name: 'See your own analytics arrive' }).waitFor();
    await expect.poll(() => page.getByTestId('session-page-views').textContent()).toBe('1');
    // The client's delivery core runs in the worker file Vite shipped, which the policy allows.
    await expect.poll(() => page.workers().map((w) => new URL(w.url()).pathname)).toContainEqual(expect.stringMatching(/^\/assets\/worker-[\w-]+\.js$/));
    await shot(page, 'desktop-home');
  });

  it('clicks through every feature on the Demo page', async () => {
    // The home page's call to action is a <TrackClick> around a router link.
    await page.getByRole('link', { name: 'Open the demo' }).click();
    await page.getByRole('heading', { level: 1, name: 'Demo' }).waitFor();
    recordedSession = (await page.getByTestId('session-id').first().getAttribute('data-session-id')) ?? '';
    expect(recordedSession).not.toBe('');

    await page.getByRole('button', { name: 'Start recording' }).click();
    await expect.poll(() => page.getByTestId('recording-active').textContent()).toBe('true');

    await page.getByRole('button', { name: /^Like/ }).click();
    await page.getByRole('button', { name: 'Share' }).click();
    await page.getByRole('button', { name: 'Use a feature' }).click();
    await expect.poll(() => page.getByRole('button', { name: /^Like/ }).textContent()).toBe('Like (1)');

    const form = page.locator('form.form');
    await form.getByLabel('Name').fill(SENTINELS.name);
    await form.getByLabel('Email').fill(SENTINELS.email);
    await form.getByLabel('Password').fill(SENTINELS.password);
    await form.getByLabel('Plan').selectOption('pro');
    await form.getByLabel('I accept the terms').check();
    await form.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Sent form_submit with field counts only.').waitFor();

    await page.getByRole('button', { name: 'Start checkout' }).click();
    for (const step of ['cart', 'shipping', 'payment']) await page.getByRole('button', { name: `Next step: ${step}` }).click();
    await page.getByRole('button', { name: 'Complete' }).click();
    await expect.poll(() => page.getByTestId('funnel-state').textContent()).toContain('"status": "completed"');
    await page.getByRole('button', { name: 'Restart checkout' }).click();
    await page.getByRole('button', { name: 'Next step: cart' }).click();
    await page.getByRole('button', { name: 'Abandon' }).click();
    await expect.poll(() => page.getByTestId('funnel-state').textContent()).toContain('"abandonReason": "changed_mind"');

    for (const name of ['Identify demo user', 'Start subscription', 'Upgrade to Pro', 'Payment succeeded', 'Payment failed', 'Cancel']) {
      await page.getByRole('button', { name, exact: true }).click();
    }
    await expect.poll(() => page.getByTestId('churn-category').textContent()).toMatch(/^(low|medium|high|critical)$/);

    shownVariant = (await page.getByTestId('experiment-variant').textContent()) ?? '';
    expect(['control', 'free-trial']).toContain(shownVariant);
    await page.getByRole('button', { name: shownVariant === 'control' ? 'Sign up' : 'Start free trial' }).click();

    await page.getByRole('button', { name: 'Throw an error' }).click();
    await page.getByRole('button', { name: 'Reject a promise' }).click();
    await page.getByRole('button', { name: 'Report a caught error' }).click();
    await page.getByRole('button', { name: 'Send these timings' }).click();

    // <TrackView> sends once the section has been half visible for 500 ms: stay until it is stored.
    await page.getByRole('heading', { name: 'Tracked when visible' }).scrollIntoViewIfNeeded();
    await waitUntil('section_viewed in the database', () => ofType('section_viewed').length > 0);
    await shot(page, 'desktop-demo');
    await page.evaluate(() => window.scrollTo(0, 0));

    await page.getByRole('button', { name: 'Stop recording' }).click();
    await expect.poll(() => page.getByTestId('recording-active').textContent()).toBe('false');
    await page.getByRole('button', { name: 'Send queued events now' }).first().click();
    await page.getByText('Everything queued was accepted by the server.').first().waitFor();
  });

  it('shows the events on the Events page, live, and filters them', async () => {
    await go(page, 'Events', 'Events');
    const table = page.getByTestId('events-table');
    await table.locator('tr[data-event-type="button_clicked"]').first().waitFor();
    const before = await table.locator('tr[data-event-type="feature_used"]').count();

    // Another tab of the same visitor uses a feature; this page shows it without a reload.
    const other = await context.newPage();
    captureConsole(other);
    other.on('pageerror', (error) => pageErrors.push(error.message));
    await other.goto(`${server.url}/demo`);
    await other.getByRole('button', { name: 'Use a feature' }).click();
    await other.getByRole('button', { name: 'Send queued events now' }).first().click();
    await other.getByText('Everything queued was accepted by the server.').first().waitFor();
    await other.close();
    await waitUntil('the new feature_used row on the Events page', async () => (await table.locator('tr[data-event-type="feature_used"]').count()) > before);

    await page.getByLabel('Event type').fill('button_clicked');
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitUntil('only button_clicked rows', async () => {
      const types = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-event-type')));
      return types.length > 0 && types.every((t) => t === 'button_clicked');
    });
    await shot(page, 'desktop-events');
    await page.getByRole('button', { name: 'Clear' }).click();
  });

  it('stored a page_view for every route visited', async () => {
    await waitUntil('page views of every route', () => {
      const paths = new Set(ofType('page_view').map((r) => (JSON.parse(String(r.properties.page)) as { path: string }).path));
      return ['/', '/demo', '/events'].every((p) => paths.has(p));
    });
  });

  it('stored the clicks, the form events without any typed value, the funnel, billing, experiment, errors and performance', async () => {
    const expected = ['button_clicked', 'cta_clicked', 'feature_used', 'form_field_change', 'form_submit', 'funnel_started', 'funnel_step', 'funnel_completed',
      'funnel_abandoned', 'user_identify', 'subscription_started', 'subscription_upgraded', 'subscription_canceled', 'payment_succeeded',
      'payment_failed', 'experiment_exposure', 'experiment_cta_clicked', 'error', 'performance', 'section_viewed'];
    const missing = (): string[] => {
      const types = new Set(rows().map((r) => r.event_type));
      return expected.filter((t) => !types.has(t));
    };
    await expect.poll(missing, { timeout: 60_000, interval: 200 }).toEqual([]);

    expect(ofType('button_clicked').map((r) => r.properties.button).sort()).toEqual(['like', 'share']);
    expect(ofType('cta_clicked')[0]?.properties).toMatchObject({ location: 'home', cta: 'open_demo' });
    expect(ofType('feature_used')[0]?.properties).toMatchObject({ feature: 'export_csv' });

    const fields = new Set(ofType('form_field_change').map((r) => r.properties.field));
    expect([...fields].sort()).toEqual(['email', 'full_name', 'password', 'plan', 'terms']);
    expect(ofType('form_submit')[0]?.properties).toMatchObject({ form: 'signup', field_count: expect.any(Number) });

    expect(ofType('funnel_started')).toHaveLength(2);
    expect(ofType('funnel_step').map((r) => r.properties.step)).toEqual(expect.arrayContaining(['cart', 'shipping', 'payment']));
    expect(ofType('funnel_completed')).toHaveLength(1);
    expect(ofType('funnel_abandoned').some((r) => r.properties.reason === 'changed_mind')).toBe(true);

    expect(ofType('user_identify')[0]?.user_id).toBe('demo-user-42');
    expect(ofType('subscription_started')[0]?.properties).toMatchObject({ plan_id: 'starter', mrr: 1900, currency: 'usd' });
    expect(ofType('subscription_upgraded')[0]?.properties).toMatchObject({ plan_id: 'pro', previous_plan: 'starter' });
    expect(ofType('subscription_canceled')[0]?.properties).toMatchObject({ cancellation_reason: 'too_expensive' });
    expect(ofType('payment_succeeded')[0]?.properties).toMatchObject({ amount: 4900, payment_status: 'succeeded' });
    expect(ofType('payment_failed')[0]?.properties).toMatchObject({ payment_status: 'failed', failure_reason: 'card_declined' });
    // Events after identify() carry the user.
    expect(ofType('payment_failed')[0]?.user_id).toBe('demo-user-42');

    const exposures = ofType('experiment_exposure');
    expect(exposures).toHaveLength(1);
    expect(exposures[0]?.properties).toMatchObject({ experiment: 'cta-copy', variant: shownVariant });
    expect(ofType('experiment_cta_clicked')[0]?.properties).toMatchObject({ variant: shownVariant });

    const errorTypes = new Set(ofType('error').map((r) => r.properties.type));
    expect([...errorTypes].sort()).toEqual(['custom', 'javascript', 'unhandledrejection']);
    const messages = ofType('error').map((r) => String(r.properties.message));
    for (const expected of EXPECTED_PAGE_ERRORS) expect(messages.some((m) => m.includes(expected)), expected).toBe(true);
    expect(ofType('performance').length).toBeGreaterThanOrEqual(1);
    expect(ofType('section_viewed')[0]?.properties).toMatchObject({ section: 'testimonials' });

    // Nothing typed into the form is anywhere in the database: not in events, not in recordings,
    // not in any byte of the files.
    const bytes = [dbPath, `${dbPath}-wal`].map((f) => {
      try {
        return readFileSync(f).toString('latin1');
      } catch {
        return '';
      }
    });
    const db = new Database(dbPath, { readonly: true, fileMustExist: true });
    try {
      for (const sentinel of Object.values(SENTINELS)) {
        for (const content of bytes) expect(content.includes(sentinel), sentinel).toBe(false);
        const inEvents = db.prepare("SELECT count(*) AS n FROM events WHERE instr(properties, ?) > 0 OR instr(coalesce(user_id, ''), ?) > 0").get(sentinel, sentinel);
        const inRecordings = db.prepare('SELECT count(*) AS n FROM recording_chunks WHERE instr(events, ?) > 0').get(sentinel);
        expect(inEvents, sentinel).toEqual({ n: 0 });
        expect(inRecordings, sentinel).toEqual({ n: 0 });
      }
      const chunks = db.prepare('SELECT count(*) AS n, max(is_final) AS final FROM recording_chunks WHERE project_id = ? AND session_id = ?').get(demo.projectId, recordedSession);
      expect(chunks).toMatchObject({ final: 1 });
    } finally {
      db.close();
    }
  });

  it('lists the recorded session on the Replay page and replays it', async () => {
    await go(page, 'Replay', 'Replay');
    const row = page.locator(`tr[data-session-id="${recordedSession}"]`);
    await row.waitFor();
    await expect.poll(() => row.locator('td[data-label="Status"]').textContent()).toBe('finished');
    await row.getByRole('button', { name: /^Replay/ }).click();

    const replay = page.frameLocator('[data-testid="replay-frame"] iframe');
    // The replayed DOM is the recorded Demo page: its heading and cards are there…
    await replay.getByRole('heading', { level: 1, name: 'Demo' }).waitFor();
    await replay.getByRole('heading', { name: 'Session recording' }).waitFor();
    // …and its inputs hold no typed value (masked at capture).
    const typed = await replay.locator('input[name="full_name"], input[name="email"], input[name="password"]').evaluateAll((inputs) =>
      inputs.map((i) => (i as HTMLInputElement).value),
    );
    for (const value of typed) for (const sentinel of Object.values(SENTINELS)) expect(value).not.toContain(sentinel);
    await page.getByTestId('replay-time').waitFor();
    await shot(page, 'desktop-replay');
    await go(page, 'Events', 'Events');
  });

  it('is usable at phone size (390×844): every page fits the width', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await watchCspViolations(phone, cspViolations);
    try {
      const small = await phone.newPage();
      captureConsole(small);
      small.on('pageerror', (error) => pageErrors.push(error.message));
      for (const [path, heading] of [
        ['/', 'See your own analytics arrive'],
        ['/demo', 'Demo'],
        ['/events', 'Events'],
        ['/replay', 'Replay'],
      ] as const) {
        await small.goto(`${server.url}${path}`);
        await small.getByRole('heading', { level: 1, name: heading }).waitFor();
        if (path === '/events') await small.getByTestId('events-table').waitFor();
        if (path === '/replay') {
          await small.getByTestId('sessions-table').waitFor();
          await small.locator(`tr[data-session-id="${recordedSession}"]`).getByRole('button', { name: /^Replay/ }).click();
          await small.frameLocator('[data-testid="replay-frame"] iframe').getByRole('heading', { level: 1, name: 'Demo' }).waitFor();
        }
        const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, path).toBeLessThanOrEqual(0);
        await small.screenshot({ path: join(shots, `phone${path === '/' ? '-home' : path.replace('/', '-')}.png`) });
      }
    } finally {
      await phone.close();
    }
  });

  it('threw no error in any page other than the demo’s deliberate ones', () => {
    expect(pageErrors.filter((m) => !EXPECTED_PAGE_ERRORS.some((e) => m.includes(e)))).toEqual([]);
  });
});
