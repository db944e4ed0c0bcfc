/**
 * The fault proxy of `test-support/fault-proxy.ts`, against a tiny recording `node:http` server:
 * faithful forwarding, each fault kind doing what it says, and a reproducible seeded schedule.
 */
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KINDS, type FaultKind, type FaultProxy, mulberry32, startFaultProxy } from '../../test-support/fault-proxy.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

let target: Server;
let targetUrl: string;
const seen: Seen[] = [];
let proxy: FaultProxy | undefined;

beforeAll(async () => {
  target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { 'access-control-allow-origin': req.headers.origin ?? '*', 'access-control-max-age': '7200' });
        res.end();
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json', 'x-target': 'yes' });
      res.end(JSON.stringify({ n: seen.length, bytes: Buffer.concat(chunks).length }));
    });
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  target.closeAllConnections();
  await new Promise<void>((resolve) => target.close(() => resolve()));
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  seen.length = 0;
});

const post = (url: string, body: BodyInit = '[]', headers: Record<string, string> = {}) =>
  fetch(`${url}/api/v1/events/batch?x=1`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

/** Sends `count` requests one after another; returns what each got (status or 'dropped'). */
async function sendSequentially(url: string, count: number): Promise<Array<number | 'dropped'>> {
  const outcomes: Array<number | 'dropped'> = [];
  for (let i = 0; i < count; i++) {
    try {
      const res = await post(url);
      await res.arrayBuffer();
      outcomes.push(res.status);
    } catch {
      outcomes.push('dropped');
    }
  }
  return outcomes;
}

describe('startFaultProxy({ target, seed, faultRate, mix })', () => {
  it('with faultRate 0 forwards method, path, headers and body bytes, and relays the answer as it came', async () => {
    proxy = await startFaultProxy({ target: targetUrl, faultRate: 0 });
    const gz = gzipSync(JSON.stringify([{ event_type: 'x' }]));
    const res = await post(proxy.url, gz, { 'content-encoding': 'gzip', authorization: 'ApiKey k', 'x-project-id': 'p' });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-target')).toBe('yes');
    expect(await res.json()).toEqual({ n: 1, bytes: gz.length });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/api/v1/events/batch?x=1' });
    expect(seen[0]!.headers).toMatchObject({ 'content-encoding': 'gzip', authorization: 'ApiKey k', 'x-project-id': 'p' });
    expect(seen[0]!.body.equals(gz)).toBe(true);
    expect(proxy.counts()).toMatchObject({ forwarded: 1 });
  });

  const single = (kind: FaultKind, extra: object = {}) =>
    startFaultProxy({ target: targetUrl, faultRate: 1, mix: { [kind]: 1 }, ...extra });

  it.each([
    ['status-500', 500, 'INTERNAL_ERROR'],
    ['status-503', 503, 'STORAGE_UNAVAILABLE'],
  ] as const)('%s answers %i { error, code: %s } without forwarding', async (kind, status, code) => {
    proxy = await single(kind);
    const res = await post(proxy.url);
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(await res.json()).toMatchObject({ code });
    expect(seen).toHaveLength(0);
    expect(proxy.counts()[kind]).toBe(1);
  });

  it('status-502 answers an HTML 502, as a load balancer would', async () => {
    proxy = await single('status-502');
    const res = await post(proxy.url);
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(seen).toHaveLength(0);
  });

  it('rate-limit answers 429 RATE_LIMITED with the configured Retry-After, readable cross-origin', async () => {
    proxy = await single('rate-limit', { retryAfterSeconds: 7 });
    const res = await post(proxy.url, '[]', { origin: 'https://app.example' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(await res.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect(seen).toHaveLength(0);
  });

  it('drop-before drops the connection and the server never sees the request', async () => {
    proxy = await single('drop-before');
    await expect(post(proxy.url)).rejects.toThrow();
    expect(seen).toHaveLength(0);
    expect(proxy.counts()['drop-before']).toBe(1);
  });

  it('drop-after lets the server handle the request, then drops the connection before the answer', async () => {
    proxy = await single('drop-after');
    await expect(post(proxy.url, '[1,2,3]')).rejects.toThrow();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body.toString()).toBe('[1,2,3]');
  });

  it('delay forwards after the configured wait', async () => {
    proxy = await single('delay', { delayMs: 150 });
    const started = performance.now();
    const res = await post(proxy.url);
    expect(res.status).toBe(201);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(seen).toHaveLength(1);
  });

  it('forwards CORS preflights even when every request is to fail', async () => {
    proxy = await startFaultProxy({ target: targetUrl, faultRate: 1 });
    const res = await fetch(`${proxy.url}/api/v1/events/batch`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-max-age')).toBe('7200');
    expect(proxy.counts()).toMatchObject({ preflight: 1, forwarded: 0 });
  });

  it('plays the same schedule for the same seed, a different one for another seed, at about the rate asked', async () => {
    const run = async (seed: number) => {
      proxy = await startFaultProxy({ target: targetUrl, seed, faultRate: 0.4, delayMs: 1, retryAfterSeconds: 0 });
      const outcomes = await sendSequentially(proxy.url, 150);
      const faults = proxy.log.map((r) => r.fault);
      const counts = proxy.counts();
      await proxy.close();
      proxy = undefined;
      return { outcomes, faults, counts };
    };
    const a = await run(42);
    const b = await run(42);
    const c = await run(43);
    expect(b.faults).toEqual(a.faults);
    expect(b.outcomes).toEqual(a.outcomes);
    expect(c.faults).not.toEqual(a.faults);
    const faulted = a.faults.filter((f) => f !== 'none').length;
    // Deterministic for the seed: 150 draws at 0.4 land near 60.
    expect(faulted).toBeGreaterThan(35);
    expect(faulted).toBeLessThan(85);
    expect(new Set(a.faults)).toEqual(new Set([...FAULT_KINDS, 'none']));
    // Every request is counted exactly once.
    expect(Object.values(a.counts).reduce((x, y) => x + y, 0)).toBe(150);
    // What the client saw matches what the proxy says it did.
    a.faults.forEach((fault, i) => {
      const expected = { 'status-500': 500, 'status-502': 502, 'status-503': 503, 'rate-limit': 429, 'drop-before': 'dropped', 'drop-after': 'dropped', delay: 201, none: 201 }[fault];
      expect(a.outcomes[i]).toBe(expected);
    });
    console.log(`fault proxy: seed 42, 150 requests, faults ${JSON.stringify(a.counts)}`);
  });

  it('setFaultRate(0) stops the faults', async () => {
    proxy = await startFaultProxy({ target: targetUrl, faultRate: 1, mix: { 'status-500': 1 } });
    expect((await post(proxy.url)).status).toBe(500);
    proxy.setFaultRate(0);
    expect((await post(proxy.url)).status).toBe(201);
  });
});

describe('mulberry32(seed)', () => {
  it('is reproducible and spreads over [0, 1)', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    expect(xs.filter((x) => x < 0.5).length).toBeGreaterThan(400);
  });
});
