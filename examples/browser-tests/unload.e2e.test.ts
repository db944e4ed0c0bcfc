/**
 * Events tracked just before the page goes away arrive (docs/architecture.md, "The unload path"): on `pagehide` the facade sends what the server has not acknowledged by `sendBeacon` (the
 * beacon form of the batch endpoint); whatever the worker also managed to send is deduplicated by
 * event id. The client is set so that the worker would not send these events on its own (a batch
 * size above N, a long interval): without the unload path they would be lost.
 *
 * An event made during the unload itself, by a `pagehide` listener the app added after the
 * client's (performance tracking's is one), arrives too, with the worker's requests blocked: on
 * the window, Chromium runs such listeners after the client's beacon.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from '../../test-support/browser/environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents } from '../../test-support/browser/harness.js';

const N = 60;

let env: BrowserTestEnvironment;
beforeAll(async () => {
  env = await startEnvironment();
});
afterAll(() => env?.close());
printPageLogOnFailure();

describe('events tracked right before the page goes away', () => {
  const cases: Array<{ name: string; leave: (page: Page) => Promise<unknown> }> = [
    { name: 'the page is closed', leave: (page) => page.close({ runBeforeUnload: true }) },
    { name: 'the page navigates away', leave: (page) => page.goto('about:blank') },
  ];

  for (const { name, leave } of cases) {
    it(`all arrive, once each, when ${name}`, async () => {
      const project = await env.server.createProject();
      const context = await env.browser.newContext({ timezoneId: 'America/Lima' });
      try {
        const page = await openAnalyticsPage(context, env.web, '/unload.html', {
          config: pageConfig(env.server.url, project, { batchSize: 100, flushInterval: 600_000 }),
        });
        expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });

        const run = runId();
        await page.evaluate(({ r, n }) => (window as unknown as HarnessWindow).harness.trackMany('last_moment', n, r), { r: run, n: N });
        await leave(page);

        await waitForEvents(env.server.store, project.id, 'last_moment', N);
        const rows = await readEvents(env.server.store, project.id);
        expect(rows).toHaveLength(N);
        expect(new Set(rows.map((row) => row.eventId)).size).toBe(N);
        expect(rows.every((row) => row.eventType === 'last_moment' && row.properties.run === run)).toBe(true);
        expect(new Set(rows.map((row) => row.properties.i)).size).toBe(N);
        // Sent by beacon from the page, with the time zone the worker read.
        expect(new Set(rows.map((row) => row.properties.timezone))).toEqual(new Set(['America/Lima']));
      } finally {
        await context.close();
      }
    });
  }

  // Real size, default settings (batchSize 20, flushInterval 10 s, maxQueueSize 1000): the worker
  // is sending while the page goes away, and what it has not had acknowledged (hundreds of events
  // of about 300 bytes, far more than a 64 KB beacon budget holds as plain JSON) goes by gzipped
  // beacons. None may be lost, none stored twice.
  // Where the browser has no fetchLater (Firefox, Safari; Chromium outside secure contexts) the
  // pagehide beacon is all there is: the same cases without it.
  const withAndWithout = [
    ...cases.map((c) => ({ ...c, fetchLater: true })),
    ...cases.map((c) => ({ ...c, fetchLater: false })),
  ];
  for (const { name, leave, fetchLater } of withAndWithout) {
    it(`500 realistic events, default settings, all arrive once each when ${name}${fetchLater ? '' : ', without fetchLater'}`, async () => {
      const project = await env.server.createProject();
      const context = await env.browser.newContext();
      if (!fetchLater) {
        await context.addInitScript(removeFetchLater);
      }
      try {
        const page = await openAnalyticsPage(context, env.web, '/unload-500.html', { config: pageConfig(env.server.url, project) });
        expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });
        expect(await page.evaluate(() => typeof (window as { fetchLater?: unknown }).fetchLater)).toBe(fetchLater ? 'function' : 'undefined');
        const run = runId();
        const size = await page.evaluate(
          ({ r, n }) => {
            const { analytics } = (window as unknown as HarnessWindow).harness;
            let bytes = 0;
            for (let i = 0; i < n; i++) {
              const properties = {
                run: r,
                i,
                product_id: `sku-${100_000 + i}`,
                product_name: 'Trail running shoes, waterproof, size 42',
                category: 'footwear/running',
                price_cents: 12_900 + i,
                currency: 'eur',
                list: 'search results',
                position: i % 24,
              };
              bytes += JSON.stringify(properties).length;
              analytics.track('last_moment', properties);
            }
            return bytes / n;
          },
          { r: run, n: 500 },
        );
        // With the page, screen, user agent and ids each event carries, that is about 300 bytes or more.
        expect(size).toBeGreaterThan(150);
        await leave(page);

        await waitForEvents(env.server.store, project.id, 'last_moment', 500);
        const rows = await readEvents(env.server.store, project.id, 'last_moment');
        expect(rows).toHaveLength(500);
        expect(new Set(rows.map((row) => row.eventId)).size).toBe(500);
        expect(new Set(rows.map((row) => row.properties.i))).toEqual(new Set(Array.from({ length: 500 }, (_, i) => i)));
        expect(rows.every((row) => row.properties.run === run)).toBe(true);
      } finally {
        await context.close();
      }
    });
  }

  it('500 events tracked in the task where the client became ready, then the page navigates away: all arrive once each', async () => {
    // Nothing of the page waits: the beacon sender must already be loaded when the client is ready
    // (docs/decisions.md, "Start-up").
    const project = await env.server.createProject();
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/unload-at-ready.html', { config: pageConfig(env.server.url, project, { batchSize: 1000, flushInterval: 600_000 }) });
      const run = runId();
      await page.evaluate(async (r) => {
        const { harness } = window as unknown as HarnessWindow;
        await harness.stats();
        harness.trackMany('at_ready', 500, r);
        // The next task: navigating inside this one would leave the test's evaluate unanswered.
        setTimeout(() => location.assign('/nothing-here.html'), 0);
      }, run);
      await page.waitForURL('**/nothing-here.html');
      await waitForEvents(env.server.store, project.id, 'at_ready', 500);
      const rows = await readEvents(env.server.store, project.id, 'at_ready');
      expect(rows).toHaveLength(500);
      expect(new Set(rows.map((row) => row.properties.i)).size).toBe(500);
      expect(rows.every((row) => row.properties.run === run)).toBe(true);
    } finally {
      await context.close();
    }
  });

  it('without fetchLater, pagehide sends the body the worker built as it is, and encodes none of its events again', async () => {
    const project = await env.server.createProject();
    const gate = await startBeaconOnlyGate(env.server.url);
    const context = await env.browser.newContext();
    await context.addInitScript(removeFetchLater);
    await context.addInitScript(() => {
      // Notes when the core's body reaches the page (the facade's port handler sees it first).
      const flags = window as unknown as { heldBodies: number };
      flags.heldBodies = 0;
      const descriptor = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage')!;
      Object.defineProperty(MessagePort.prototype, 'onmessage', {
        configurable: true,
        get() {
          return descriptor.get!.call(this);
        },
        set(handler: ((event: MessageEvent) => void) | null) {
          const counting = function (this: MessagePort, event: MessageEvent) {
            handler!.call(this, event);
            if ((event.data as { t?: string } | null)?.t === 'deferred-arm') flags.heldBodies++;
          };
          descriptor.set!.call(this, typeof handler === 'function' ? counting : handler);
        },
      });
    });
    try {
      const page = await openAnalyticsPage(context, env.web, '/unload-held.html', {
        config: pageConfig(gate.url, project, { batchSize: 1000, flushInterval: 600_000, debug: true }),
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });
      const run = runId();
      await page.evaluate((r) => (window as unknown as HarnessWindow).harness.trackMany('held', 200, r), run);
      await page.waitForFunction(() => (window as unknown as { heldBodies: number }).heldBodies > 0, undefined, { timeout: 30_000 });
      await page.goto('about:blank');

      await waitForEvents(env.server.store, project.id, 'held', 200);
      const rows = await readEvents(env.server.store, project.id, 'held');
      expect(rows).toHaveLength(200);
      expect(new Set(rows.map((row) => row.properties.i)).size).toBe(200);
      // One beacon, the core's gzip body of all 200; the page's own beacon path sent nothing.
      expect(gate.beacons).toEqual([Array.from({ length: 200 }, () => 'held')]);
      expect(gate.gzipped).toEqual([true]);
      // Made by the worker's CompressionStream (a gzip header without a time), not by the page's
      // fflate, which writes the current time there.
      expect(gate.gzipTimes).toEqual([0]);
    } finally {
      await context.close();
      await gate.close();
    }
  });

  it("the pagehide beacon of the client build is gzipped (its gzip evaluated at the first beacon, not at start-up)", async () => {
    // Events made by a later pagehide listener, with the worker's sends refused: what arrives came
    // by the facade's own beacon (not a body the core built), whose gzip the build evaluates lazily
    // (main/unload/gzip.ts).
    const project = await env.server.createProject();
    const gate = await startBeaconOnlyGate(env.server.url);
    const context = await env.browser.newContext();
    await context.addInitScript(removeFetchLater);
    try {
      const page = await openAnalyticsPage(context, env.web, '/unload-gzip.html', {
        config: pageConfig(gate.url, project, { batchSize: 1000, flushInterval: 600_000 }),
      });
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });
      const run = runId();
      await page.evaluate((r) => {
        const { harness } = window as unknown as HarnessWindow;
        window.addEventListener('pagehide', () => harness.trackMany('gzipped', 200, r));
      }, run);
      await page.goto('about:blank');

      await waitForEvents(env.server.store, project.id, 'gzipped', 200);
      const rows = await readEvents(env.server.store, project.id, 'gzipped');
      expect(new Set(rows.map((row) => row.properties.i)).size).toBe(200);
      expect(gate.gzipped.length).toBeGreaterThan(0);
      expect(gate.gzipped.every(Boolean)).toBe(true);
      // By the page's fflate, which writes the current time in the gzip header.
      expect(gate.gzipTimes.every((time) => time > 0)).toBe(true);
    } finally {
      await context.close();
      await gate.close();
    }
  });

  it('an event made by a later pagehide listener arrives by beacon, the worker unable to send', async () => {
    const project = await env.server.createProject();
    const gate = await startBeaconOnlyGate(env.server.url);
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/unload-late.html', {
        config: pageConfig(gate.url, project, { batchSize: 100, flushInterval: 600_000 }),
      });
      const run = runId();
      // Once the client is ready (its beacon sender loaded): this test is about the later listener.
      expect(await page.evaluate(() => (window as unknown as HarnessWindow).harness.stats())).toMatchObject({ mode: 'worker' });
      await page.evaluate((r) => {
        const { analytics } = (window as unknown as HarnessWindow).harness;
        analytics.track('before_leaving', { run: r });
        window.addEventListener('pagehide', () => analytics.track('during_pagehide', { run: r }));
      }, run);
      await page.goto('about:blank');

      // Two beacons, forwarded by the gate each in its own time: wait for both events.
      await waitForEvents(env.server.store, project.id, 'before_leaving', 1);
      await waitForEvents(env.server.store, project.id, 'during_pagehide', 1);
      const rows = await readEvents(env.server.store, project.id);
      expect(rows.map((row) => row.eventType).sort()).toEqual(['before_leaving', 'during_pagehide']);
      // One beacon each: the later listener's event went in a beacon of its own, at its task's end.
      // (Two keepalive requests may reach the gate in either order.)
      expect([...gate.beacons].sort((a, b) => a[0]!.localeCompare(b[0]!))).toEqual([['before_leaving'], ['during_pagehide']]);
    } finally {
      await context.close();
      await gate.close();
    }
  });
});

