/**
 * Console and network capture of the session recorder in Chromium against the real server (README
 * "Session recording": console and network): what a recording with both on stores, looked for in
 * the request bodies on the wire (gunzipped), the read API's answer and the SQLite database (file
 * bytes and SQL).
 *
 * - Sentinels that must never reach the server: a value typed into a password field and one typed
 *   into a text field (masked by default), each then logged (in a message, in an error's message,
 *   in a format string); an `Authorization` header, a custom token header and a query value of an
 *   allow-listed request; a query value of a request outside the allow-list.
 * - What must arrive: every console level asked for, an error's stack, an uncaught error, the
 *   requests of `fetch`, `XMLHttpRequest` and `sendBeacon` with method, redacted URL, status
 *   (a 404, a network error), sizes and duration; headers and bodies of the allow-listed URL only,
 *   with denied headers as `[denied]`.
 * - The client's own uploads are never recorded: the page runs the delivery core in-process
 *   (`worker: false`), so its batch and recording requests go through the page's wrapped `fetch`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Analytics, AnalyticsConfig, DeliveryStats } from '../../main/index.js';
import type { ConsoleEntry, NetworkEntry } from '../../protocol/replay-entries.js';
import type { Recording } from '../../server/store/event-store.js';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { captureConsole, waitUntil } from '../../test-support/browser/harness.js';
import { type WireLog, databaseBytes, readRecordingApi, startWireLog, storedChunkTexts } from '../../test-support/browser/recorder-wire.js';

/** Strings that must never reach the server. */
const SECRET = {
  password: 'pwd-Secret-4e1b',
  name: 'name-Secret-92c0',
  authorization: 'Bearer auth-Secret-7d33',
  tokenHeader: 'hdr-Secret-0f5a',
  query: 'query-Secret-b8e2',
  otherQuery: 'other-Secret-31aa',
  cookie: 'cookie-Secret-c4d9',
};

/** Strings that must reach the server (the capture did record). */
const VISIBLE = {
  log: 'Visible-log-line-a1',
  warn: 'Visible-warning-b2',
  info: 'Visible-info-c3',
  uncaught: 'Visible-uncaught-d4',
  traceHeader: 'visible-trace-e5',
  requestBody: 'Visible-request-body-f6',
  responseBody: 'Visible-response-body-07',
};

/** The test API on the page's own origin: the allow-listed echo, a 404, the beacon target. */
function testApi(req: IncomingMessage, res: ServerResponse): boolean {
  const path = new URL(req.url ?? '/', 'http://x').pathname;
  if (path === '/api/echo' || path === '/api/other') {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'set-cookie': `sid=${SECRET.cookie}; Path=/`,
        'x-session-token': SECRET.cookie,
        'x-served-by': 'test-api',
      });
      res.end(JSON.stringify({ ok: true, message: VISIBLE.responseBody }));
    });
    return true;
  }
  if (path === '/api/beacon') {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
    return true;
  }
  if (path === '/api/missing') {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    return true;
  }
  return false;
}

let env: BrowserTestEnvironment;
let wire: WireLog;
beforeAll(async () => {
  env = await startEnvironment({ handle: testApi });
  wire = await startWireLog(env.server.url);
});
afterAll(async () => {
  await wire?.close();
  await env?.close();
});
printPageLogOnFailure();

interface RecorderPage {
  analytics: Analytics;
  stats(): Promise<DeliveryStats>;
}
type PageWindow = { recorderPage: RecorderPage };

