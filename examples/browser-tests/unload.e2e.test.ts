/**
 * Events tracked just before the page goes away arrive (DESIGN.md "Unload is the main thread's
 * job"): on `pagehide` the facade sends what the server has not acknowledged by `sendBeacon` (the
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
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserTestEnvironment, printPageLogOnFailure, startEnvironment } from './environment.js';
import { type HarnessWindow, openAnalyticsPage, pageConfig, readEvents, runId, waitForEvents } from './harness.js';

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
      const context = await env.browser.newContext();
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
      } finally {
        await context.close();
      }
    });
  }

  it('an event made by a later pagehide listener arrives by beacon, the worker unable to send', async () => {
    const project = await env.server.createProject();
    const gate = await startBeaconOnlyGate(env.server.url);
    const context = await env.browser.newContext();
    try {
      const page = await openAnalyticsPage(context, env.web, '/unload-late.html', {
        config: pageConfig(gate.url, project, { batchSize: 100, flushInterval: 600_000 }),
      });
      const run = runId();
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

/**
 * An HTTP gate in front of the server that lets only the beacon form of the batch endpoint
 * (credentials in the query) through and answers everything else, the worker's sends and their
 * preflights, with 503. Records the event types of each beacon.
 */
async function startBeaconOnlyGate(target: string): Promise<{ url: string; beacons: string[][]; close(): Promise<void> }> {
  const beacons: string[][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url!.includes('api_key=')) {
        res.writeHead(503, { 'access-control-allow-origin': '*' }).end();
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      beacons.push((JSON.parse(body) as Array<{ event_type: string }>).map((e) => e.event_type));
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