/** Takes `fetchLater` away before the page's scripts run, as in browsers that have none (Firefox, Safari). */
function removeFetchLater(): void {
  for (let o: object | null = window; o !== null; o = Object.getPrototypeOf(o)) Reflect.deleteProperty(o, 'fetchLater');
}

/**
 * An HTTP gate in front of the server that lets only the beacon form of the batch endpoint
 * (credentials in the query) through and answers everything else, the worker's sends and their
 * preflights, with 503. Records the event types of each beacon.
 */
async function startBeaconOnlyGate(target: string): Promise<{ url: string; beacons: string[][]; gzipped: boolean[]; gzipTimes: number[]; close(): Promise<void> }> {
  const beacons: string[][] = [];
  /** Per beacon: whether its body was gzip (`encoding=gzip`). */
  const gzipped: boolean[] = [];
  /** Per gzip beacon: the MTIME of its gzip header (0 from the platform's CompressionStream). */
  const gzipTimes: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url!.includes('api_key=')) {
        res.writeHead(503, { 'access-control-allow-origin': '*' }).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const gzip = req.url!.includes('encoding=gzip');
      const text = gzip ? gunzipSync(body).toString('utf8') : body.toString('utf8');
      gzipped.push(gzip);
      if (gzip) gzipTimes.push(body.readUInt32LE(4));
      beacons.push((JSON.parse(text) as Array<{ event_type: string }>).map((e) => e.event_type));
      fetch(`${target}${req.url!}`, { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? 'text/plain' }, body }).then(
        async (response) => res.writeHead(response.status).end(await response.text()),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    beacons,
    gzipped,
    gzipTimes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
