import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../protocol/index.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';

async function storedEvents(server: TestServer, projectId = server.project.id) {
  const page = await server.store.queryEvents({ projectId, limit: 1000 });
  return page.events;
}

describe.each(STORE_KINDS)('POST /api/v1/events/batch on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  it('stores a batch and answers { success, processed }', async () => {
    const project = await server.createProject();
    const events = [makeEvent(), makeEvent({ event_type: 'page_view' })];
    const res = await server.postBatch(events, { project });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, processed: 2 });
    const rows = await storedEvents(server, project.id);
    expect(rows.map((r) => r.eventId).sort()).toEqual(events.map((e) => e.event_id).sort());
    const row = rows.find((r) => r.eventId === events[0]?.event_id);
    expect(row).toMatchObject({
      eventType: 'button_clicked',
      userId: 'user-1',
      sessionId: 'session-1',
      userAgent: 'test-agent',
      properties: { plan: 'pro', count: 3, beta: true, none: null },
      clientTimestamp: Date.parse(events[0]?.timestamp as string),
    });
    expect(row?.timestamp).toBe(Date.parse(events[0]?.timestamp as string));
    expect(row?.receivedAt).toBeGreaterThan(0);
  });

  it('stores the valid events of a partly invalid batch and lists the rejected ones by index', async () => {
    const project = await server.createProject();
    const good = [makeEvent(), makeEvent()];
    const res = await server.postBatch([good[0], makeEvent({ properties: { plan: { nested: true } } }), good[1], { event_type: 5 }], { project });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { processed: number; errors: Array<{ index: number; error: string }> };
    expect(body.processed).toBe(2);
    expect(body.errors.map((e) => e.index)).toEqual([1, 3]);
    expect(body.errors[0]?.error).toMatch(/^properties\.plan: /);
    expect(body.errors[1]?.error).toMatch(/^event_type: /);
    expect((await storedEvents(server, project.id)).length).toBe(2);
  });

  it('answers 400 VALIDATION_ERROR when no event is valid, storing nothing', async () => {
    const project = await server.createProject();
    const res = await server.postBatch([{ nope: 1 }, makeEvent({ timestamp: 'yesterday' })], { project });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; error: string; errors: unknown[] };
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.errors).toHaveLength(2);
    expect(await storedEvents(server, project.id)).toEqual([]);
  });

  it('accepts an empty batch', async () => {
    const res = await server.postBatch([]);
    expect(await res.json()).toEqual({ success: true, processed: 0 });
  });

  it('acknowledges a resent batch without storing it twice', async () => {
    const project = await server.createProject();
    const events = Array.from({ length: 20 }, () => makeEvent());
    const first = await server.postBatch(events, { project });
    const again = await Promise.all([server.postBatch(events, { project }), server.postBatch(events, { project })]);
    for (const res of [first, ...again]) expect(await res.json()).toEqual({ success: true, processed: 20 });
    expect((await storedEvents(server, project.id)).length).toBe(20);
  });

  it('answers the exact path before the router and other spellings through it alike, deduplicating across them', async () => {
    const project = await server.createProject();
    const events = [makeEvent(), makeEvent()];
    const post = (path: string, body: string) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.writeKey}`, 'x-project-id': project.id },
        body,
      });
    for (const path of ['/api/v1/events/batch', '/api/v1/events/batch/', '/API/v1/events/batch']) {
      const res = await post(path, JSON.stringify(events));
      expect(await res.json()).toEqual({ success: true, processed: 2 });
      const bad = await post(path, '[{');
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { code: string }).code).toBe('INVALID_JSON');
    }
    expect((await storedEvents(server, project.id)).length).toBe(2);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^sa_http_requests_total\{route="\/api\/v1\/events\/batch",status="400"\} [3-9]/m);
    expect(metrics).not.toMatch(/route="unmatched",status="200"/);
  });

  it('keeps the first of two events with the same id in one batch', async () => {
    const project = await server.createProject();
    const e = makeEvent();
    const res = await server.postBatch([e, { ...e, event_type: 'second' }], { project });
    expect(await res.json()).toEqual({ success: true, processed: 2 });
    const rows = await storedEvents(server, project.id);
    expect(rows.map((r) => r.eventType)).toEqual(['button_clicked']);
  });

  it('makes an id for an event without one, and uses the arrival time when it has no timestamp', async () => {
    const project = await server.createProject();
    const before = Date.now();
    await server.postBatch([{ event_type: 'bare' }], { project });
    const [row] = await storedEvents(server, project.id);
    expect(row?.eventId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(row?.timestamp).toBeGreaterThanOrEqual(before);
    expect(row?.timestamp).toBe(row?.receivedAt);
  });

  it('corrects timestamps from a client whose clock is off, keeping the original', async () => {
    const project = await server.createProject();
    const hourAgo = Date.now() - 3_600_000;
    const e = makeEvent({ timestamp: new Date(hourAgo - 5000).toISOString() });
    await server.postBatch([e], { project, headers: { 'x-sent-at': new Date(hourAgo).toISOString() } });
    const [row] = await storedEvents(server, project.id);
    expect(row?.clientTimestamp).toBe(hourAgo - 5000);
    // Corrected: sent 5 s after the event by the client's clock, so about 5 s before arrival.
    expect(Math.abs((row?.receivedAt ?? 0) - 5000 - (row?.timestamp ?? 0))).toBeLessThan(2000);
  });

  it('leaves timestamps alone when the client clock is close', async () => {
    const project = await server.createProject();
    const e = makeEvent();
    await server.postBatch([e], { project, headers: { 'x-sent-at': new Date().toISOString() } });
    const [row] = await storedEvents(server, project.id);
    expect(row?.clientTimestamp).toBe(Date.parse(e.timestamp as string));
    expect(row?.timestamp).toBe(Date.parse(e.timestamp as string));
  });

  it('stores a truncated IP address by default and the full one for an opted-in project', async () => {
    const truncated = await server.createProject();
    const full = await server.createProject({ fullIp: true });
    await server.postBatch([makeEvent()], { project: truncated, headers: { 'x-forwarded-for': '203.0.113.9' } });
    await server.postBatch([makeEvent()], { project: full });
    expect((await storedEvents(server, truncated.id))[0]?.ipAddress).toBe('127.0.0.0');
    expect((await storedEvents(server, full.id))[0]?.ipAddress).toBe('127.0.0.1');
  });

  it('ignores an ip_address sent by the client', async () => {
    const project = await server.createProject({ fullIp: true });
    await server.postBatch([makeEvent({ ip_address: '8.8.8.8' })], { project });
    expect((await storedEvents(server, project.id))[0]?.ipAddress).toBe('127.0.0.1');
  });

  it('takes the user agent of the request when the event has none', async () => {
    const project = await server.createProject();
    await server.postBatch([makeEvent({ user_agent: undefined })], { project, headers: { 'user-agent': 'agent/1.0' } });
    expect((await storedEvents(server, project.id))[0]?.userAgent).toBe('agent/1.0');
  });

  it('accepts a gzip body', async () => {
    const project = await server.createProject();
    const events = Array.from({ length: 50 }, () => makeEvent());
    const ok = await fetch(`${server.url}/api/v1/events/batch`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        authorization: `ApiKey ${project.writeKey}`,
        'x-project-id': project.id,
      },
      body: gzipSync(JSON.stringify(events)),
    });
    expect(await ok.json()).toEqual({ success: true, processed: 50 });
  });

  describe('the beacon form', () => {
    it('takes text/plain with the key and project in the query', async () => {
      const project = await server.createProject();
      const hourAgo = Date.now() - 3_600_000;
      const e = makeEvent({ timestamp: new Date(hourAgo).toISOString() });
      const query = new URLSearchParams({ api_key: project.writeKey, project_id: project.id, sent_at: new Date(hourAgo).toISOString() });
      const res = await fetch(`${server.url}/api/v1/events/batch?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
        body: JSON.stringify([e]),
      });
      expect(await res.json()).toEqual({ success: true, processed: 1 });
      const [row] = await storedEvents(server, project.id);
      expect(row?.clientTimestamp).toBe(hourAgo);
    });

    it('takes a gzip body when the query says encoding=gzip (any case), with the same dedupe', async () => {
      const project = await server.createProject();
      const events = Array.from({ length: 500 }, () => makeEvent({ properties: { path: '/pricing', plan: 'pro', count: 3 } }));
      const body = gzipSync(JSON.stringify(events));
      for (const encoding of ['gzip', 'GZIP']) {
        const query = new URLSearchParams({ api_key: project.writeKey, project_id: project.id, encoding });
        const res = await fetch(`${server.url}/api/v1/events/batch?${query}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
        expect(await res.json()).toEqual({ success: true, processed: 500 });
      }
      expect(await storedEvents(server, project.id)).toHaveLength(500);
    });

    it('limits a gzip beacon by its decompressed size, and refuses an unknown or doubled encoding with 415', async () => {
      const project = await server.createProject();
      const credentials = { api_key: project.writeKey, project_id: project.id };
      const bomb = gzipSync(Buffer.alloc(LIMITS.maxBatchBodyBytes + 1, 0x20));
      const big = await fetch(`${server.url}/api/v1/events/batch?${new URLSearchParams({ ...credentials, encoding: 'gzip' })}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: bomb,
      });
      expect(big.status).toBe(413);
      expect(await big.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      for (const query of [`${new URLSearchParams({ ...credentials, encoding: 'zstd' })}`, `${new URLSearchParams(credentials)}&encoding=gzip&encoding=br`]) {
        const res = await fetch(`${server.url}/api/v1/events/batch?${query}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '[]' });
        expect(res.status).toBe(415);
        expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
      }
      expect(await storedEvents(server, project.id)).toEqual([]);
    });

    it('refuses query credentials on a JSON request', async () => {
      const project = await server.createProject();
      const query = new URLSearchParams({ api_key: project.writeKey, project_id: project.id });
      const res = await fetch(`${server.url}/api/v1/events/batch?${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify([makeEvent()]),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('AUTH_ERROR');
    });
  });

  describe('authentication', () => {
    const cases: Array<[string, (s: TestServer) => Promise<Record<string, string>>]> = [
      ['no credentials', async () => ({ authorization: '', 'x-project-id': '' })],
      ['a wrong key', async (s) => ({ authorization: 'ApiKey sa_w_wrong', 'x-project-id': s.project.id })],
      ['another scheme', async (s) => ({ authorization: `Bearer ${s.project.writeKey}` })],
      ['no project id', async () => ({ 'x-project-id': '' })],
      ['an unknown project', async () => ({ 'x-project-id': 'proj_unknown' })],
      ['the key of another project', async (s) => ({ authorization: `ApiKey ${(await s.createProject()).writeKey}` })],
      ['a read key', async (s) => ({ authorization: `ApiKey ${s.project.readKey}` })],
    ];
    it.each(cases)('answers 401 AUTH_ERROR for %s and stores nothing', async (_name, headers) => {
      const e = makeEvent();
      const res = await server.postBatch([e], { headers: await headers(server) });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { code: string; error: string };
      expect(body.code).toBe('AUTH_ERROR');
      expect(body.error.length).toBeGreaterThan(0);
      const rows = await storedEvents(server);
      expect(rows.some((r) => r.eventId === e.event_id)).toBe(false);
    });
  });

  describe('bad input', () => {
    it.each([
      ['malformed JSON', '[{"event_type": "x",', 400, 'INVALID_JSON'],
      ['an empty body', '', 400, 'INVALID_JSON'],
      ['an object instead of an array', '{"event_type":"x"}', 400, 'INVALID_BATCH'],
      ['a string', '"hello"', 400, 'INVALID_BATCH'],
      ['null', 'null', 400, 'INVALID_BATCH'],
    ])('answers %s with %i %s', async (_name, body, status, code) => {
      const res = await server.postBatch(body);
      expect(res.status).toBe(status);
      expect(await res.json()).toMatchObject({ code });
    });

    it.each(['text/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x'])(
      'answers 415 UNSUPPORTED_MEDIA_TYPE for %s',
      async (type) => {
        const res = await server.postBatch([makeEvent()], { headers: { 'content-type': type } });
        expect(res.status).toBe(415);
        expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
      },
    );

    it('answers 415 for an unknown Content-Encoding', async () => {
      const res = await server.postBatch('[]', { headers: { 'content-encoding': 'x-custom' } });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    });

    it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
      const big = JSON.stringify([makeEvent({ properties: { s: 'x'.repeat(LIMITS.maxBatchBodyBytes) } })]);
      const res = await server.postBatch(big);
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    });

    it('answers 413 for more events than a batch may hold', async () => {
      const res = await server.postBatch(Array.from({ length: LIMITS.maxEventsPerBatch + 1 }, () => ({ event_type: 'x' })));
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    });

    it('stops a gzip bomb at the limit', async () => {
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)); // 64 MiB of spaces in ≈ 64 KiB
      expect(bomb.length).toBeLessThan(200_000);
      const real = await fetch(`${server.url}/api/v1/events/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          authorization: `ApiKey ${server.project.writeKey}`,
          'x-project-id': server.project.id,
        },
        body: bomb,
      });
      expect(real.status).toBe(413);
      expect(await real.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    });

    it('answers 400 INVALID_JSON for a corrupt gzip body', async () => {
      const res = await fetch(`${server.url}/api/v1/events/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          authorization: `ApiKey ${server.project.writeKey}`,
          'x-project-id': server.project.id,
        },
        body: gzipSync('[]').subarray(0, 8),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'INVALID_JSON' });
    });

    it.each([
      ['a __proto__ property', { properties: JSON.parse('{"__proto__": {"polluted": true}}') }],
      ['a huge string', { properties: { s: 'x'.repeat(LIMITS.maxPropertyValueLength + 1) } }],
      ['a huge event type', { event_type: 'x'.repeat(LIMITS.maxEventTypeLength + 1) }],
      ['a numeric user id', { user_id: 42 }],
      ['a bad timestamp', { timestamp: '2026-13-45' }],
      ['an array as properties', { properties: ['a'] }],
    ])('refuses an event with %s, stores nothing of it, and keeps serving', async (_name, override) => {
      const project = await server.createProject();
      const res = await server.postBatch(JSON.stringify([{ ...makeEvent(), ...override }]), { project });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(await storedEvents(server, project.id)).toEqual([]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const good = await server.postBatch([makeEvent()], { project });
      expect(good.status).toBe(200);
    });

    it('refuses an event with deeply nested properties without crashing', async () => {
      const project = await server.createProject();
      const body = `[{"event_type":"x","properties":{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}}]`;
      const res = await server.postBatch(body, { project });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(await storedEvents(server, project.id)).toEqual([]);
      expect((await server.postBatch([makeEvent()], { project })).status).toBe(200);
    });

    it('refuses a deeply nested body without crashing', async () => {
      const res = await server.postBatch('['.repeat(100_000) + ']'.repeat(100_000));
      expect(res.status).toBe(400);
      const good = await server.postBatch([makeEvent()]);
      expect(good.status).toBe(200);
    });
  });
});