function pageHtml(config: AnalyticsConfig): string {
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>console and network</title></head>
<body>
<h1>Sign in</h1>
<form onsubmit="return false">
  <label>Name <input id="name" type="text"></label>
  <label>Password <input id="password" type="password"></label>
</form>
<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
window.recorderPage = { analytics, stats: () => analytics.getDeliveryStats() };
</script>
</body>
</html>`;
}

const stats = (page: Page): Promise<DeliveryStats> => page.evaluate(() => (window as unknown as PageWindow).recorderPage.stats());

/** Recorded entries of one tag, in time order. */
function entries<T>(recording: Recording, tag: string): T[] {
  return recording.events
    .filter((e) => e.type === 5 && (e.data as { tag?: string }).tag === tag)
    .sort((a, b) => a.timestamp - b.timestamp)
    .map((e) => (e.data as { payload: T }).payload);
}

describe('console and network capture in Chromium', () => {
  it('records console calls and requests beside the replay; no masked value, denied header or redacted query value reaches the server', async () => {
    const project = await env.server.createProject();
    const config = {
      apiKey: project.writeKey,
      projectId: project.id,
      endpoint: wire.url,
      enableAutoPageTracking: false,
      // In-process: the client's own uploads go through the page's fetch, which is wrapped.
      worker: false,
      recording: {
        network: { allowUrls: [`${env.web.url}/api/echo`], recordHeaders: true, recordBodies: true, allowQueryParams: ['page'] },
      },
    } satisfies AnalyticsConfig;
    env.web.setPage('/capture.html', { html: pageHtml(config) });
    const context = await env.browser.newContext();
    try {
      const page = await context.newPage();
      captureConsole(page);
      await page.goto(`${env.web.url}/capture.html`);
      await page.waitForFunction(() => 'recorderPage' in window, undefined, { timeout: 30_000 });
      // Console capture opted in by the start call; network by the configuration's default.
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.startRecording({ console: true }));
      await waitUntil('capture to begin', async () => (await stats(page)).recordingQueued > 0);

      await page.type('#password', SECRET.password);
      await page.type('#name', SECRET.name);
      await page.evaluate(
        async ({ secret, visible }) => {
          const password = (document.getElementById('password') as HTMLInputElement).value;
          const name = (document.getElementById('name') as HTMLInputElement).value;
          console.log(visible.log, 'the password is', password);
          console.info('%s and %o', visible.info, { name, nested: { password } });
          console.warn(visible.warn);
          console.error(new Error(`could not sign in ${name}`));
          console.debug('debug is not a default level');
          setTimeout(() => {
            throw new Error(visible.uncaught);
          });
          await fetch(`/api/echo?token=${secret.query}&page=2#frag`, {
            method: 'POST',
            headers: { Authorization: secret.authorization, 'X-Auth-Token': secret.tokenHeader, 'X-Trace': visible.traceHeader, 'Content-Type': 'application/json' },
            body: JSON.stringify({ text: visible.requestBody }),
          }).then((r) => r.json());
          await fetch(`/api/other?key=${secret.otherQuery}`, { headers: { Authorization: secret.authorization } }).then((r) => r.text());
          await fetch('/api/missing');
          await fetch('http://127.0.0.1:9/unreachable').catch(() => undefined);
          await new Promise<void>((resolve) => {
            const xhr = new XMLHttpRequest();
            xhr.open('GET', '/api/echo?from=xhr');
            xhr.setRequestHeader('Authorization', secret.authorization);
            xhr.onloadend = () => resolve();
            xhr.send();
          });
          navigator.sendBeacon('/api/beacon', 'beacon body');
          // The client's own uploads, through the wrapped fetch (in-process delivery).
          (window as unknown as PageWindow).recorderPage.analytics.track('signed_in');
          await (window as unknown as PageWindow).recorderPage.analytics.flush();
        },
        { secret: SECRET, visible: VISIBLE },
      );
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.stopRecording());
      const sessionId = await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.getSessionId());
      let recording: Recording | null = null;
      await waitUntil('the final chunk', async () => {
        recording = await env.server.store.getRecording(project.id, sessionId);
        return recording?.finished === true;
      });
      const stored = recording as unknown as Recording;
      expect(stored.gaps).toEqual([]);

      // Console: the levels asked for (debug is not a default), masked values as `*`, stacks.
      const logged = entries<ConsoleEntry>(stored, 'service-analytics:console');
      expect(logged.map((e) => e.level)).toEqual(['log', 'info', 'warn', 'error', 'error']);
      expect(logged[0]!.message).toBe(`${VISIBLE.log} the password is ${'*'.repeat(SECRET.password.length)}`);
      expect(logged[1]!.message).toContain(`${VISIBLE.info} and {name: "${'*'.repeat(SECRET.name.length)}"`);
      expect(logged[3]!.message).toBe(`Error: could not sign in ${'*'.repeat(SECRET.name.length)}`);
      expect(logged[3]!.stack).toMatch(/^at /);
      expect(logged[4]).toMatchObject({ level: 'error', source: 'uncaught', message: `Error: ${VISIBLE.uncaught}` });

      // Network: every request of the page, none of the client's own.
      const requests = entries<NetworkEntry>(stored, 'service-analytics:network');
      const origin = env.web.url;
      expect(requests.map((r) => [r.initiator, r.method, r.url, r.status])).toEqual([
        ['fetch', 'POST', `${origin}/api/echo?token=[redacted]&page=2`, 200],
        ['fetch', 'GET', `${origin}/api/other?key=[redacted]`, 200],
        ['fetch', 'GET', `${origin}/api/missing`, 404],
        ['fetch', 'GET', 'http://127.0.0.1:9/unreachable', 0],
        ['xhr', 'GET', `${origin}/api/echo?from=[redacted]`, 200],
        ['beacon', 'POST', `${origin}/api/beacon`, 0],
      ]);
      expect(requests[3]!.error).toBe('network error');
      for (const r of requests) expect(r.duration).toBeGreaterThanOrEqual(0);
      const echo = requests[0]!;
      expect(echo.requestSize).toBe(JSON.stringify({ text: VISIBLE.requestBody }).length);
      expect(echo.responseSize).toBe(JSON.stringify({ ok: true, message: VISIBLE.responseBody }).length);
      expect(echo.requestHeaders).toMatchObject({ authorization: '[denied]', 'x-auth-token': '[denied]', 'x-trace': VISIBLE.traceHeader });
      expect(echo.responseHeaders).toMatchObject({ 'x-served-by': 'test-api', 'x-session-token': '[denied]' });
      expect(echo.requestBody).toContain(VISIBLE.requestBody);
      expect(echo.responseBody).toContain(VISIBLE.responseBody);
      expect(requests[4]!.requestHeaders).toMatchObject({ authorization: '[denied]' });
      // Outside the allow-list: no headers, no bodies.
      expect(requests[1]).not.toHaveProperty('requestHeaders');
      expect(requests[1]).not.toHaveProperty('responseBody');
      expect(requests[5]!.requestSize).toBe('beacon body'.length);
      expect(requests.some((r) => r.url.startsWith(wire.url))).toBe(false);
      // The client's own uploads did go through the page's fetch.
      expect(wire.requests.some((r) => r.path.startsWith('/api/v1/events/batch'))).toBe(true);

      const uploads = wire.requests.filter((r) => r.method === 'POST' && r.path.includes(`/sessions/${sessionId}/recordings`));
      expect(uploads.length).toBeGreaterThan(0);
      const places = [
        { where: 'the wire', text: uploads.map((r) => r.body).join('\n') },
        { where: 'the read API', text: await readRecordingApi(env.server.url, project, sessionId) },
        { where: 'the database file', text: databaseBytes(env.server.location).toString('latin1') },
        { where: 'the database (SQL)', text: storedChunkTexts(env.server.location) },
      ];
      for (const place of places) {
        for (const [name, text] of Object.entries(SECRET)) expect(place.text.includes(text), `${name} secret in ${place.where}`).toBe(false);
        for (const [name, text] of Object.entries(VISIBLE)) expect(place.text.includes(text), `${name} text in ${place.where}`).toBe(true);
      }
    } finally {
      await context.close();
    }
  });
});
