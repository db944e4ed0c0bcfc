/**
 * Canvas recording in Chromium against the real server (README "Session recording", canvas;
 * docs/decisions.md, "Canvas recording and its replay"): with `recordCanvas` a canvas the page
 * draws on reaches the server as rrweb canvas records (images of the canvas, WebP); without it,
 * the default, the same page's recording holds no canvas record and no image of the canvas. The
 * dashboard (built with Vite, served by the real server) replays such a recording with the canvas
 * drawn, in rrweb's sandbox where no script runs, with no Content-Security-Policy violation
 * (`replay-canvas-sandbox.e2e.test.ts` plays crafted recordings).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Analytics, AnalyticsConfig, DeliveryStats, RecordingStartOptions } from '../../main/index.js';
import type { Recording } from '../../server/store/event-store.js';
import type { RecordedEvent } from '../../protocol/wire-types.js';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { captureConsole, waitUntil } from '../../test-support/browser/harness.js';
import { watchCspViolations } from '../../test-support/browser/csp-violations.js';
import { startTestServer } from '../../test-support/server/test-server.js';

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

/** rrweb's `EventType.IncrementalSnapshot`, its `IncrementalSource.CanvasMutation` and `.Mutation`. */
const INCREMENTAL = 3;
const CANVAS_MUTATION = 9;
const MUTATION = 0;
/** Text the page adds after drawing for a while: once the server holds it, the drawing was recorded too (or never will be). */
const MARKER = 'drawn-for-a-while';

/** What the test page puts on `window.canvasPage`. */
interface CanvasPage {
  analytics: Analytics;
  stats(): Promise<DeliveryStats>;
  /** Draws a different picture on every animation frame, `frames` times, then adds {@link MARKER} to the page. */
  draw(frames: number): Promise<void>;
}
type PageWindow = { canvasPage: CanvasPage };

