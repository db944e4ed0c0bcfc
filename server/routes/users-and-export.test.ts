import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestProject, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { makeChunk, makeEvent as storedEvent } from '../../test-support/store/event-store.fixtures.js';

/** A GET or DELETE with raw bytes back (no automatic decompression), so the encoding can be checked. */
function raw(url: string, method: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Erasure and export take the admin key (docs/protocol.md, "Authentication and key kinds"). */
const auth = (project: TestProject, key = project.adminKey) => ({ authorization: `ApiKey ${key}`, 'x-project-id': project.id });

describe.each(STORE_KINDS)('DELETE /api/v1/users/:userId and GET /api/v1/export on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  describe('DELETE /api/v1/users/:userId', () => {
    it("deletes the user's events and the recordings uploaded under their id in one go, and answers the counts", async () => {
      const project = await server.createProject();
      await server.postBatch(
        [
          makeEvent({ user_id: 'alice', session_id: 'sa' }),
          makeEvent({ user_id: 'alice', session_id: 'sa' }),
          makeEvent({ user_id: 'bob', session_id: 'sb' }),
        ],
        { project },
      );
      await server.store.write({
        events: [],
        chunks: [
          makeChunk(project.id, 'sa', 0, 3, { userId: 'alice' }),
          makeChunk(project.id, 'sa', 3, 2, { userId: 'alice' }),
          makeChunk(project.id, 'sb', 0, 1, { userId: 'bob' }),
        ],
      });
      const res = await raw(`${server.url}/api/v1/users/alice`, 'DELETE', auth(project));
      expect([res.status, JSON.parse(res.body.toString())]).toEqual([200, { success: true, events: 2, recordings: 2 }]);
      const left = await server.store.queryEvents({ projectId: project.id, limit: 10 });
      expect(left.events.map((e) => e.userId)).toEqual(['bob']);
      expect(await server.store.getRecording(project.id, 'sa')).toBeNull();
      expect(await server.store.getRecording(project.id, 'sb')).not.toBeNull();
      const again = await raw(`${server.url}/api/v1/users/alice`, 'DELETE', auth(project));
      expect(JSON.parse(again.body.toString())).toEqual({ success: true, events: 0, recordings: 0 });
    });

    it('decodes the user id from the path, and cleans it as stored text is cleaned', async () => {
      const project = await server.createProject();
      await server.postBatch([makeEvent({ user_id: 'a b/é\u0000' })], { project });
      const res = await raw(`${server.url}/api/v1/users/${encodeURIComponent('a b/é\u0000')}`, 'DELETE', auth(project));
      expect(JSON.parse(res.body.toString())).toMatchObject({ events: 1 });
    });

    it("needs the admin key of the project: 401 AUTH_ERROR for a write or read key, no key or another project's", async () => {
      const project = await server.createProject();
      const other = await server.createProject();
      await server.postBatch([makeEvent({ user_id: 'carol' })], { project });
      for (const headers of [auth(project, project.writeKey), auth(project, project.readKey), {}, { ...auth(other), 'x-project-id': project.id }]) {
        const res = await raw(`${server.url}/api/v1/users/carol`, 'DELETE', headers);
        expect([res.status, JSON.parse(res.body.toString()).code]).toEqual([401, 'AUTH_ERROR']);
      }
      // Another project's admin key deletes nothing here.
      expect(JSON.parse((await raw(`${server.url}/api/v1/users/carol`, 'DELETE', auth(other))).body.toString())).toMatchObject({ events: 0 });
      expect((await server.store.queryEvents({ projectId: project.id, limit: 10 })).events).toHaveLength(1);
    });

    it('answers 400 VALIDATION_ERROR for a user id over 200 characters, and 405 for another method', async () => {
      const project = await server.createProject();
      const long = await raw(`${server.url}/api/v1/users/${'x'.repeat(201)}`, 'DELETE', auth(project));
      expect([long.status, JSON.parse(long.body.toString()).code]).toEqual([400, 'VALIDATION_ERROR']);
      const get = await raw(`${server.url}/api/v1/users/x`, 'GET', auth(project));
      expect([get.status, JSON.parse(get.body.toString()).code]).toEqual([405, 'METHOD_NOT_ALLOWED']);
    });

    it('allows DELETE in a CORS preflight', async () => {
      const res = await raw(`${server.url}/api/v1/users/x`, 'OPTIONS', { origin: 'https://admin.example', 'access-control-request-method': 'DELETE' });
      expect(res.headers['access-control-allow-methods']).toContain('DELETE');
    });
  });

  describe('GET /api/v1/export', () => {
    const t0 = Date.parse('2026-02-01T00:00:00.000Z');
    let project: TestProject;
    /** More than two export pages (1000 each), with timestamps shared by pairs. */
    const COUNT = 2345;
    beforeAll(async () => {
      project = await server.createProject();
      const events = Array.from({ length: COUNT }, (_, n) => storedEvent(project.id, n, { timestamp: t0 + Math.floor(n / 2) * 1000 }));
      await server.store.write({ events, chunks: [] });
    });

    const lines = (body: Buffer) => {
      const text = body.toString('utf8');
      expect(text.endsWith('\n')).toBe(true);
      return text.slice(0, -1).split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    };

    it('streams every event as one NDJSON line, oldest first, with the read API fields', async () => {
      const res = await raw(`${server.url}/api/v1/export`, 'GET', auth(project));
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      expect(res.headers['content-encoding']).toBeUndefined();
      const rows = lines(res.body);
      expect(rows).toHaveLength(COUNT);
      rows.forEach((row, n) => {
        expect(row).toEqual({
          event_id: `evt-${String(n).padStart(6, '0')}`,
          event_type: 'page_view',
          user_id: 'user-1',
          session_id: 'session-1',
          timestamp: new Date(t0 + Math.floor(n / 2) * 1000).toISOString(),
          client_timestamp: null,
          received_at: new Date(1_760_000_000_000 + n + 5).toISOString(),
          properties: { path: `/p/${n}`, n, ok: true, none: null },
          user_agent: 'Mozilla/5.0 (test)',
          ip_address: '203.0.113.0',
          is_bot: false,
          visitor_id: 'visitor-1',
        });
      });
    });

    it('gzips when Accept-Encoding asks for it', async () => {
      const res = await raw(`${server.url}/api/v1/export`, 'GET', { ...auth(project), 'accept-encoding': 'gzip' });
      expect([res.status, res.headers['content-encoding'], res.headers.vary]).toEqual([200, 'gzip', 'Accept-Encoding']);
      expect(lines(gunzipSync(res.body))).toHaveLength(COUNT);
      const identity = await raw(`${server.url}/api/v1/export`, 'GET', { ...auth(project), 'accept-encoding': 'br;q=1, gzip;q=0' });
      expect(identity.headers['content-encoding']).toBeUndefined();
    });

    // What browsers and curl send, and a preference for an encoding the server does not make.
    it.each([
      ['gzip, deflate, br', 'gzip'],
      ['br;q=1, gzip;q=0.5', 'gzip'],
      ['identity', undefined],
    ])('answers Accept-Encoding: %s with Content-Encoding %s and the same NDJSON', async (acceptEncoding, encoding) => {
      const plain = await raw(`${server.url}/api/v1/export`, 'GET', auth(project));
      expect(plain.headers['content-encoding']).toBeUndefined();
      const res = await raw(`${server.url}/api/v1/export`, 'GET', { ...auth(project), 'accept-encoding': acceptEncoding });
      expect([res.status, res.headers['content-type'], res.headers['content-encoding'], res.headers.vary]).toEqual([
        200,
        'application/x-ndjson; charset=utf-8',
        encoding,
        'Accept-Encoding',
      ]);
      const body = encoding === 'gzip' ? gunzipSync(res.body) : res.body;
      expect(lines(body)).toHaveLength(COUNT);
      expect(body.equals(plain.body)).toBe(true);
    });

    it('keeps to from (inclusive) and to (exclusive), as ISO time or ms', async () => {
      const from = new Date(t0 + 10_000).toISOString();
      const res = await raw(`${server.url}/api/v1/export?from=${encodeURIComponent(from)}&to=${t0 + 20_000}`, 'GET', auth(project));
      const rows = lines(res.body);
      expect(rows.map((r) => r.event_id)).toEqual(Array.from({ length: 20 }, (_, i) => `evt-${String(20 + i).padStart(6, '0')}`));
      const empty = await raw(`${server.url}/api/v1/export?from=${t0 + 1e9}`, 'GET', auth(project));
      expect([empty.status, empty.body.length]).toEqual([200, 0]);
    });

    it.each(['?from=yesterday', '?to=1e3', '?from=2&from=3', `?from=${Date.parse('2026-02-02')}&to=${Date.parse('2026-02-01')}`])(
      'answers 400 VALIDATION_ERROR for %s',
      async (query) => {
        const res = await raw(`${server.url}/api/v1/export${query}`, 'GET', auth(project));
        expect([res.status, JSON.parse(res.body.toString()).code]).toEqual([400, 'VALIDATION_ERROR']);
      },
    );

    it("needs the read key: 401 AUTH_ERROR for the write key; exports only the caller's project", async () => {
      const res = await raw(`${server.url}/api/v1/export`, 'GET', auth(project, project.writeKey));
      expect([res.status, JSON.parse(res.body.toString()).code]).toEqual([401, 'AUTH_ERROR']);
      const other = await server.createProject();
      const theirs = await raw(`${server.url}/api/v1/export`, 'GET', auth(other));
      expect([theirs.status, theirs.body.length]).toEqual([200, 0]);
    });
  });
});

