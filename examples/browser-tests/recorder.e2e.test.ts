/**
 * The session recorder in Chromium against the real server (docs/decisions.md, "Recording masking
 * defaults" and "Recording upload and the recorder's states"): what a recorded session stores, read
 * back from the database.
 *
 * - Privacy: sentinel strings typed into a password field (also after its type is switched to
 *   text), a text field, a hidden input, a `sa-block` element and a `sa-mask` element appear nowhere
 *   in the stored recording, while the typing itself was recorded (masked).
 * - A reload mid-recording goes on in the same session with offsets that do not collide: every
 *   event the recorder numbered for the session is stored, without a gap.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Analytics, AnalyticsConfig, DeliveryStats } from '../../main/index.js';
import type { Recording } from '../../server/store/event-store.js';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { captureConsole, waitUntil } from '../../test-support/browser/harness.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

/** Strings that must never reach the server. */
const SENTINELS = {
  password: 'pw-Sentinel-81f3',
  passwordShown: 'shown-Sentinel-27aa',
  text: 'txt-Sentinel-5c0d',
  hidden: 'hidden-Sentinel-9e41',
  blocked: 'block-Sentinel-d7b2',
  masked: 'mask-Sentinel-40fe',
};

/** What the test page puts on `window.recorderPage`. */
interface RecorderPage {
  analytics: Analytics;
  stats(): Promise<DeliveryStats>;
}
type PageWindow = { recorderPage: RecorderPage };

