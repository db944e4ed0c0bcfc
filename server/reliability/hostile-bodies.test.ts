/**
 * Hostile bodies and paths, case by case (the generated ones are in `bad-input.test.ts`):
 * prototype keys, size limits through gzip and deflate at the default limits, gzip that breaks
 * off past the limit, a refused body on a keep-alive connection, and session ids that are not
 * plain identifiers. On SQLite and PostgreSQL.
 */
import { Agent, request } from 'node:http';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../protocol/index.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';

/** Own entries, nested ones too, sorted by key: equal for the same JSON whatever the key order. */
const entries = (value: object): string =>
  JSON.stringify(
    Object.keys(value)
      .sort()
      .map((k) => {
        const v = (value as Record<string, unknown>)[k];
        return [k, typeof v === 'object' && v !== null && !Array.isArray(v) ? entries(v) : v];
      }),
  );

const prototypeNames = () => [Object, Array, Function].map((c) => Object.getOwnPropertyNames(c.prototype).sort().join());

/** A POST over one keep-alive connection of `agent`, with node:http so nothing normalises it. */
function post(agent: Agent, url: string, headers: Record<string, string>, body: string | Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers, agent, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

describe.each(STORE_KINDS)('hostile bodies on %s', (kind) => {
  let server: TestServer;
  const prototypesBefore = prototypeNames();
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  const headers = (extra: Record<string, string> = {}) => ({
    'content-type': 'application/json',
    authorization: `ApiKey ${server.project.writeKey}`,
    'x-project-id': server.project.id,
    ...extra,
  });
  const send = (path: string, body: string | Uint8Array, extra: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: headers(extra), body: body as BodyInit });
  const read = (path: string) => fetch(`${server.url}${path}`, { headers: { authorization: `ApiKey ${server.project.readKey}`, 'x-project-id': server.project.id } });
  const count = async () => {
    const rows = await openStoredRows(server.location);
    return rows.count().finally(() => rows.close());
  };

  describe('__proto__, constructor and prototype cannot pollute anything', () => {
    it('stores "constructor" and "prototype" properties as given, and refuses "__proto__"', async () => {
      const id = `proto-${kind}-1`;
      const body = `[{"event_id":"${id}","event_type":"x","constructor":{"prototype":{"polluted":1}},"__proto__":{"polluted":1},
        "properties":{"constructor":"c","prototype":"p","toString":"t","hasOwnProperty":"h"}},
        {"event_type":"y","properties":{"__proto__":{"polluted":1}}}]`;
      const res = await send('/api/v1/events/batch', body);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ processed: 1, errors: [{ index: 1, error: expect.stringContaining('__proto__') }] });
      const { events } = (await (await read('/api/v1/events?event_type=x')).json()) as { events: Array<{ event_id: string; properties: object }> };
      const stored = events.find((e) => e.event_id === id)?.properties ?? {};
      // PostgreSQL's jsonb orders keys its own way; the content is what must be the same.
      expect(entries(stored)).toEqual(entries({ constructor: 'c', prototype: 'p', toString: 't', hasOwnProperty: 'h' }));
      expect(Object.getPrototypeOf(stored)).toBe(Object.prototype);
    });

    it('stores recorded data with prototype keys as given and gives it back the same', async () => {
      const data = '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"prototype":[1]}';
      const body = `{"events":[{"type":3,"data":${data},"timestamp":1763805600000}],"duration":1,"is_final":true,"event_offset":0}`;
      expect((await send('/api/v1/sessions/proto-1/recordings', body, { 'x-sent-at': new Date(Date.now() + 3_600_000).toISOString() })).status).toBe(200);
      const recording = (await (await read('/api/v1/sessions/proto-1/recording')).json()) as { events: Array<{ data: object }> };
      const stored = recording.events[0]?.data ?? {};
      expect(Object.hasOwn(stored, '__proto__')).toBe(true);
      expect(entries(stored)).toEqual(entries(JSON.parse(data) as object));
    });

    it('survives prototype keys in query strings and headers', async () => {
      for (const query of ['?__proto__[polluted]=1', '?constructor[prototype][polluted]=1', '?__proto__=x&limit=1', '?limit[__proto__]=1']) {
        expect([200, 400]).toContain((await read(`/api/v1/events${query}`)).status);
      }
      const res = await fetch(`${server.url}/api/v1/events`, { headers: { authorization: `ApiKey ${server.project.readKey}`, 'x-project-id': '__proto__' } });
      expect(res.status).toBe(401);
    });

    it('left every prototype untouched', () => {
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(prototypeNames()).toEqual(prototypesBefore);
    });
  });

  describe('size limits hold through compression (default limits)', () => {
    const bigBatch = (bytes: number) => JSON.stringify([{ event_type: 'big', properties: { s: 'x'.repeat(bytes) } }]);
    const bigChunk = (bytes: number) => JSON.stringify({ events: [{ type: 2, data: 'x'.repeat(bytes), timestamp: 1 }], duration: 1, event_offset: 0 });

    it.each([
      ['a gzip batch over 1 MiB inflated', '/api/v1/events/batch', () => gzipSync(bigBatch(LIMITS.maxBatchBodyBytes)), 'gzip', 413, 'PAYLOAD_TOO_LARGE'],
      ['a deflate batch over 1 MiB inflated', '/api/v1/events/batch', () => deflateSync(bigBatch(LIMITS.maxBatchBodyBytes)), 'deflate', 413, 'PAYLOAD_TOO_LARGE'],
      ['a gzip batch of 1001 events', '/api/v1/events/batch', () => gzipSync(JSON.stringify(Array.from({ length: LIMITS.maxEventsPerBatch + 1 }, () => ({ event_type: 'x' })))), 'gzip', 413, 'PAYLOAD_TOO_LARGE'],
      ['a gzip event with a property over 32 KiB', '/api/v1/events/batch', () => gzipSync(JSON.stringify([makeEvent({ properties: { s: 'x'.repeat(LIMITS.maxPropertyValueLength + 1) } })])), 'gzip', 400, 'VALIDATION_ERROR'],
      ['a gzip recording chunk over 16 MiB inflated', '/api/v1/sessions/big-1/recordings', () => gzipSync(bigChunk(LIMITS.maxRecordingBodyBytes)), 'gzip', 413, 'PAYLOAD_TOO_LARGE'],
      ['a 256 MiB gzip bomb as a recording chunk', '/api/v1/sessions/bomb-1/recordings', () => gzipSync(Buffer.alloc(256 * 1024 * 1024, 0x20)), 'gzip', 413, 'PAYLOAD_TOO_LARGE'],
    ] as const)('refuses %s, storing nothing', async (_name, path, body, encoding, status, code) => {
      const before = await count();
      const res = await send(path, body(), { 'content-encoding': encoding });
      expect(res.status).toBe(status);
      expect(await res.json()).toMatchObject({ code });
      expect(await count()).toEqual(before);
    });

    it('survives a gzip body that breaks off after inflating past the limit (it used to crash the process)', async () => {
      const deep = gzipSync('['.repeat(3_000_000) + ']'.repeat(3_000_000));
      for (const cut of [deep.length - 10, Math.floor(deep.length / 2)]) {
        const res = await send('/api/v1/events/batch', deep.subarray(0, cut), { 'content-encoding': 'gzip' });
        expect(res.status).toBe(413);
      }
      // Give zlib time to reach the broken end of the stream.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await server.postBatch([makeEvent()])).status).toBe(200);
    });

    it('keeps a keep-alive connection usable after refusing a body it did not read to the end', async () => {
      // It used to wait behind the unread rest until the headers timeout, then reset.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const url = `${server.url}/api/v1/events/batch`;
        const refusals = [
          [headers({ 'content-encoding': 'gzip' }), 'not gzip at all '.repeat(20_000), 400],
          [headers({ 'content-encoding': 'br' }), '['.repeat(300_000), 400],
          [headers(), 'x'.repeat(3 * LIMITS.maxBatchBodyBytes), 413],
        ] as const;
        for (const [h, body, status] of refusals) {
          expect((await post(agent, url, h, body)).status).toBe(status);
          expect(await post(agent, url, headers(), JSON.stringify([makeEvent()]))).toMatchObject({ status: 200 });
        }
      } finally {
        agent.destroy();
      }
    });
  });

  describe('session ids in recording paths must be plain identifiers', () => {
    it.each(['a.b', 'a%20b', '%00', 'x'.repeat(129), '%E2%82%AC', 'a%2Fb', '__proto__%5B0%5D', 'a%27%3B--', '%F0%9F%98%80'])(
      'refuses %s on upload and read, storing nothing',
      async (segment) => {
        const before = await count();
        const up = await send(`/api/v1/sessions/${segment}/recordings`, JSON.stringify({ events: [], duration: 0, event_offset: 0 }));
        expect(up.status).toBe(400);
        expect(await up.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
        const down = await read(`/api/v1/sessions/${segment}/recording`);
        expect(down.status).toBe(400);
        expect(await count()).toEqual(before);
      },
    );
  });
});
