import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, makeEvent, startTestServer } from '../test-support/server/test-server.js';

/** The read API, every report, and the export: each answers 200 here. */
const READS = [
  'events',
  'sessions',
  'sessions/s-headers/recording',
  'reports/timeseries',
  'reports/top/page',
  'reports/sessions',
  'reports/vitals',
  'reports/errors',
  'reports/funnel?step=event:a&step=event:b',
  'reports/experiments',
  'reports/experiments/checkout',
  'reports/live',
  'export',
] as const;

describe('Cache-Control: no-store and X-Content-Type-Options: nosniff on the API (middleware/api-headers.ts)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
    expect((await server.postBatch([makeEvent({ session_id: 's-headers' })])).status).toBe(200);
    const chunk = await fetch(`${server.url}/api/v1/sessions/s-headers/recordings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${server.project.writeKey}`, 'x-project-id': server.project.id },
      body: JSON.stringify({ events: [{ type: 4, data: {}, timestamp: Date.now() }], duration: 0, start_url: null, is_final: true, event_offset: 0 }),
    });
    expect(chunk.status).toBe(200);
  });
  afterAll(() => server.close());

  /** The key each read needs: the export copies everything and takes the admin key. */
  const keyOf = (path: string) => (path === 'export' ? server.project.adminKey : server.project.readKey);

  const expectHeaders = (res: Response, what: string) => {
    expect([res.headers.get('cache-control'), res.headers.get('x-content-type-options')], what).toEqual(['no-store', 'nosniff']);
  };

  it.each(READS)('on GET /api/v1/%s', async (path) => {
    const res = await fetch(`${server.url}/api/v1/${path}`, { headers: { authorization: `ApiKey ${keyOf(path)}`, 'x-project-id': server.project.id } });
    expect(res.status, await res.clone().text()).toBe(200);
    expectHeaders(res, path);
  });

  it.each(READS)('on the 401 of GET /api/v1/%s without a key', async (path) => {
    const res = await fetch(`${server.url}/api/v1/${path}`, { headers: { 'x-project-id': server.project.id } });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([401, 'AUTH_ERROR']);
    expectHeaders(res, path);
  });

  it('on the other errors: 400, 404, 405, and the ingest shortcut’s 401', async () => {
    const read = { authorization: `ApiKey ${server.project.readKey}`, 'x-project-id': server.project.id };
    const answers = [
      [400, await fetch(`${server.url}/api/v1/reports/timeseries?from=yesterday`, { headers: read })],
      [404, await fetch(`${server.url}/api/v1/nothing-here`, { headers: read })],
      [405, await fetch(`${server.url}/api/v1/events`, { method: 'PUT', headers: read })],
      [401, await fetch(`${server.url}/api/v1/events/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' })],
    ] as const;
    for (const [status, res] of answers) {
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expectHeaders(res, `${status}`);
    }
  });

  it('on the ingest shortcut’s 200', async () => {
    const res = await server.postBatch([makeEvent()]);
    expect(res.status).toBe(200);
    expectHeaders(res, 'POST /api/v1/events/batch');
  });
});
