/**
 * The client's requests carry no cookies (`credentials: 'omit'`), even where the browser would
 * send them: here the analytics API is on the page's own origin (the static server forwards
 * `/api/` to the analytics server, as a reverse proxy in front of an app and its analytics would),
 * and the page's response set a cookie for that origin. A request made with the browser's default
 * credentials mode from the page does carry it (the control); the client's worker batch sends, its
 * recording uploads, its in-process batch sends (a CSP that forbids workers) and its pagehide
 * request must not. (That last one is a keepalive fetch rather than `navigator.sendBeacon`, whose
 * requests always carry the page's cookies for the server's site.)
 */
import { type IncomingMessage, type ServerResponse, request } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents, waitUntil } from '../../test-support/browser/harness.js';

/** The cookie the page's response sets for its origin, which is also the API's origin here. */
const COOKIE = 'sa_probe=cookie-sentinel-7d1c';

/** A request that reached the API through the static server's `/api/` forwarding. */
interface ForwardedRequest {
  method: string;
  path: string;
  /** The raw `Cookie` header, or null when there was none. */
  cookie: string | null;
}

const forwarded: ForwardedRequest[] = [];
let env: BrowserTestEnvironment;

/** Forwards `/api/*` to the analytics server, byte for byte, recording each request's cookie. */
function forwardApi(req: IncomingMessage, res: ServerResponse): boolean {
  const path = req.url ?? '/';
  if (!path.startsWith('/api/')) return false;
  forwarded.push({ method: req.method ?? '', path: path.split('?')[0]!, cookie: req.headers.cookie ?? null });
  const target = new URL(env.server.url);
  const upstream = request(
    { host: target.hostname, port: target.port, method: req.method, path, headers: { ...req.headers, host: target.host } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.writeHead(502).end());
  req.pipe(upstream);
  return true;
}

beforeAll(async () => {
  env = await startEnvironment({ handle: forwardApi });
});
afterAll(() => env?.close());
printPageLogOnFailure();

const harness = (page: Page) => ({
  stats: () => page.evaluate(() => (window as unknown as HarnessWindow).harness.stats()),
  flush: () => page.evaluate(() => (window as unknown as HarnessWindow).harness.flush()),
  track: (name: string, count: number, run: string) =>
    page.evaluate(({ n, c, r }) => (window as unknown as HarnessWindow).harness.trackMany(n, c, r), { n: name, c: count, r: run }),
});

/**
 * The control: a POST the page makes with the default credentials mode reaches the API with the
 * cookie, so the browser does hold it for this origin and would send it to the API.
 */
async function expectCookieSentByDefault(page: Page): Promise<void> {
  const before = forwarded.length;
  await page.evaluate(() => fetch('/api/v1/cookie-control', { method: 'POST', body: 'control' }).then((r) => r.status));
  expect(forwarded.slice(before)).toEqual([{ method: 'POST', path: '/api/v1/cookie-control', cookie: COOKIE }]);
}

/** The requests the client made to `path` (or under it) since `from`. */
const sentTo = (from: number, prefix: string): ForwardedRequest[] =>
  forwarded.slice(from).filter((r) => r.method === 'POST' && r.path.startsWith(prefix));

describe('the client sends no cookies to an API on the page’s own origin', () => {
  it('worker: batch sends and recording uploads carry no Cookie header', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/cookie-worker.html', {
        config: pageConfig(env.web.url, project),
        headers: { 'set-cookie': `${COOKIE}; Path=/` },
      });
      expect(await harness(page).stats()).toMatchObject({ mode: 'worker' });
      await expectCookieSentByDefault(page);
      const from = forwarded.length;

      const run = runId();
      await harness(page).track('cookie_check', 5, run);
      expect(await harness(page).flush()).toEqual({ ok: true });
      expect(await readEvents(env.server.store, project.id, 'cookie_check')).toHaveLength(5);

      await page.evaluate(() => (window as unknown as HarnessWindow).harness.analytics.startRecording());
      await waitUntil('capture to begin', async () => (await harness(page).stats()).recordingQueued > 0);
      await page.evaluate(() => (window as unknown as HarnessWindow).harness.analytics.stopRecording());
      const sessionId = await page.evaluate(() => (window as unknown as HarnessWindow).harness.analytics.getSessionId());
      await waitUntil('the final recording chunk', async () => (await env.server.store.getRecording(project.id, sessionId))?.finished === true);

      const batches = sentTo(from, '/api/v1/events/batch');
      const uploads = sentTo(from, `/api/v1/sessions/${sessionId}/recordings`);
      expect(batches.length).toBeGreaterThan(0);
      expect(uploads.length).toBeGreaterThan(0);
      expect([...batches, ...uploads].filter((r) => r.cookie !== null)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('pagehide: the events sent as the page goes away carry no Cookie header', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      // The worker would not send these on its own: only the unload path can deliver them.
      const page = await openAnalyticsPage(context, env.web, '/cookie-unload.html', {
        config: pageConfig(env.web.url, project, { batchSize: 100, flushInterval: 600_000 }),
        headers: { 'set-cookie': `${COOKIE}; Path=/` },
      });
      expect(await harness(page).stats()).toMatchObject({ mode: 'worker' });
      await expectCookieSentByDefault(page);
      const from = forwarded.length;
      await harness(page).track('cookie_unload', 5, runId());
      await page.goto('about:blank');
      await waitForEvents(env.server.store, project.id, 'cookie_unload', 5);
      const unloads = sentTo(from, '/api/v1/events/batch');
      expect(unloads.length).toBeGreaterThan(0);
      expect(unloads.filter((r) => r.cookie !== null)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('in-process (a CSP forbids workers): batch sends carry no Cookie header', async () => {
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const nonce = 'e2e-cookie-nonce';
      const page = await openAnalyticsPage(context, env.web, '/cookie-in-process.html', {
        config: pageConfig(env.web.url, project),
        nonce,
        headers: {
          'set-cookie': `${COOKIE}; Path=/`,
          'content-security-policy': `default-src 'none'; script-src 'self' 'nonce-${nonce}'; connect-src 'self'; worker-src 'none'`,
        },
      });
      expect(await harness(page).stats()).toMatchObject({ mode: 'in-process', strategy: 'in-process' });
      await expectCookieSentByDefault(page);
      const from = forwarded.length;

      await harness(page).track('cookie_in_process', 5, runId());
      expect(await harness(page).flush()).toEqual({ ok: true });
      expect(await readEvents(env.server.store, project.id, 'cookie_in_process')).toHaveLength(5);

      const batches = sentTo(from, '/api/v1/events/batch');
      expect(batches.length).toBeGreaterThan(0);
      expect(batches.filter((r) => r.cookie !== null)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
