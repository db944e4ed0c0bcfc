import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { STORE_KINDS, type TestServer, makeEvent, openTestStore, startTestServer } from '../test-support/server/test-server.js';
import { silentLogger } from './logger.js';
import type { EventStore } from './store/event-store.js';
import { createVisitorIds, hashVisitor, utcDay } from './visitor-id.js';

const DAY = 86_400_000;
const NOON = Date.parse('2026-05-04T12:00:00.000Z');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0';

describe('createVisitorIds() on a real SQLite file', () => {
  let store: EventStore;
  let location: string;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    ({ store, location, dispose } = await openTestStore('sqlite'));
  });
  afterEach(async () => {
    await store.close();
    await dispose();
  });

  /** The salt rows, read beside the store. */
  const saltDays = (): string[] => {
    const db = new Database(location, { readonly: true });
    try {
      return (db.prepare('SELECT day FROM salts ORDER BY day').pluck().all() as string[]);
    } finally {
      db.close();
    }
  };

  it('gives the same address and agent the same id all day, another the next day, and another in another project', async () => {
    const ids = createVisitorIds({ store, logger: silentLogger });
    const at = async (projectId: string, ip: string, ua: string | null, time: number) => (await ids.forRequest(projectId, ip, time))(ua);
    const morning = await at('p1', '203.0.113.9', UA, NOON - 11 * 3_600_000);
    expect(morning).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await at('p1', '203.0.113.9', UA, NOON + 11 * 3_600_000)).toBe(morning);
    expect(await at('p1', '203.0.113.9', UA, NOON + DAY)).not.toBe(morning);
    expect(await at('p2', '203.0.113.9', UA, NOON)).not.toBe(morning);
    // The full address counts, not its truncated form, and so does the agent.
    expect(await at('p1', '203.0.113.10', UA, NOON)).not.toBe(morning);
    expect(await at('p1', '203.0.113.9', `${UA} Extra`, NOON)).not.toBe(morning);
    expect(await at('p1', '203.0.113.9', null, NOON)).not.toBe(morning);
    // Without an address there is no visitor to count.
    expect((await ids.forRequest('p1', null, NOON))(UA)).toBeNull();
  });

  it('hashes one distinct agent of a request once', async () => {
    const ids = createVisitorIds({ store, logger: silentLogger });
    const visitorOf = await ids.forRequest('p1', '198.51.100.1', NOON);
    const values = ['a', 'a', 'b', 'a', null, 'b'].map((ua) => visitorOf(ua));
    expect(values[0]).toBe(values[1]);
    expect(values[0]).toBe(values[3]);
    expect(values[2]).toBe(values[5]);
    expect(new Set(values).size).toBe(3);
  });

  it('shares the salt through the store: two makers (two processes) give the same id', async () => {
    const [one, two] = [createVisitorIds({ store, logger: silentLogger }), createVisitorIds({ store, logger: silentLogger })];
    const [a, b] = await Promise.all([one.forRequest('p1', '192.0.2.1', NOON), two.forRequest('p1', '192.0.2.1', NOON)]);
    expect(a(UA)).toBe(b(UA));
    expect(saltDays()).toEqual([utcDay(NOON)]);
  });

  it("keeps yesterday's salt only through the grace period after midnight, then deletes it", async () => {
    const ids = createVisitorIds({ store, logger: silentLogger, graceMs: 10 * 60_000 });
    const midnight = Date.parse('2026-05-05T00:00:00.000Z');
    await ids.forRequest('p1', '192.0.2.1', midnight - 1000);
    expect(saltDays()).toEqual(['2026-05-04']);
    await ids.forRequest('p1', '192.0.2.1', midnight + 5 * 60_000);
    expect(saltDays()).toEqual(['2026-05-04', '2026-05-05']);
    await ids.forRequest('p1', '192.0.2.1', midnight + 10 * 60_000 + 1);
    // Deleting is not awaited by the request; it is done by the next turn of the database.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(saltDays()).toEqual(['2026-05-05']);
  });

  it('deletes the salt by expire(now) alone, without a request, once the grace period is past', async () => {
    const ids = createVisitorIds({ store, logger: silentLogger, graceMs: 10 * 60_000 });
    const midnight = Date.parse('2026-05-05T00:00:00.000Z');
    await ids.forRequest('p1', '192.0.2.1', midnight - 1000);
    ids.expire(midnight + 9 * 60_000);
    expect(saltDays()).toEqual(['2026-05-04']);
    ids.expire(midnight + 11 * 60_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(saltDays()).toEqual([]);
  });

  it('answers 503 STORAGE_UNAVAILABLE when the salt cannot be read, and tries again on the next request', async () => {
    let fail = true;
    const flaky: EventStore = { ...store, dailySalt: (day, candidate) => (fail ? Promise.reject(new Error('down')) : store.dailySalt(day, candidate)) };
    const ids = createVisitorIds({ store: flaky, logger: silentLogger });
    await expect(ids.forRequest('p1', '192.0.2.1', NOON)).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE', status: 503 });
    fail = false;
    expect((await ids.forRequest('p1', '192.0.2.1', NOON))(UA)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('hashVisitor separates its parts: moving characters between them changes the id', () => {
    expect(hashVisitor('s', 'p1', '1.2.3.4', 'ua')).not.toBe(hashVisitor('s', 'p', '11.2.3.4', 'ua'));
  });
});

describe.each(STORE_KINDS)('visitor_id at POST /api/v1/events/batch on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  const read = async (project: { id: string; readKey: string }) => {
    const res = await fetch(`${server.url}/api/v1/events?limit=100`, { headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.id } });
    return ((await res.json()) as { events: Array<{ event_id: string; visitor_id: string | null; ip_address: string }> }).events;
  };

  it('stores a visitor id per event, the same for one agent across requests and forms, another for another agent or project', async () => {
    const project = await server.createProject();
    const other = await server.createProject();
    const first = makeEvent({ user_agent: UA });
    const second = makeEvent({ user_agent: UA });
    const otherAgent = makeEvent({ user_agent: 'Other/1.0' });
    await server.postBatch([first, otherAgent], { project });
    // The beacon form of the same endpoint.
    await fetch(`${server.url}/api/v1/events/batch?api_key=${project.writeKey}&project_id=${project.id}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify([second]),
    });
    const inOther = makeEvent({ user_agent: UA });
    await server.postBatch([inOther], { project: other });
    const byId = new Map((await read(project)).map((e) => [e.event_id, e]));
    const visitor = byId.get(first.event_id as string)?.visitor_id;
    expect(visitor).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(byId.get(second.event_id as string)?.visitor_id).toBe(visitor);
    expect(byId.get(otherAgent.event_id as string)?.visitor_id).not.toBe(visitor);
    expect((await read(other))[0]?.visitor_id).not.toBe(visitor);
    // Hashed from the full address, while the stored address is truncated.
    expect(byId.get(first.event_id as string)?.ip_address).toBe('127.0.0.0');
  });
});
