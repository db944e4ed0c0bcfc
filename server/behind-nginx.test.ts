/**
 * The server behind a real nginx (Debian's package, started by the test on 127.0.0.1): the demo's
 * keys stay on the machine behind nginx's default `proxy_pass`, and `--trust-proxy` believes
 * `X-Forwarded-For` only from the listed proxies, reading it from the right. The test's client
 * connects from 127.0.0.5, an address of this machine that is not the proxy's (127.0.0.1).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Nginx, requestFrom, startNginx } from '../test-support/nginx.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../test-support/server/test-server.js';

const CLIENT = '127.0.0.5';

describe('demo mode behind nginx in its default setting', () => {
  let server: TestServer;
  let nginx: Nginx;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { demo: { projectId: 'proj_demo', apiKey: 'sa_w_demo', readKey: 'sa_r_demo' } });
    nginx = await startNginx(`proxy_pass ${server.url};`);
  });
  afterAll(async () => {
    await nginx?.stop();
    await server?.close();
  });

  it('hands the keys to a browser on this machine, and nothing to a request that came through the proxy', async () => {
    const direct = await requestFrom('127.0.0.1', `${server.url}/demo/config.json`);
    expect([direct.status, JSON.parse(direct.body)]).toEqual([200, { projectId: 'proj_demo', apiKey: 'sa_w_demo', readKey: 'sa_r_demo' }]);
    for (const host of ['analytics.example.com', `127.0.0.1:${nginx.port}`, 'localhost']) {
      const proxied = await requestFrom(CLIENT, `${nginx.url}/demo/config.json`, { headers: { host } });
      expect([host, proxied.status, proxied.body]).toEqual([host, 404, expect.not.stringContaining('sa_r_demo')]);
    }
    // The API itself still answers through the proxy.
    expect((await requestFrom(CLIENT, `${nginx.url}/healthz`)).status).toBe(200);
  });

  it('is refused on an address other machines reach, and behind a trusted proxy', async () => {
    const demo = { projectId: 'p', apiKey: 'a', readKey: 'r' };
    const { serve } = await import('./serve.js');
    const { silentLogger } = await import('./logger.js');
    await expect(serve({ store: server.store, logger: silentLogger, port: 0, host: '0.0.0.0', demo })).rejects.toThrow(/loopback only/);
    await expect(serve({ store: server.store, logger: silentLogger, port: 0, host: '127.0.0.1', demo, trustProxy: true })).rejects.toThrow(/behind a proxy/);
  });
});

describe.each(STORE_KINDS)('--trust-proxy 127.0.0.1 behind nginx on %s', (kind) => {
  let server: TestServer;
  let nginx: Nginx;
  beforeAll(async () => {
    server = await startTestServer(kind, {
      trustProxy: '127.0.0.1',
      // 5 requests, then one every 10 s: the test's 100 requests take a second at most.
      rateLimit: { project: false, ip: { ratePerSecond: 0.1, burst: 5 } },
    });
    nginx = await startNginx(`proxy_pass ${server.url}; proxy_set_header Host $host; proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;`);
  });
  afterAll(async () => {
    await nginx?.stop();
    await server?.close();
  });

  const post = (base: string, forwardedFor: string, events: unknown[]) =>
    requestFrom(CLIENT, `${base}/api/v1/events/batch`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `ApiKey ${server.project.writeKey}`,
        'x-project-id': server.project.id,
        'x-forwarded-for': forwardedFor,
      },
      body: JSON.stringify(events),
    });

  it('limits a client that rotates X-Forwarded-For as the one address nginx saw, and stores that address', async () => {
    const statuses: number[] = [];
    const sent: string[] = [];
    for (let i = 0; i < 100; i++) {
      const event = makeEvent({ user_id: `spoof-${i}` });
      const res = await post(nginx.url, `203.0.113.${i % 250}, 198.51.100.${i % 250}`, [event]);
      statuses.push(res.status);
      if (res.status === 200) sent.push(event.event_id as string);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(95);
    const stored = (await server.store.queryEvents({ projectId: server.project.id, limit: 100 })).events;
    // Truncated for privacy (the project keeps no full addresses): 127.0.0.5 → 127.0.0.0.
    expect(stored.filter((e) => sent.includes(e.eventId)).map((e) => e.ipAddress)).toEqual(Array(5).fill('127.0.0.0'));
  });

  it('ignores X-Forwarded-For from a peer that is not a listed proxy', async () => {
    // Straight to the server from 127.0.0.5: its bucket is already empty from the test above,
    // whatever address the header claims.
    const res = await post(server.url, '192.0.2.77', [makeEvent()]);
    expect(res.status).toBe(429);
  });
});