function canvasPageHtml(config: AnalyticsConfig): string {
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>canvas test</title></head>
<body>
<h1>Chart</h1>
<canvas id="chart" width="160" height="90"></canvas>
<p id="status">drawing</p>
<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
const ctx = document.getElementById('chart').getContext('2d');
const paint = (i) => {
  ctx.fillStyle = 'hsl(' + ((i * 37) % 360) + ', 80%, 50%)';
  ctx.fillRect(0, 0, 160, 90);
  ctx.fillStyle = '#000';
  ctx.fillRect((i * 7) % 150, 20, 10, 50);
};
paint(0);
window.canvasPage = {
  analytics,
  stats: () => analytics.getDeliveryStats(),
  async draw(frames) {
    for (let i = 1; i <= frames; i++) {
      paint(i);
      await new Promise((resolve) => requestAnimationFrame(resolve));
    }
    document.getElementById('status').textContent = '${MARKER}';
  },
};
</script>
</body>
</html>`;
}

const stats = (page: Page): Promise<DeliveryStats> => page.evaluate(() => (window as unknown as PageWindow).canvasPage.stats());

/** The id rrweb gave the `<canvas>` in the recording's first full snapshot, and that node. */
function canvasNode(events: readonly RecordedEvent[]): { id: number; attributes: Record<string, unknown> } | undefined {
  const snapshot = events.find((e) => e.type === 2)?.data as { node?: unknown } | undefined;
  const walk = (node: unknown): { id: number; attributes: Record<string, unknown> } | undefined => {
    const n = node as { tagName?: string; id?: number; attributes?: Record<string, unknown>; childNodes?: unknown[] };
    if (n.tagName === 'canvas' && typeof n.id === 'number') return { id: n.id, attributes: n.attributes ?? {} };
    for (const child of n.childNodes ?? []) {
      const found = walk(child);
      if (found) return found;
    }
    return undefined;
  };
  return snapshot?.node === undefined ? undefined : walk(snapshot.node);
}

const canvasRecords = (events: readonly RecordedEvent[]): RecordedEvent[] =>
  events.filter((e) => e.type === INCREMENTAL && (e.data as { source?: number }).source === CANVAS_MUTATION);

/** The recording holds the DOM mutation that put {@link MARKER} on the page. */
const hasMarker = (events: readonly RecordedEvent[]): boolean =>
  events.some((e) => e.type === INCREMENTAL && (e.data as { source?: number }).source === MUTATION && JSON.stringify(e.data).includes(MARKER));

/**
 * Opens the page, starts recording with `start` (or from the configuration's `recording`), draws
 * on the canvas, waits until the server holds the marker the page adds after drawing (and, with
 * `untilCanvas`, a canvas record), stops and returns the finished recording.
 */
async function recordDrawing(config: AnalyticsConfig, start: RecordingStartOptions | undefined, untilCanvas: boolean): Promise<Recording> {
  const path = `/canvas-${config.projectId}.html`;
  env.web.setPage(path, { html: canvasPageHtml(config) });
  const context = await env.browser.newContext();
  try {
    const page = await context.newPage();
    captureConsole(page);
    await page.goto(`${env.web.url}${path}`);
    await page.waitForFunction(() => 'canvasPage' in window, undefined, { timeout: 30_000 });
    await page.evaluate((options) => (window as unknown as PageWindow).canvasPage.analytics.startRecording(options ?? undefined), start ?? null);
    await waitUntil('capture to begin', async () => (await stats(page)).recordingQueued > 0);
    await page.evaluate(() => (window as unknown as PageWindow).canvasPage.draw(60));
    const sessionId = await page.evaluate(() => (window as unknown as PageWindow).canvasPage.analytics.getSessionId());
    // Chunks are uploaded every 10 s: wait for what the drawing left on the server.
    await waitUntil('the drawing on the server', async () => {
      const events = (await env.server.store.getRecording(config.projectId, sessionId))?.events ?? [];
      return hasMarker(events) && (!untilCanvas || canvasRecords(events).length > 0);
    });
    await page.evaluate(() => (window as unknown as PageWindow).canvasPage.analytics.stopRecording());
    let recording: Recording | null = null;
    await waitUntil('the final chunk', async () => {
      recording = await env.server.store.getRecording(config.projectId, sessionId);
      return recording?.finished === true;
    });
    return recording as unknown as Recording;
  } finally {
    await context.close();
  }
}

/** The recording of the first test, replayed in the dashboard by the last. */
let recordedWithCanvas: Recording | undefined;

describe('canvas recording in Chromium', () => {
  it('with recordCanvas (a startRecording option), stores images of the drawn canvas as canvas records', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = { apiKey: project.writeKey, projectId: project.id, endpoint: env.server.url, enableAutoPageTracking: false, debug: true };
    recordedWithCanvas = await recordDrawing(config, { recordCanvas: true, canvasFps: 5 }, true);
    const { events, gaps } = recordedWithCanvas;
    expect(gaps).toEqual([]);
    const canvas = canvasNode(events);
    expect(canvas).toBeDefined();
    // The snapshot carries the canvas as it was drawn before the recording began.
    expect(String(canvas?.attributes.rr_dataURL)).toMatch(/^data:image\/webp;base64,/);
    const records = canvasRecords(events);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      const data = record.data as { id: number; commands?: Array<{ property: string; args: unknown[] }> };
      expect(data.id).toBe(canvas?.id);
      // An image of the whole canvas, drawn over it: WebP, as the recorder asks rrweb for.
      const drawn = JSON.stringify(data.commands?.find((c) => c.property === 'drawImage'));
      expect(drawn).toContain('"type":"image/webp"');
    }
  });

  it('with recording.recordCanvas in the configuration, stores canvas records too', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = {
      apiKey: project.writeKey,
      projectId: project.id,
      endpoint: env.server.url,
      enableAutoPageTracking: false,
      recording: { recordCanvas: true },
    };
    const { events } = await recordDrawing(config, undefined, true);
    expect(canvasRecords(events).length).toBeGreaterThan(0);
  });

  it('by default records no canvas record and no image of the canvas, while the rest of the page is recorded', async () => {
    const project = await env.server.createProject();
    const config: AnalyticsConfig = { apiKey: project.writeKey, projectId: project.id, endpoint: env.server.url, enableAutoPageTracking: false };
    const { events } = await recordDrawing(config, undefined, false);
    expect(hasMarker(events)).toBe(true);
    const canvas = canvasNode(events);
    expect(canvas).toBeDefined();
    expect(canvas?.attributes).not.toHaveProperty('rr_dataURL');
    expect(canvasRecords(events)).toEqual([]);
    expect(JSON.stringify(events)).not.toContain('image/webp');
  });

  it('is replayed by the dashboard with the canvas drawn in the script-less sandbox, under its policy, with no violation; without canvas records, from the snapshot’s image', async () => {
    expect(recordedWithCanvas, 'the recording of the first test').toBeDefined();
    const events = (recordedWithCanvas as Recording).events;
    const out = mkdtempSync(join(tmpdir(), 'sa-dashboard-build-'));
    const root = resolve(import.meta.dirname, '../..');
    await build({ configFile: join(root, 'dashboard/vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: out } });
    const server = await startTestServer('sqlite', { dashboard: { root: out } });
    const context = await env.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const violations: string[] = [];
    try {
      await watchCspViolations(context, violations);
      const upload = async (session: string, stream: readonly RecordedEvent[]) => {
        const res = await fetch(`${server.url}/api/v1/sessions/${session}/recordings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `ApiKey ${server.project.writeKey}`, 'x-project-id': server.project.id },
          body: JSON.stringify({ events: stream, duration: 10, event_offset: 0, is_final: true, start_url: 'https://shop.example/chart' }),
        });
        expect(res.status).toBe(200);
      };
      await upload('canvas-replay', events);
      await upload('no-canvas-replay', events.filter((e) => !canvasRecords([e]).length));
      const p = await context.newPage();
      await p.goto(`${server.url}/dashboard/`);
      await p.getByLabel('Project id').fill(server.project.id);
      await p.getByLabel('Read key').fill(server.project.readKey);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByTestId('stat-visitors').waitFor();
      const openReplay = async (session: string) => {
        await p.evaluate((id) => (location.hash = `#/replay/${id}`), session);
        await p.getByTestId('replay-time').waitFor();
      };
      await openReplay('canvas-replay');
      // The replay's iframe runs no script, and its canvas shows a drawing (the dashboard draws it).
      const state = () =>
        p.evaluate(() => {
          const frame = document.querySelector<HTMLIFrameElement>('.replayer-wrapper iframe');
          const canvas = frame?.contentDocument?.querySelector('canvas');
          const pixel = canvas?.getContext('2d')?.getImageData(80, 45, 1, 1).data;
          return { sandbox: frame?.getAttribute('sandbox') ?? null, alpha: pixel?.[3] ?? 0 };
        });
      await waitUntil('the replayed canvas to show the drawing', async () => (await state()).alpha > 0, 30_000);
      expect((await state()).sandbox).toBe('allow-same-origin');
      // The same recording without its canvas records: the canvas as the full snapshot holds it.
      await p.evaluate(() => (location.hash = '#/'));
      await p.getByTestId('stat-visitors').waitFor();
      await openReplay('no-canvas-replay');
      await waitUntil('the replay without canvas records to show the snapshot’s drawing', async () => (await state()).alpha > 0, 30_000);
      expect((await state()).sandbox).toBe('allow-same-origin');
      expect(violations, 'Content-Security-Policy violations').toEqual([]);
    } finally {
      await context.close();
      await server.close();
      rmSync(out, { recursive: true, force: true });
    }
  });
});
