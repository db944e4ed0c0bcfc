import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, makeEvent, startTestServer } from '../test-support/server/test-server.js';
import { normalizeBasePath } from './app.js';

describe('normalizeBasePath(basePath)', () => {
  it('accepts a plain path, drops a trailing slash, and treats empty or "/" as none', () => {
    expect(normalizeBasePath(undefined)).toBe('');
    expect(normalizeBasePath('')).toBe('');
    expect(normalizeBasePath('/')).toBe('');
    expect(normalizeBasePath('/stats')).toBe('/stats');
    expect(normalizeBasePath('/a/b-c_d.e~f/')).toBe('/a/b-c_d.e~f');
  });

  it.each(['stats', '/st ats', '/stats/../admin', '/./x', '//x', '/x?y', '/%2e'])('refuses %s', (path) => {
    expect(() => normalizeBasePath(path)).toThrow(/must look like \/stats/);
  });
});

describe('createApp({ basePath: "/stats" }) on a real server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite', { basePath: '/stats' });
  });
  afterAll(() => server.close());

  const headers = (key: string) => ({ authorization: `ApiKey ${key}`, 'x-project-id': server.project.id });

  it('answers the whole API under the prefix: batch, beacon form, recording upload, read API, export, erasure', async () => {
    const api = `${server.url}/stats/api/v1`;
    const event = makeEvent({ user_id: 'u-prefixed', session_id: 'prefixed' });
    const batch = await fetch(`${api}/events/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers(server.project.writeKey) },
      body: JSON.stringify([event]),
    });
    expect([batch.status, await batch.json()]).toEqual([200, { success: true, processed: 1 }]);
    const beacon = await fetch(`${api}/events/batch?api_key=${server.project.writeKey}&project_id=${server.project.id}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify([makeEvent({ user_id: 'u-prefixed' })]),
    });
    expect(beacon.status).toBe(200);
    const chunk = await fetch(`${api}/sessions/prefixed/recordings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers(server.project.writeKey) },
      body: JSON.stringify({ events: [{ type: 4, data: {}, timestamp: Date.now() }], duration: 0, start_url: null, user_id: 'u-prefixed', is_final: true, event_offset: 0 }),
    });
    expect([chunk.status, await chunk.json()]).toEqual([200, { success: true, stored: 1 }]);

    const read = headers(server.project.readKey);
    const events = (await (await fetch(`${api}/events`, { headers: read })).json()) as { events: unknown[] };
    expect(events.events).toHaveLength(2);
    expect(((await (await fetch(`${api}/sessions`, { headers: read })).json()) as { sessions: unknown[] }).sessions).toHaveLength(1);
    expect((await fetch(`${api}/sessions/prefixed/recording`, { headers: read })).status).toBe(200);
    // Export and erasure take the admin key.
    const admin = headers(server.project.adminKey);
    expect((await (await fetch(`${api}/export`, { headers: admin })).text()).trim().split('\n')).toHaveLength(2);
    const erased = await fetch(`${api}/users/u-prefixed`, { method: 'DELETE', headers: admin });
    expect(await erased.json()).toEqual({ success: true, events: 2, recordings: 1 });
    // Paths match case-insensitively, with a trailing slash, as without a prefix.
    expect((await fetch(`${server.url}/STATS/api/v1/events/`, { headers: read })).status).toBe(200);
  });

  it('no longer answers the API at the root, nor under another prefix: 404 NOT_FOUND', async () => {
    for (const path of ['/api/v1/events', '/other/api/v1/events', '/statsx/api/v1/events']) {
      const res = await fetch(`${server.url}${path}`, { headers: headers(server.project.readKey) });
      expect([path, res.status, ((await res.json()) as { code: string }).code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('answers POST /api/v1/events/batch at the root with a JSON 404 and stores nothing; under the prefix it stores', async () => {
    const project = await server.createProject();
    const post = (path: string, event: Record<string, unknown>, query = '') =>
      fetch(`${server.url}${path}${query}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.writeKey}`, 'x-project-id': project.id },
        body: JSON.stringify([event]),
      });
    // The ingest shortcut (app.ts) matches the exact path before the routers: it must match the prefixed one only.
    for (const [path, query] of [['/api/v1/events/batch', ''], ['/api/v1/events/batch', `?api_key=${project.writeKey}&project_id=${project.id}`], ['/api/v1/events/batch/', '']]) {
      const res = await post(path, makeEvent({ event_type: 'at_the_root' }), query);
      const body = (await res.json()) as { error?: unknown; code?: unknown };
      expect([path + query, res.status, body.code, typeof body.error]).toEqual([path + query, 404, 'NOT_FOUND', 'string']);
    }
    const prefixed = await post('/stats/api/v1/events/batch', makeEvent({ event_type: 'under_the_prefix' }));
    expect([prefixed.status, await prefixed.json()]).toEqual([200, { success: true, processed: 1 }]);
    // Acknowledged means committed: what the store holds now is all there will be.
    const stored = await server.store.queryEvents({ projectId: project.id, limit: 10 });
    expect(stored.events.map((e) => e.eventType)).toEqual(['under_the_prefix']);
  });

  it('keeps /healthz, /readyz and /metrics at the root only', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      expect((await fetch(`${server.url}${path}`)).status).toBe(200);
      expect((await fetch(`${server.url}/stats${path}`)).status).toBe(404);
    }
  });

  it('answers a CORS preflight under the prefix', async () => {
    const res = await fetch(`${server.url}/stats/api/v1/events/batch`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    expect([res.status, res.headers.get('access-control-allow-origin')]).toEqual([204, 'https://app.example']);
  });
});

describe('createApp({ basePath, staticFiles }) on a real server', () => {
  it('answers a wrong API address under the base path with a JSON 404, not the app', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const root = mkdtempSync(join(tmpdir(), 'sa-base-path-app-'));
    writeFileSync(join(root, 'index.html'), '<!doctype html><title>app</title>');
    const server = await startTestServer('sqlite', { basePath: '/stats', staticFiles: { root } });
    try {
      const api = await fetch(`${server.url}/stats/api/v1/nothing`);
      expect([api.status, ((await api.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
      expect(await (await fetch(`${server.url}/some/page`)).text()).toContain('<title>app</title>');
    } finally {
      await server.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