function recorderPageHtml(config: AnalyticsConfig): string {
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>recorder test</title></head>
<body>
<h1>Checkout</h1>
<form onsubmit="return false">
  <label>Name <input id="name" type="text"></label>
  <label>Password <input id="password" type="password"></label>
  <input id="token" type="hidden" value="${SENTINELS.hidden}">
  <button id="show" type="button" onclick="document.getElementById('password').type = 'text'">show password</button>
  <button id="pay" type="button">Pay</button>
</form>
<div class="sa-block"><p>${SENTINELS.blocked}</p></div>
<p class="sa-mask">${SENTINELS.masked}</p>
<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
window.recorderPage = { analytics, stats: () => analytics.getDeliveryStats() };
</script>
</body>
</html>`;
}

async function openRecorderPage(page: Page, path: string): Promise<void> {
  await page.goto(`${env.web.url}${path}`);
  await page.waitForFunction(() => 'recorderPage' in window, undefined, { timeout: 30_000 });
}

const stats = (page: Page): Promise<DeliveryStats> => page.evaluate(() => (window as unknown as PageWindow).recorderPage.stats());
const sessionIdOf = (page: Page): Promise<string> =>
  page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.getSessionId());

/** Waits until the recorder has handed events to the worker and the worker has uploaded them all. */
async function waitForUploaded(page: Page): Promise<void> {
  await waitUntil('the recorded events to be uploaded', async () => (await stats(page)).recordingQueued === 0);
}

async function readRecording(projectId: string, sessionId: string): Promise<Recording | null> {
  return env.server.store.getRecording(projectId, sessionId);
}

describe('the session recorder in Chromium', () => {
  it('stores a masked recording: full snapshot first, in order, finished, and no sentinel string anywhere', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = { apiKey: project.writeKey, projectId: project.id, endpoint: env.server.url, enableAutoPageTracking: false, debug: true };
    env.web.setPage('/recorder.html', { html: recorderPageHtml(config) });
    const context = await env.browser.newContext();
    try {
      const page = await context.newPage();
      captureConsole(page);
      await openRecorderPage(page, '/recorder.html');
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.startRecording());
      expect(await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.isRecordingActive())).toBe(true);
      // Capture has begun once the worker holds the first events (the full snapshot).
      await waitUntil('capture to begin', async () => (await stats(page)).recordingQueued > 0);

      await page.type('#name', SENTINELS.text);
      await page.type('#password', SENTINELS.password);
      await page.click('#show'); // the password field becomes a text field
      await page.type('#password', SENTINELS.passwordShown);
      await page.click('#pay');
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.stopRecording());
      const sessionId = await sessionIdOf(page);

      let recording: Recording | null = null;
      await waitUntil('the final chunk', async () => {
        recording = await readRecording(project.id, sessionId);
        return recording?.finished === true;
      });
      const { events, gaps, finished } = recording as unknown as Recording;
      expect(finished).toBe(true);
      expect(gaps).toEqual([]);
      // rrweb's Meta event, then the full snapshot, before anything incremental.
      expect(events.slice(0, 2).map((e) => e.type)).toEqual([4, 2]);
      const times = events.map((e) => e.timestamp);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      // Typing was recorded (input events, source 5), masked.
      const inputs = events.filter((e) => e.type === 3 && (e.data as { source?: number }).source === 5);
      expect(inputs.length).toBeGreaterThan(0);
      expect(inputs.every((e) => /^\**$/.test(String((e.data as { text?: string }).text)))).toBe(true);
      // The recording ends with the recorder's stop marker.
      expect(events.at(-1)).toMatchObject({ type: 5, data: { tag: 'service-analytics:stop', payload: { reason: 'stop' } } });

      const stored = JSON.stringify(recording);
      for (const [name, sentinel] of Object.entries(SENTINELS)) expect(stored.includes(sentinel), `${name} sentinel in the recording`).toBe(false);
      // The page itself did show them: the test would prove nothing otherwise.
      const pageText = await page.evaluate(() => document.body.innerText);
      expect(pageText).toContain(SENTINELS.blocked);
      expect(pageText).toContain(SENTINELS.masked);
    } finally {
      await context.close();
    }
  });

  it('goes on after a reload in the same session, numbering on: every numbered event is stored, no gap', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = {
      apiKey: project.writeKey,
      projectId: project.id,
      endpoint: env.server.url,
      enableAutoPageTracking: false,
      enableSessionRecording: true,
      debug: true,
    };
    env.web.setPage('/reload.html', { html: recorderPageHtml(config) });
    const context = await env.browser.newContext();
    try {
      const page = await context.newPage();
      captureConsole(page);
      await openRecorderPage(page, '/reload.html');
      await waitUntil('capture to begin', async () => (await stats(page)).recordingQueued > 0);
      await page.type('#name', 'first page');
      await page.click('#pay');
      // The page is hidden (tab switch): the recorder hands its buffer over and the worker uploads it.
      await page.evaluate(() => {
        Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
        document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
      });
      await waitForUploaded(page);
      const sessionId = await sessionIdOf(page);
      const before = (await readRecording(project.id, sessionId))!;
      expect(before.events.length).toBeGreaterThan(2);
      expect(before.finished).toBe(false);

      await page.reload();
      await page.waitForFunction(() => 'recorderPage' in window, undefined, { timeout: 30_000 });
      expect(await sessionIdOf(page)).toBe(sessionId);
      await waitUntil('capture to begin again', async () => (await stats(page)).recordingQueued > 0);
      await page.type('#name', 'second page');
      await page.click('#pay');
      await page.evaluate(() => (window as unknown as PageWindow).recorderPage.analytics.stopRecording());

      let after: Recording | null = null;
      await waitUntil('the final chunk', async () => {
        after = await readRecording(project.id, sessionId);
        return after?.finished === true;
      });
      const { events, gaps } = after as unknown as Recording;
      // How many events the recorder numbered for this session, on both pages (recording-offsets.ts).
      const numbered = await page.evaluate(
        ({ key, id }) => (JSON.parse(localStorage.getItem(key) ?? '{}') as Record<string, [number]>)[id]?.[0] ?? -1,
        { key: `service-analytics:${project.id}:recording`, id: sessionId },
      );
      expect(gaps).toEqual([]);
      expect(events).toHaveLength(numbered);
      expect(events.length).toBeGreaterThan(before.events.length);
      // What the first page stored is untouched; the second page's recording follows with its own full snapshot.
      expect(events.slice(0, before.events.length)).toEqual(before.events);
      expect(events.slice(before.events.length).some((e) => e.type === 2)).toBe(true);
    } finally {
      await context.close();
    }
  });
});
