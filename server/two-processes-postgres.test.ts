import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '../test-support/postgres.js';
import { openStore } from './store/open-store.js';
import { type ServerProcess, buildCli, runCli, startServerProcess } from '../test-support/server/cli-process.js';
import { makeEvent } from '../test-support/server/test-server.js';

describe('two server processes on one PostgreSQL', () => {
  let db: TestDatabase;
  let servers: ServerProcess[] = [];
  let project: { projectId: string; apiKey: string };
  beforeAll(async () => {
    const cli = await buildCli();
    db = await createTestDatabase();
    // Keeps bots: Node's fetch and the test events' user agents are bots to the default policy.
    project = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Scale', '--bots', 'keep', '--json', '--database-url', db.url])).stdout);
    // Both start at once: schema creation must be safe under the race.
    servers = await Promise.all([startServerProcess(cli, [], { SA_DATABASE_URL: db.url }), startServerProcess(cli, [], { SA_DATABASE_URL: db.url })]);
  });
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.exited));
    await db.drop();
  });

  it('stores every event exactly once when both receive the same and different events concurrently', async () => {
    const shared = Array.from({ length: 400 }, () => makeEvent());
    const own = servers.map(() => Array.from({ length: 400 }, () => makeEvent()));
    const send = (url: string, events: unknown[]) =>
      fetch(`${url}/api/v1/events/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.apiKey}`, 'x-project-id': project.projectId },
        body: JSON.stringify(events),
      });
    const requests: Array<Promise<Response>> = [];
    for (let i = 0; i < 400; i += 20) {
      servers.forEach((s, n) => {
        requests.push(send(s.url, shared.slice(i, i + 20)));
        requests.push(send(s.url, (own[n] ?? []).slice(i, i + 20)));
      });
    }
    const responses = await Promise.all(requests);
    for (const res of responses) expect(await res.json()).toEqual({ success: true, processed: 20 });

    const store = await openStore(db.url);
    await store.init();
    try {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.queryEvents({ projectId: project.projectId, limit: 1000, ...(cursor ? { cursor } : {}) });
        ids.push(...page.events.map((e) => e.eventId));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const expected = [...shared, ...own.flat()].map((e) => e.event_id as string);
      expect(ids.length).toBe(expected.length);
      expect(new Set(ids)).toEqual(new Set(expected));
    } finally {
      await store.close();
    }
  });

  it('gives one visitor the same visitor id in both processes: the day\'s salt is shared through the database', async () => {
    const agent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/140.0';
    const events = servers.map(() => makeEvent({ user_agent: agent }));
    // At once, so that both may ask for the day's salt together.
    const responses = await Promise.all(
      servers.map((s, i) =>
        fetch(`${s.url}/api/v1/events/batch`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.apiKey}`, 'x-project-id': project.projectId },
          body: JSON.stringify([events[i]]),
        }),
      ),
    );
    for (const res of responses) expect(res.status).toBe(200);
    const store = await openStore(db.url);
    await store.init();
    try {
      const wanted = new Set(events.map((e) => e.event_id));
      const rows = (await store.queryEvents({ projectId: project.projectId, limit: 1000 })).events.filter((e) => wanted.has(e.eventId));
      expect(rows).toHaveLength(2);
      expect(rows[0]?.visitorId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(rows[1]?.visitorId).toBe(rows[0]?.visitorId);
    } finally {
      await store.close();
    }
  });
});
