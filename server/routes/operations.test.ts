import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';

describe.each(STORE_KINDS)('operations endpoints on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { corsOrigins: ['https://app.example.com'] });
  });
  afterAll(() => server.close());

  it('GET /healthz answers 200', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 while the database answers', async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', store: kind });
  });

  it('GET /metrics counts requests and events in Prometheus text', async () => {
    const e = makeEvent();
    await server.postBatch([e, { bad: true }]);
    await server.postBatch([e]);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^sa_http_requests_total\{route="\/api\/v1\/events\/batch",status="200"\} [2-9]/m);
    expect(text).toMatch(/^sa_events_accepted_total [1-9]/m);
    expect(text).toMatch(/^sa_events_rejected_total [1-9]/m);
    expect(text).toMatch(/^sa_events_deduplicated_total [1-9]/m);
    expect(text).toMatch(/^sa_write_latency_seconds_count [1-9]/m);
    expect(text).toMatch(/^sa_write_queue_depth 0$/m);
  });

  it('answers an unknown route with 404 NOT_FOUND and a wrong method with 405', async () => {
    const missing = await fetch(`${server.url}/api/v1/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
    const wrong = await fetch(`${server.url}/api/v1/events/batch`, { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
  });

  describe('CORS', () => {
    it('answers a preflight from an allowed origin with the headers and a max age', async () => {
      const res = await fetch(`${server.url}/api/v1/events/batch`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, x-project-id, content-type, content-encoding, x-sent-at',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      for (const h of ['authorization', 'x-project-id', 'content-type', 'content-encoding', 'x-sent-at']) expect(allowed).toContain(h);
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThanOrEqual(600);
    });

    it('gives a disallowed origin no CORS headers', async () => {
      const res = await fetch(`${server.url}/api/v1/events/batch`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
      });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      const post = await server.postBatch([makeEvent()], { headers: { origin: 'https://evil.example' } });
      expect(post.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('lets an allowed origin read Retry-After', async () => {
      const res = await server.postBatch([makeEvent()], { headers: { origin: 'https://app.example.com' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After');
    });
  });
});

describe('trust proxy', () => {
  it('takes the client address from X-Forwarded-For only when told to', async () => {
    const behindProxy = await startTestServer('sqlite', { trustProxy: true });
    try {
      const project = await behindProxy.createProject({ fullIp: true });
      await behindProxy.postBatch([makeEvent()], { project, headers: { 'x-forwarded-for': '203.0.113.9' } });
      const page = await behindProxy.store.queryEvents({ projectId: project.id, limit: 10 });
      expect(page.events[0]?.ipAddress).toBe('203.0.113.9');
    } finally {
      await behindProxy.close();
    }
  });
});