describe('GET /api/v1/export with a reader that does not read', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
  });
  afterAll(() => server.close());

  it('reads the next page only when the connection has taken the last: a stalled reader stalls the export', async () => {
    const project = await server.createProject();
    // Large events, so that a few pages are more than the socket's and the stream's buffers hold.
    const padding = 'x'.repeat(4000);
    const events = Array.from({ length: 6000 }, (_, n) => storedEvent(project.id, n, { properties: { padding, n } }));
    for (let i = 0; i < events.length; i += 2000) await server.store.write({ events: events.slice(i, i + 2000), chunks: [] });
    let pages = 0;
    const exportEvents = server.store.exportEvents.bind(server.store);
    server.store.exportEvents = (query) => {
      pages++;
      return exportEvents(query);
    };
    const { get } = await import('node:http');
    const received = await new Promise<number>((resolve, reject) => {
      const req = get(`${server.url}/api/v1/export`, { headers: auth(project) }, (res) => {
        // Paused: nothing is read from the socket while the server keeps writing.
        res.pause();
        setTimeout(() => {
          const stalledAt = pages;
          res.resume();
          let bytes = 0;
          res.on('data', (part: Buffer) => (bytes += part.length));
          res.on('end', () => (stalledAt <= 2 ? resolve(bytes) : reject(new Error(`read ${stalledAt} pages while stalled`))));
        }, 500);
      });
      req.on('error', reject);
    });
    // 6 pages of 1000 events of about 4.3 KB, about 26 MB: while the reader stalled, the server read at
    // most two pages (one in the socket's buffers, one waiting in the stream), not all six.
    expect(received).toBeGreaterThan(6000 * 4000);
    expect(pages).toBe(7);
  });
});
