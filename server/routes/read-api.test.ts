import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';

interface WireEvent {
  event_id: string;
  event_type: string;
  user_id: string | null;
  session_id: string | null;
  timestamp: string;
  properties: Record<string, unknown>;
}

describe.each(STORE_KINDS)('GET /api/v1/events on %s', (kind) => {
  let server: TestServer;
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  beforeAll(async () => {
    server = await startTestServer(kind);
    const events = Array.from({ length: 45 }, (_, i) =>
      makeEvent({
        event_type: i % 3 === 0 ? 'page_view' : 'click',
        user_id: i % 2 === 0 ? 'alice' : 'bob',
        session_id: `s${i % 5}`,
        // Pairs of events share a timestamp so pagination must break ties.
        timestamp: new Date(base + Math.floor(i / 2) * 1000).toISOString(),
      }),
    );
    const res = await server.postBatch(events);
    expect(res.status).toBe(200);
  });
  afterAll(() => server.close());

  const get = async (query: string, key = server.project.readKey) => {
    const res = await fetch(`${server.url}/api/v1/events${query}`, {
      headers: { authorization: `ApiKey ${key}`, 'x-project-id': server.project.id },
    });
    return { status: res.status, body: (await res.json()) as { events: WireEvent[]; next_cursor: string | null; code?: string } };
  };

  it('walks every page without duplicates or gaps, newest first', async () => {
    const seen: WireEvent[] = [];
    let cursor: string | null = null;
    do {
      const { body }: { body: { events: WireEvent[]; next_cursor: string | null } } = await get(`?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(body.events.length).toBeLessThanOrEqual(7);
      seen.push(...body.events);
      cursor = body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(45);
    expect(new Set(seen.map((e) => e.event_id)).size).toBe(45);
    const times = seen.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('filters by event_type, user_id and session_id together', async () => {
    const { body } = await get('?event_type=page_view&user_id=alice&limit=100');
    expect(body.events.length).toBeGreaterThan(0);
    for (const e of body.events) expect([e.event_type, e.user_id]).toEqual(['page_view', 'alice']);
    const bySession = await get('?session_id=s3&limit=100');
    expect(bySession.body.events).toHaveLength(9);
  });

  it('matches a filter holding NUL to the event stored with the same text (PostgreSQL refuses NUL)', async () => {
    const res = await server.postBatch([makeEvent({ event_type: 'odd\u0000type' })]);
    expect(res.status).toBe(200);
    const { status, body } = await get(`?event_type=${encodeURIComponent('odd\u0000type')}`);
    expect(status).toBe(200);
    expect(body.events.map((e) => e.event_type)).toEqual(['odd\uFFFDtype']);
    const none = await get('?user_id=%00&session_id=%00');
    expect([none.status, none.body.events]).toEqual([200, []]);
  });

  it('filters by time with from (inclusive) and to (exclusive), as ISO or ms', async () => {
    const { body } = await get(`?from=${new Date(base + 5000).toISOString()}&to=${base + 10_000}&limit=100`);
    expect(body.events).toHaveLength(10);
  });

  it.each(['?limit=0', '?limit=1001', '?limit=abc', '?from=yesterday', '?limit=1&limit=2', '?cursor=not-a-cursor'])('answers 400 VALIDATION_ERROR for %s', async (q) => {
    const { status, body } = await get(q);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
  });

  it('answers 401 AUTH_ERROR for a write key', async () => {
    const { status, body } = await get('', server.project.writeKey);
    expect(status).toBe(401);
    expect(body.code).toBe('AUTH_ERROR');
  });

  it("filters by the reports' dimensions (page, device, …) extracted at ingest, with the other filters; an empty one is refused", async () => {
    const page = (path: string) => JSON.stringify({ url: `https://shop.example${path}`, path, referrer: '', search: '' });
    const at = new Date(base + 100_000).toISOString();
    const res = await server.postBatch([
      makeEvent({ event_type: 'page_view', timestamp: at, properties: { page: page('/pricing') } }),
      makeEvent({ event_type: 'signup', timestamp: at, properties: { page: page('/pricing') } }),
      makeEvent({ event_type: 'page_view', timestamp: at, properties: { page: page('/docs') } }),
    ]);
    expect(res.status).toBe(200);
    const pricing = await get('?page=%2Fpricing&limit=100');
    expect(pricing.body.events.map((e) => e.event_type).sort()).toEqual(['page_view', 'signup']);
    const both = await get('?page=%2Fpricing&event_type=signup&host=shop.example');
    expect(both.body.events.map((e) => e.event_type)).toEqual(['signup']);
    expect((await get('?page=%2Fnowhere')).body.events).toEqual([]);
    const empty = await get('?device=');
    expect([empty.status, empty.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it("never shows another project's events", async () => {
    const other = await server.createProject();
    const res = await fetch(`${server.url}/api/v1/events`, { headers: { authorization: `ApiKey ${other.readKey}`, 'x-project-id': other.id } });
    expect(((await res.json()) as { events: unknown[] }).events).toEqual([]);
  });
});
