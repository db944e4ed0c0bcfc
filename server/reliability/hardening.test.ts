/**
 * Holes found by attacking the server from outside, each closed and held here on SQLite and
 * PostgreSQL (SECURITY.md, "Limits"): event and recording times bounded so that no write can break
 * a read, the per-address rate limit on every spelling of an API path, recording chunks parsed off
 * the request thread with bounded memory, case-insensitive encodings, impossible dates and
 * non-finite numbers refused.
 */
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isPostgresUrl, openStore } from '../store/open-store.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';

const HOUR = 3_600_000;

/** Runs SQL on the database directly, as an older server (or an operator) would have. */
async function execRaw(location: string, sql: string): Promise<void> {
  if (isPostgresUrl(location)) {
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(location);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

interface ListedEvent {
  event_id: string;
  timestamp: string | null;
  client_timestamp: string | null;
}

describe.each(STORE_KINDS)('hardening on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind, { rateLimit: { ip: { ratePerSecond: 0.001, burst: 1000 }, project: false } });
  });
  afterAll(() => server.close());

  const headers = (key = server.project.writeKey, extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    authorization: `ApiKey ${key}`,
    'x-project-id': server.project.id,
    ...extra,
  });
  const listEvents = async (query = '') => {
    const res = await fetch(`${server.url}/api/v1/events?limit=1000${query}`, { headers: headers(server.project.readKey) });
    expect(res.status).toBe(200);
    return ((await res.json()) as { events: ListedEvent[] }).events;
  };
  const uploadChunk = (sessionId: string, body: string, extra: Record<string, string> = {}) =>
    fetch(`${server.url}/api/v1/sessions/${sessionId}/recordings`, { method: 'POST', headers: headers(undefined, extra), body });

  describe('event times are bounded, so one write cannot break reads', () => {
    it('refuses events whose skew-corrected time is past any Date (X-Sent-At at the earliest Date), each with its reason', async () => {
      const bad = makeEvent({ timestamp: '9999-12-31T23:59:59.999Z' });
      // An ordinary event in the same request is shifted by the same absurd skew, and refused with it.
      const ordinary = makeEvent();
      const res = await server.postBatch([ordinary, bad], { headers: { 'x-sent-at': '-271821-04-20T00:00:00.000Z' } });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        code: 'VALIDATION_ERROR',
        errors: [
          { index: 0, error: expect.stringMatching(/^timestamp: outside the accepted time range/) },
          { index: 1, error: expect.stringMatching(/^timestamp: outside the accepted time range/) },
        ],
      });
      const ids = (await listEvents()).map((e) => e.event_id);
      expect(ids).not.toContain(bad.event_id);
      expect(ids).not.toContain(ordinary.event_id);
    });

    it('refuses the mirror image through the beacon form (sent_at past any Date, event at year 1)', async () => {
      const bad = makeEvent({ timestamp: '0001-01-01T00:00:00.000Z' });
      const url = `${server.url}/api/v1/events/batch?api_key=${server.project.writeKey}&project_id=${server.project.id}&sent_at=${encodeURIComponent('+275760-09-13T00:00:00.000Z')}`;
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify([bad]) });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ index: 0, error: expect.stringMatching(/^timestamp: outside/) }] });
      expect((await listEvents()).map((e) => e.event_id)).not.toContain(bad.event_id);
    });

    it('refuses times before 2000 and more than a day ahead with no skew, and keeps the good events of the batch', async () => {
      const early = makeEvent({ timestamp: '1999-12-31T23:59:59.999Z' });
      const ahead = makeEvent({ timestamp: new Date(Date.now() + 2 * 24 * HOUR).toISOString() });
      const good = makeEvent();
      const res = await server.postBatch([early, good, ahead]);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        processed: 1,
        errors: [
          { index: 0, error: expect.stringMatching(/^timestamp: outside/) },
          { index: 2, error: expect.stringMatching(/^timestamp: outside/) },
        ],
      });
      const ids = (await listEvents()).map((e) => e.event_id);
      expect(ids).toContain(good.event_id);
      expect(ids).not.toContain(early.event_id);
    });

    it('still corrects a device clock that fell back to 1970', async () => {
      const deviceNow = Date.UTC(1970, 0, 2);
      const event = makeEvent({ timestamp: new Date(deviceNow - 5_000).toISOString() });
      const res = await server.postBatch([event], { headers: { 'x-sent-at': new Date(deviceNow).toISOString() } });
      expect(await res.json()).toEqual({ success: true, processed: 1 });
      const listed = (await listEvents()).find((e) => e.event_id === event.event_id) as ListedEvent & { received_at: string };
      expect(listed.client_timestamp).toBe(new Date(deviceNow - 5_000).toISOString());
      // Made 5 s before the device sent it, which the server takes to be 5 s before arrival.
      expect(listed.timestamp).toBe(new Date(Date.parse(listed.received_at) - 5_000).toISOString());
    });

    it('refuses a recording chunk whose corrected times are past any Date, storing nothing', async () => {
      const body = JSON.stringify({ events: [{ type: 3, data: {}, timestamp: 8.64e15 }], duration: 0, event_offset: 0 });
      const res = await uploadChunk('skewed-rec', body, { 'x-sent-at': '-271821-04-20T00:00:00.000Z' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/^events\.0\.timestamp: .*outside the accepted time range/) });
      const read = await fetch(`${server.url}/api/v1/sessions/skewed-rec/recording`, { headers: headers(server.project.readKey) });
      expect(read.status).toBe(404);
    });

    it('lists a project whose database holds a time no Date can show, and upgrades such rows to their arrival time', async () => {
      const own = await server.createProject();
      const { store, project } = { store: server.store, project: own };
      const receivedAt = Date.now();
      // As an older server stored it: a corrected time beyond the largest Date.
      await store.write({
        events: [
          {
            projectId: project.id,
            eventId: 'out-of-range',
            eventType: 'x',
            userId: null,
            sessionId: null,
            timestamp: 8.7e15,
            clientTimestamp: 253_402_300_799_999,
            receivedAt,
            properties: {},
            userAgent: null,
            ipAddress: null,
            isBot: false,
            visitorId: null,
          },
        ],
        chunks: [],
      });
      const list = async () => {
        const res = await fetch(`${server.url}/api/v1/events`, { headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.id } });
        expect(res.status).toBe(200);
        return ((await res.json()) as { events: ListedEvent[] }).events;
      };
      expect(await list()).toMatchObject([{ event_id: 'out-of-range', timestamp: null, client_timestamp: '9999-12-31T23:59:59.999Z' }]);

      // The schema upgrade moves the row to its arrival time and keeps the client's in client_timestamp.
      await execRaw(server.location, isPostgresUrl(server.location) ? 'UPDATE schema_version SET version = 2' : 'PRAGMA user_version = 2');
      const upgraded = await openStore(server.location);
      await upgraded.init();
      try {
        const page = await upgraded.queryEvents({ projectId: project.id, limit: 10 });
        expect(page.events).toMatchObject([{ eventId: 'out-of-range', timestamp: receivedAt, clientTimestamp: 253_402_300_799_999 }]);
        // Retention can remove it again, which it could not while its time lay beyond 9999.
        await upgraded.deleteOlderThan(receivedAt + 1);
        expect((await upgraded.queryEvents({ projectId: project.id, limit: 10 })).events).toEqual([]);
      } finally {
        await upgraded.close();
      }
    });
  });

  describe('the per-address rate limit holds for every spelling of an API path', () => {
    it.each([
      ['POST', '/API/v1/events/batch'],
      ['POST', '/Api/V1/Events/Batch'],
      ['GET', '/Api/V1/Events'],
      ['GET', '/api/v1/EVENTS/'],
    ])('%s %s is counted and limited like its canonical path', async (method, path) => {
      const limited = await startTestServer(kind, { rateLimit: { ip: { ratePerSecond: 0.001, burst: 3 }, project: false } });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          const res = await fetch(`${limited.url}${path}`, {
            method,
            headers: { 'content-type': 'application/json', authorization: 'ApiKey sa_w_guess', 'x-project-id': limited.project.id },
            ...(method === 'POST' ? { body: '[]' } : {}),
          });
          statuses.push(res.status);
        }
        expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
      } finally {
        await limited.close();
      }
    });
  });

  describe('large recording chunks do not stall the server', () => {
    // Valid chunks of about 4 MiB whose data is `[{},{},…]`: the most values per byte JSON allows.
    const heavy = (offset: number) =>
      `{"events":[{"type":3,"data":[${'{},'.repeat(1_400_000)}{}],"timestamp":${Date.now()}}],"duration":1,"event_offset":${offset}}`;

    /** Sends a body and resolves once all of it was handed to the socket, with the answer's promise. */
    const send = (path: string, body: string): Promise<{ answered: Promise<number> }> =>
      new Promise((resolveSent, rejectSent) => {
        const req = request(`${server.url}${path}`, { method: 'POST', headers: headers() });
        const answered = new Promise<number>((resolve, reject) => {
          req.on('response', (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
        });
        req.on('error', rejectSent);
        req.end(body, () => resolveSent({ answered }));
      });

    it('answers /healthz and an event batch while chunks are parsed, and stores the chunks', async () => {
      // The server runs in this process: watch what the request thread itself parses and serializes.
      const parse = vi.spyOn(JSON, 'parse');
      const stringify = vi.spyOn(JSON, 'stringify');
      const order: string[] = [];
      const chunks = await Promise.all([0, 1].map((offset) => send('/api/v1/sessions/heavy-rec/recordings', heavy(offset))));
      const chunkAnswers = chunks.map(({ answered }, i) =>
        answered.then((status) => {
          order.push(`chunk ${i}`);
          return status;
        }),
      );
      // Both bodies are with the server. Twenty health checks one after another and a batch.
      for (let i = 0; i < 20; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      order.push('healthz x20');
      expect((await server.postBatch([makeEvent()])).status).toBe(200);
      order.push('batch');
      expect(await Promise.all(chunkAnswers)).toEqual([200, 200]);
      expect(order.slice(0, 2)).toEqual(['healthz x20', 'batch']);
      // No chunk was parsed or serialized on the request thread: that work is the parser thread's.
      const MiB = 1024 * 1024;
      expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.length > MiB)).toEqual([]);
      expect(stringify.mock.results.filter((r) => typeof r.value === 'string' && r.value.length > MiB)).toEqual([]);
      parse.mockRestore();
      stringify.mockRestore();
      const rows = await openStoredRows(server.location);
      try {
        expect((await rows.count(server.project.id)).chunks).toBe(2);
      } finally {
        await rows.close();
      }
    });

    it('answers 503 STORAGE_UNAVAILABLE with Retry-After when chunks in progress hold their memory budget, then takes the chunk', async () => {
      const tight = await startTestServer(kind, { maxRecordingBytesInFlight: 1024 });
      try {
        const post = (body: string) =>
          new Promise<{ answered: Promise<number> }>((resolveSent) => {
            const req = request(`${tight.url}/api/v1/sessions/budget/recordings`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `ApiKey ${tight.project.writeKey}`, 'x-project-id': tight.project.id },
            });
            const answered = new Promise<number>((resolve) => req.on('response', (res) => (res.resume(), res.on('end', () => resolve(res.statusCode ?? 0)))));
            req.end(body, () => resolveSent({ answered }));
          });
        const first = await post(heavy(0));
        // Wait until the server holds the first chunk's memory: /metrics shows it.
        for (let i = 0; i < 200; i++) {
          const metrics = await (await fetch(`${tight.url}/metrics`)).text();
          if (!/sa_recording_bytes_in_flight 0\n/.test(metrics)) break;
          await new Promise((r) => setTimeout(r, 25));
        }
        const small = JSON.stringify({ events: [{ type: 3, data: {}, timestamp: Date.now() }], duration: 0, event_offset: 9 });
        const busy = await fetch(`${tight.url}/api/v1/sessions/budget/recordings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `ApiKey ${tight.project.writeKey}`, 'x-project-id': tight.project.id },
          body: small,
        });
        expect(busy.status).toBe(503);
        expect(busy.headers.get('retry-after')).toBe('1');
        expect(await busy.json()).toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
        expect(await first.answered).toBe(200);
        const again = await fetch(`${tight.url}/api/v1/sessions/budget/recordings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `ApiKey ${tight.project.writeKey}`, 'x-project-id': tight.project.id },
          body: small,
        });
        expect(await again.json()).toEqual({ success: true, stored: 1 });
      } finally {
        await tight.close();
      }
    });
  });

  describe('methods, proxies and the beacon form of recordings', () => {
    it.each([
      ['PROPFIND', '/api/v1/events/batch', 405],
      ['PROPFIND', '/nowhere', 405],
      ['MKCOL', '/api/v1/events', 405],
      ['PATCH', '/api/v1/events/batch', 405],
      ['PATCH', '/nowhere', 404],
    ])('answers %s %s with %i and its code, never a 500', async (method, path, status) => {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${server.url}${path}`, { method }, (r) => {
          let body = '';
          r.on('data', (d: Buffer) => (body += d.toString()));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(res.status).toBe(status);
      expect(JSON.parse(res.body)).toMatchObject({ code: status === 405 ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND' });
    });

    it('behind a proxy, takes the address the proxy appended, not one the client put first', async () => {
      const proxied = await startTestServer(kind, { trustProxy: true });
      try {
        const project = await proxied.createProject({ fullIp: true });
        const event = makeEvent();
        const res = await proxied.postBatch([event], { project, headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' } });
        expect(res.status).toBe(200);
        const listed = await fetch(`${proxied.url}/api/v1/events`, { headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.id } });
        const { events } = (await listed.json()) as { events: Array<{ event_id: string; ip_address: string }> };
        expect(events.find((e) => e.event_id === event.event_id)?.ip_address).toBe('203.0.113.9');
      } finally {
        await proxied.close();
      }
    });

    it('corrects recording times on the beacon form from its sent_at parameter', async () => {
      const deviceNow = Date.UTC(1970, 0, 2);
      const body = JSON.stringify({ events: [{ type: 3, data: {}, timestamp: deviceNow - 1_000 }], duration: 0, event_offset: 0 });
      const url = `${server.url}/api/v1/sessions/beacon-rec/recordings?api_key=${server.project.writeKey}&project_id=${server.project.id}&sent_at=${new Date(deviceNow).toISOString()}`;
      const before = Date.now();
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
      const after = Date.now();
      expect(await res.json()).toEqual({ success: true, stored: 1 });
      const read = await fetch(`${server.url}/api/v1/sessions/beacon-rec/recording`, { headers: headers(server.project.readKey) });
      const [event] = ((await read.json()) as { events: Array<{ timestamp: number }> }).events;
      // Made a second before the device sent it: a second before the server received it, which
      // was between the two readings of this clock around the request (not the device's 1970).
      const corrected = event?.timestamp ?? Number.NaN;
      expect(corrected >= before - 1_000 && corrected <= after - 1_000).toBe(true);
    });

    it('refuses a recording chunk of more than 50,000 events with 413, like a batch over its count', async () => {
      const events = Array.from({ length: 50_001 }, () => ({ type: 3, data: 0, timestamp: Date.now() }));
      const res = await uploadChunk('too-many', JSON.stringify({ events, duration: 0, event_offset: 0 }));
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', error: expect.stringContaining('at most 50000 events') });
    });
  });

  describe('interop and data quality', () => {
    it.each(['GZIP', 'Gzip', 'x-gzip', ' gzip '])('reads a body with Content-Encoding %j as gzip', async (encoding) => {
      const event = makeEvent();
      const res = await fetch(`${server.url}/api/v1/events/batch`, {
        method: 'POST',
        headers: headers(undefined, { 'content-encoding': encoding }),
        body: gzipSync(JSON.stringify([event])),
      });
      expect(await res.json()).toEqual({ success: true, processed: 1 });
    });

    it.each(['compress', 'gzip, br', 'zstd'])('refuses Content-Encoding %j with 415, naming every accepted one', async (encoding) => {
      const res = await fetch(`${server.url}/api/v1/events/batch`, { method: 'POST', headers: headers(undefined, { 'content-encoding': encoding }), body: '[]' });
      expect(res.status).toBe(415);
      expect(await res.json()).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', error: 'Content-Encoding must be gzip (or x-gzip), deflate, br or identity.' });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    });

    it('refuses impossible calendar dates per event instead of moving them to another day', async () => {
      const impossible = makeEvent({ timestamp: '2026-02-31T10:00:00.000Z' });
      const good = makeEvent();
      const res = await server.postBatch([impossible, good]);
      expect(await res.json()).toMatchObject({ processed: 1, errors: [{ index: 0, error: 'timestamp: expected an ISO 8601 date-time of a real day and time, such as 2026-11-22T10:00:00.000Z' }] });
      expect((await listEvents()).map((e) => e.event_id)).not.toContain(impossible.event_id);
    });

    it('refuses numbers that are not finite in events and in recordings, instead of storing null', async () => {
      const id = `inf-${Date.now()}`;
      const batch = `[{"event_id":"${id}","event_type":"x","properties":{"n":1e999}}]`;
      const res = await fetch(`${server.url}/api/v1/events/batch`, { method: 'POST', headers: headers(), body: batch });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ index: 0, error: expect.stringMatching(/^properties\.n/) }] });

      for (const chunk of [
        `{"events":[{"type":3,"data":{"x":[1,-1e999]},"timestamp":${Date.now()}}],"duration":0,"event_offset":0}`,
        `{"events":[{"type":3,"data":{},"timestamp":${Date.now()},"delay":1e999}],"duration":0,"event_offset":0}`,
        `{"events":[],"duration":1e999,"event_offset":0}`,
      ]) {
        const up = await uploadChunk('infinite-rec', chunk);
        expect(up.status).toBe(400);
        expect(await up.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
      }
      expect((await fetch(`${server.url}/api/v1/sessions/infinite-rec/recording`, { headers: headers(server.project.readKey) })).status).toBe(404);
    });
  });
});
