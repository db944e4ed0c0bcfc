import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test-support/postgres.js';
import { describeEventStore } from './event-store.contract.js';
import type { StoredEvent } from './event-store.js';
import { makeEvent, newProjectId } from './event-store.fixtures.js';
import { createPostgresStore } from './postgres-store.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

describeEventStore('postgres', async () => createPostgresStore({ url: database.url, poolSize: 4 }));

/** A deterministic shuffle (no Math.random in tests): a fixed-seed linear congruential generator. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

describe('createPostgresStore({ url })', () => {
  it('rejects calls before init() with NOT_OPEN', async () => {
    const store = createPostgresStore({ url: database.url });
    await expect(store.ping()).rejects.toMatchObject({ code: 'NOT_OPEN' });
    await store.close();
  });

  it('creates the schema once when two processes initialise a new database at the same moment', async () => {
    const fresh = await createTestDatabase();
    const stores = [createPostgresStore({ url: fresh.url }), createPostgresStore({ url: fresh.url })];
    try {
      await Promise.all(stores.map((s) => s.init()));
      await stores[0].init();
      await expect(stores[1].ping()).resolves.toBeUndefined();
      // A database already migrated by a newer server is refused rather than written to.
      const admin = new pg.Client({ connectionString: fresh.url });
      await admin.connect();
      await admin.query('UPDATE schema_version SET version = 99');
      await admin.end();
      const newer = createPostgresStore({ url: fresh.url });
      await expect(newer.init()).rejects.toThrow(/schema version 99/);
      await newer.close();
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await fresh.drop();
    }
  });

  it('stores every event once and reports each inserted exactly once when two processes write overlapping batches', async () => {
    // Two pools stand for two server processes behind a load balancer, each with its own group commits.
    const processes = [
      createPostgresStore({ url: database.url, poolSize: 4 }),
      createPostgresStore({ url: database.url, poolSize: 4 }),
    ];
    try {
      await Promise.all(processes.map((s) => s.init()));
      const p = newProjectId();
      const all = Array.from({ length: 3000 }, (_, n) => makeEvent(p, n));
      // Process 0 gets events 0–1999, process 1 gets 1000–2999: 1000 events go to both, in another order.
      const shares: StoredEvent[][] = [shuffled(all.slice(0, 2000), 1), shuffled(all.slice(1000), 2)];
      // A client retry inside one process: some events appear in two of its batches too.
      shares[0].push(...all.slice(1500, 1600));
      const reported = new Map<string, number>();
      await Promise.all(
        processes.flatMap((store, k) =>
          batches(shares[k], 250).map(async (events) => {
            const result = await store.write({ events, chunks: [] });
            result.eventInserted.forEach((inserted, i) => {
              if (inserted) reported.set(events[i].eventId, (reported.get(events[i].eventId) ?? 0) + 1);
            });
          }),
        ),
      );
      expect(reported.size).toBe(all.length);
      expect([...reported.values()].every((count) => count === 1)).toBe(true);
      const stored = await processes[1].queryEvents({ projectId: p, limit: 1000 });
      expect(stored.events).toHaveLength(1000);
      let total = 0;
      for (let cursor: string | undefined, page = 0; page < 10; page++) {
        const result = await processes[0].queryEvents({ projectId: p, limit: 1000, cursor });
        total += result.events.length;
        if (!result.nextCursor) break;
        cursor = result.nextCursor;
      }
      expect(total).toBe(all.length);
    } finally {
      await Promise.all(processes.map((s) => s.close()));
    }
  });
});
