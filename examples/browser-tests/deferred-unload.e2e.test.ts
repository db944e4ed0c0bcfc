/**
 * The deferred request (docs/architecture.md, "The unload path"): where the page has `fetchLater`,
 * the facade keeps one request armed with the body the worker built of what the server has not
 * acknowledged, and the browser sends it when the page goes away, even when the renderer crashes
 * and no `pagehide` runs. The worker's own requests are held by a gate that never answers them, so
 * the events are really unacknowledged when the page goes; only the beacon form gets through.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents, waitUntil } from '../../test-support/browser/harness.js';

/** What the page's `fetchLater` was asked to arm, recorded by {@link recordFetchLater}. */
interface ArmedRequest {
  url: string;
  /** Events in the body, once read. */
  count: number | null;
  aborted: boolean;
}

interface ArmedWindow {
  armedRequests: ArmedRequest[];
}

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('the deferred request (fetchLater)', () => {
  it('300 unacknowledged events arrive once each when the renderer crashes', async () => {
    const project = await env.server.createProject();
    const gate = await startBeaconFormGate(env.server.url);
    const context = await env.browser.newContext();
    try {
      await context.addInitScript(recordFetchLater);
      const page = await openAnalyticsPage(context, env.web, '/deferred-crash.html', { config: pageConfig(gate.url, project) });
      expect(await page.evaluate(() => typeof (window as { fetchLater?: unknown }).fetchLater)).toBe('function');
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });

      const run = runId();
      await trackRealistic(page, 'before_crash', run, 0, 300);
      // The armed request carries all 300: the worker's batches are in flight at the gate, unanswered.
      await waitForArmed(page, 300);
      // The worker's first request may still be on its way to the gate on a busy machine.
      await waitUntil("the worker's batches held at the gate", () => gate.held() > 0);
      const armed = await page.evaluate(() => (window as unknown as ArmedWindow).armedRequests.filter((r) => !r.aborted));
      expect(armed).toHaveLength(1);
      expect(new URL(armed[0]!.url).searchParams.get('encoding')).toBe('gzip');

      const cdp = await context.newCDPSession(page);
      // Never answered: the renderer is gone. Not awaited: waiting on it here stalled the test.
      const crash = cdp.send('Page.crash').then(
        () => 'answered',
        (error: unknown) => String(error),
      );

      await waitForEvents(env.server.store, project.id, 'before_crash', 300);
      const rows = await readEvents(env.server.store, project.id, 'before_crash');
      expect(rows).toHaveLength(300);
      expect(new Set(rows.map((row) => row.eventId)).size).toBe(300);
      expect(new Set(rows.map((row) => row.properties.i)).size).toBe(300);
      expect(rows.every((row) => row.properties.run === run)).toBe(true);
      // No pagehide ran: the one request that got through is the deferred one.
      expect(gate.ids.map((ids) => ids.length)).toEqual([300]);
      expect(await Promise.race([crash, Promise.resolve('no answer')])).not.toBe('answered');
    } finally {
      await context.close().catch(() => undefined);
      await gate.close();
    }
  });

  it('on navigation, events posted after the body was armed go by beacon, and no event leaves twice', async () => {
    const project = await env.server.createProject();
    const gate = await startBeaconFormGate(env.server.url);
    const context = await env.browser.newContext();
    try {
      await context.addInitScript(recordFetchLater);
      const page = await openAnalyticsPage(context, env.web, '/deferred-navigate.html', { config: pageConfig(gate.url, project) });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });
      const run = runId();
      await trackRealistic(page, 'before_leaving', run, 0, 300);
      await waitForArmed(page, 300);
      await trackRealistic(page, 'before_leaving', run, 300, 50);
      await page.goto('about:blank');

      await waitForEvents(env.server.store, project.id, 'before_leaving', 350);
      const rows = await readEvents(env.server.store, project.id, 'before_leaving');
      expect(rows).toHaveLength(350);
      expect(new Set(rows.map((row) => row.properties.i)).size).toBe(350);
      // Each event left the page once: in the deferred request or in a pagehide beacon (a second
      // copy would come soon after the first).
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const sent = gate.ids.flat();
      expect(sent).toHaveLength(350);
      expect(new Set(sent).size).toBe(350);
    } finally {
      await context.close().catch(() => undefined);
      await gate.close();
    }
  });
});

/** An init script: wraps the page's `fetchLater` to record what is armed in `window.armedRequests`. */
function recordFetchLater(): void {
  const scope = window as unknown as ArmedWindow & { fetchLater?: (url: string, init: RequestInit) => unknown };
  const original = scope.fetchLater;
  scope.armedRequests = [];
  if (typeof original !== 'function') return;
  scope.fetchLater = (url, init) => {
    const entry: ArmedRequest = { url, count: null, aborted: false };
    scope.armedRequests.push(entry);
    init.signal?.addEventListener('abort', () => (entry.aborted = true));
    const body = new Response(init.body).body!;
    const stream = url.includes('encoding=gzip') ? body.pipeThrough(new DecompressionStream('gzip')) : body;
    void new Response(stream).json().then((events: unknown[]) => (entry.count = events.length));
    return original.call(window, url, init);
  };
}

/** Tracks `n` realistic events (about 300 bytes each with page, screen and ids) in one task, numbered from `from`. */
async function trackRealistic(page: Page, name: string, run: string, from: number, n: number): Promise<void> {
  await page.evaluate(
    (a) => {
      const { analytics } = (window as unknown as HarnessWindow).harness;
      for (let i = a.from; i < a.from + a.n; i++) {
        analytics.track(a.name, {
          run: a.run,
          i,
          product_id: `sku-${100_000 + i}`,
          product_name: 'Trail running shoes, waterproof, size 42',
          category: 'footwear/running',
          price_cents: 12_900 + i,
        });
      }
    },
    { name, run, from, n },
  );
}

/** Waits until one deferred request is armed, not aborted, with `count` events in its body. */
async function waitForArmed(page: Page, count: number): Promise<void> {
  await waitUntil(`a deferred request armed with ${count} events`, () =>
    page.evaluate((c) => (window as unknown as ArmedWindow).armedRequests.some((r) => !r.aborted && r.count === c), count),
  );
}

/**
 * An HTTP gate in front of the server: the beacon form of the batch endpoint (credentials in the
 * query) is forwarded, and the event ids of each such request recorded; everything else (the
 * worker's sends and their preflights) is held unanswered until the gate closes.
 */
async function startBeaconFormGate(target: string): Promise<{ url: string; ids: string[][]; held(): number; close(): Promise<void> }> {
  const ids: string[][] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url!.includes('api_key=')) {
        held.add(res);
        return;
      }
      const body = Buffer.concat(chunks);
      const text = req.url!.includes('encoding=gzip') ? gunzipSync(body).toString('utf8') : body.toString('utf8');
      ids.push((JSON.parse(text) as Array<{ event_id: string }>).map((event) => event.event_id));
      fetch(`${target}${req.url!}`, { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? 'text/plain' }, body }).then(
        async (response) => res.writeHead(response.status, { 'access-control-allow-origin': '*' }).end(await response.text()),
        () => res.writeHead(502).end(),
      );
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ids,
    held: () => held.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
