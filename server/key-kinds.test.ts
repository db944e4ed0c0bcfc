/**
 * Each kind of key does its holder's job and nothing more (docs/protocol.md, "Authentication and
 * key kinds"): write keys send, read keys read reports and events, admin keys also erase and export.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../test-support/server/test-server.js';

describe.each(STORE_KINDS)('key kinds on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server?.close());

  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `ApiKey ${key}`, 'x-project-id': server.project.id, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.text()).trim() };
  };

  it('refuses a read key on erasure and export, and erases nothing', async () => {
    const event = makeEvent({ user_id: 'kept-user' });
    expect((await server.postBatch([event])).status).toBe(200);
    for (const [method, path] of [['DELETE', '/api/v1/users/kept-user'], ['GET', '/api/v1/export']] as const) {
      const refused = await call(method, path, server.project.readKey);
      expect([path, refused.status, JSON.parse(refused.body)]).toEqual([
        path,
        401,
        { code: 'AUTH_ERROR', error: 'This endpoint needs an admin key (key create --kind admin); read keys can only read reports and events.' },
      ]);
      expect((await call(method, path, server.project.writeKey)).status).toBe(401);
    }
    const { events } = await server.store.queryEvents({ projectId: server.project.id, limit: 100 });
    expect(events.map((e) => e.eventId)).toContain(event.event_id);
  });

  it('lets an admin key export, erase and read, but not send', async () => {
    const event = makeEvent({ user_id: 'erased-user' });
    await server.postBatch([event]);
    const exported = await call('GET', '/api/v1/export', server.project.adminKey);
    expect(exported.status).toBe(200);
    expect(exported.body.split('\n').map((line) => (JSON.parse(line) as { event_id: string }).event_id)).toContain(event.event_id);
    expect((await call('GET', '/api/v1/events?user_id=erased-user', server.project.adminKey)).status).toBe(200);
    expect((await call('GET', '/api/v1/reports/timeseries', server.project.adminKey)).status).toBe(200);
    const erased = await call('DELETE', '/api/v1/users/erased-user', server.project.adminKey);
    expect([erased.status, JSON.parse(erased.body)]).toEqual([200, { success: true, events: 1, recordings: 0 }]);
    const sent = await call('POST', '/api/v1/events/batch', server.project.adminKey, [makeEvent()]);
    expect([sent.status, JSON.parse(sent.body).code]).toEqual([401, 'AUTH_ERROR']);
  });

  it('keeps the read key to reading: the read API and the reports', async () => {
    expect((await call('GET', '/api/v1/events', server.project.readKey)).status).toBe(200);
    expect((await call('GET', '/api/v1/reports/timeseries', server.project.readKey)).status).toBe(200);
    expect((await call('POST', '/api/v1/events/batch', server.project.readKey, [makeEvent()])).status).toBe(401);
  });
});
