import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { describeAccountStore } from '../../../test-support/store/account-store.contract.js';
import { describeEventStore } from '../../../test-support/store/event-store.contract.js';
import { describeReportStore } from '../../../test-support/store/report-store.contract.js';
import type { Credential, EventStore, StoredEvent } from '../event-store.js';
import { T0, frequentValueDay, makeEvent, makeKey, makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { LISTENER_APPLICATION_NAME, createCredentialCache } from './postgres-credentials.js';
import { uuidV7 } from '../../ids.js';
import { createPostgresStore } from './postgres-store.js';
import { POSTGRES_SCHEMA_VERSION } from './postgres-schema.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

describeEventStore('postgres', async () => createPostgresStore({ url: database.url, poolSize: 4 }));
describeReportStore('postgres', async () => createPostgresStore({ url: database.url, poolSize: 4 }));
describeAccountStore('postgres', async () => createPostgresStore({ url: database.url, poolSize: 4 }));

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
  it('keeps no filter value ahead in the background with keepFiltersAhead: false, though a caller still can', async () => {
    // A database of its own: the other tests' stores keep every project's filters ahead.
    const own = await createTestDatabase();
    const store = createPostgresStore({ url: own.url, poolSize: 2, keepFiltersAhead: false });
    const db = new pg.Client({ connectionString: own.url });
    try {
      await store.init();
      await db.connect();
      const projectId = newProjectId();
      const keptDays = async () => Number((await db.query('SELECT COUNT(*) AS n FROM rollup_filtered WHERE project_id = $1 AND value IS NULL', [projectId])).rows[0].n);
      expect((await store.write({ events: frequentValueDay(projectId, Math.floor(Date.now() / 86_400_000) - 2), chunks: [] })).eventInserted.every(Boolean)).toBe(true);
      await store.reports.refreshRollups();
      // Several of the background's ticks (one a second), with nothing kept.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await keptDays()).toBe(0);
      while (await store.reports.keepFilteredAhead());
      expect(await keptDays()).toBeGreaterThan(0);
    } finally {
      await db.end();
      await store.close();
      await own.drop();
    }
  });

  it('rejects calls before init() with NOT_OPEN', async () => {
    const store = createPostgresStore({ url: database.url });
    await expect(store.ping()).rejects.toMatchObject({ code: 'NOT_OPEN' });
    await store.close();
  });

  it("dailySalt() answers the salt another process inserted while its own insert waited for that one's commit", async () => {
    const store = createPostgresStore({ url: database.url });
    await store.init();
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      const day = '2031-01-07';
      // The other process has inserted the day's salt and not committed yet: ours waits on the
      // conflict, and its statement's snapshot predates the commit.
      await other.query('BEGIN');
      await other.query('INSERT INTO salts (day, salt) VALUES ($1, $2)', [day, 'theirs']);
      const ours = store.dailySalt(day, 'ours');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await other.query('COMMIT');
      expect(await ours).toBe('theirs');
    } finally {
      await other.end();
      await store.close();
    }
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

  it('writes a group by COPY with every text COPY escapes kept, and a group that meets a stored event by INSERT, each event reported', async () => {
    const store = createPostgresStore({ url: database.url, poolSize: 2 });
    try {
      await store.init();
      const p = newProjectId();
      const awkward = 'tab\there\nline\r\\back\\slash \\N \u0000 end';
      const first = [
        makeEvent(p, 0, { userId: awkward, properties: { text: awkward, quote: '"\\"', nested: '{"a":"b\\\\c"}' } }),
        makeEvent(p, 1, { sessionId: null, userAgent: null, dimensions: undefined }),
      ];
      expect((await store.write({ events: first, chunks: [] })).eventInserted).toEqual([true, true]);
      // A resent event beside two new ones, one of them twice: COPY refuses the group as a whole,
      // and the INSERT that follows tells each event's fate.
      const second = [makeEvent(p, 2), first[0], makeEvent(p, 3), makeEvent(p, 2)];
      expect((await store.write({ events: second, chunks: [] })).eventInserted).toEqual([true, false, true, false]);
      const { events } = await store.queryEvents({ projectId: p, limit: 10 });
      expect(events.map((e) => e.eventId)).toEqual([3, 2, 1, 0].map((n) => makeEvent(p, n).eventId));
      const stored = events[3];
      expect(stored.userId).toBe(awkward.replace('\u0000', '\uFFFD'));
      expect(stored.properties).toEqual({ text: awkward.replace('\u0000', '\uFFFD'), quote: '"\\"', nested: '{"a":"b\\\\c"}' });
      expect(events[2]).toMatchObject({ sessionId: null, userAgent: null });
    } finally {
      await store.close();
    }
  });

  it('copies groups through its reused buffers intact: a group larger than a buffer, then smaller ones, two at a time', async () => {
    const store = createPostgresStore({ url: database.url, poolSize: 2 });
    try {
      await store.init();
      const p = newProjectId();
      // About 2.4 MB of text: more than the 1 MiB a buffer starts with.
      const big = 'é€'.repeat(8_000);
      const large = Array.from({ length: 100 }, (_, n) => makeEvent(p, n, { properties: { big, n } }));
      expect((await store.write({ events: large, chunks: [] })).eventInserted.every(Boolean)).toBe(true);
      const small = Array.from({ length: 6 }, (_, k) => Array.from({ length: 40 }, (_, i) => makeEvent(p, 1000 + k * 40 + i, { userId: `u${k}-${i}` })));
      const results = await Promise.all(small.map((events) => store.write({ events, chunks: [] })));
      expect(results.every((r) => r.eventInserted.every(Boolean))).toBe(true);
      const { events } = await store.queryEvents({ projectId: p, limit: 1000 });
      expect(events).toHaveLength(340);
      const byId = new Map(events.map((e) => [e.eventId, e]));
      expect(byId.get(large[99]!.eventId)?.properties).toEqual({ big, n: 99 });
      for (const group of small) for (const e of group) expect(byId.get(e.eventId)).toMatchObject({ userId: e.userId, properties: e.properties });
    } finally {
      await store.close();
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

/** A plain connection to the test database, for changes made "by another tool" and for inspection. */
async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Pids of the credential LISTEN connections that have finished their LISTEN (idle after it). */
async function listenerPids(): Promise<number[]> {
  return withAdmin(async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() AND state = 'idle'",
      [LISTENER_APPLICATION_NAME],
    );
    return rows.map((row) => row.pid);
  });
}

/** Resolves once a listener not among `known` has finished its LISTEN. */
async function newListener(known: number[]): Promise<void> {
  await eventually(async () => (await listenerPids()).some((pid) => !known.includes(pid)));
}

/** Polls (no fixed sleep) until `check` holds; fails the test after many tries. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not reached');
}

describe('findCredential (PostgreSQL: cached, kept exact by LISTEN/NOTIFY)', () => {
  let stores: EventStore[] = [];
  const open = async (): Promise<EventStore> => {
    const store = createPostgresStore({ url: database.url, poolSize: 2 });
    await store.init();
    stores.push(store);
    return store;
  };

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
  });

  it('finds a live key with its project in one lookup, and null for an unknown or revoked key', async () => {
    const store = await open();
    const project = makeProject(newProjectId(), { fullIp: true, corsOrigins: ['https://a.test'] });
    await store.createProject(project);
    const write = makeKey(project.id, { createdAt: T0 + 1 });
    const read = makeKey(project.id, { kind: 'read', createdAt: T0 + 2 });
    await store.createKey(write);
    await store.createKey(read);
    for (let round = 0; round < 3; round++) {
      // Several rounds: the first answers come from the database, later ones may come from the cache.
      expect(await store.findCredential(write.hash)).toEqual({ key: write, project });
      expect(await store.findCredential(read.hash)).toEqual({ key: read, project });
      expect(await store.findCredential('0'.repeat(64))).toBeNull();
    }
    await store.revokeKey(write.id, T0 + 50);
    expect(await store.findCredential(write.hash)).toBeNull();
    expect(await store.findCredential(read.hash)).toEqual({ key: read, project });
  });

  it('never answers from the cache with a key that another process revoked before the call', async () => {
    const known = await listenerPids();
    const [server, cli] = [await open(), await open()];
    const project = makeProject(newProjectId());
    await cli.createProject(project);
    const keys = Array.from({ length: 20 }, (_, n) => makeKey(project.id, { createdAt: T0 + n }));
    for (const key of keys) await cli.createKey(key);
    // The server's listener opens on its first lookup; wait for it so that the lookups below are
    // cache hits, which is the case that must not go stale.
    await server.findCredential(keys[0].hash);
    await newListener(known);
    for (const key of keys) {
      expect(await server.findCredential(key.hash)).toMatchObject({ key: { id: key.id } });
      expect(await server.findCredential(key.hash)).toMatchObject({ key: { id: key.id } });
      // Revoked by the other store, then asked again at once: the notification may still be in
      // flight, which the fence before every cache hit accounts for.
      expect(await cli.revokeKey(key.id, T0 + 100)).toBe(true);
      expect(await server.findCredential(key.hash)).toBeNull();
    }
  });

  it('sees keys, projects and changes made by any tool at once (triggers notify)', async () => {
    const known = await listenerPids();
    const server = await open();
    const project = makeProject(newProjectId());
    const key = makeKey(project.id);
    // An unknown key is remembered as unknown; creating it elsewhere must end that at once.
    expect(await server.findCredential(key.hash)).toBeNull();
    await server.findCredential(key.hash);
    await newListener(known);
    expect(await server.findCredential(key.hash)).toBeNull();
    await withAdmin(async (client) => {
      await client.query('INSERT INTO projects (id, name, created_at) VALUES ($1, $2, $3)', [project.id, project.name, project.createdAt]);
      await client.query('INSERT INTO api_keys (id, project_id, kind, hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
        key.id,
        key.projectId,
        key.kind,
        key.hash,
        key.prefix,
        key.createdAt,
      ]);
    });
    expect(await server.findCredential(key.hash)).toEqual({ key, project });
    expect(await server.findCredential(key.hash)).toEqual({ key, project });
    await withAdmin((client) => client.query('UPDATE projects SET full_ip = true, cors_origins = $2 WHERE id = $1', [project.id, ['https://b.test']]));
    expect(await server.findCredential(key.hash)).toEqual({ key, project: { ...project, fullIp: true, corsOrigins: ['https://b.test'] } });
    await withAdmin((client) => client.query('DELETE FROM api_keys WHERE id = $1', [key.id]));
    expect(await server.findCredential(key.hash)).toBeNull();
  });

  it('answers from the database while its LISTEN connection is lost, and caches again once it is back', async () => {
    const project = makeProject(newProjectId());
    const key = makeKey(project.id);
    const store = await open();
    await store.createProject(project);
    await store.createKey(key);
    let lookups = 0;
    const errors: Error[] = [];
    const cache = createCredentialCache({
      url: database.url,
      lookup: async (hash) => {
        lookups++;
        return (await store.findKeyByHash(hash)) ? ({ key, project } as Credential) : null;
      },
      onError: (error) => errors.push(error),
    });
    /** True when a repeated lookup was answered from memory. */
    const cached = async () => {
      await cache.find(key.hash);
      const n = lookups;
      await cache.find(key.hash);
      await cache.find(key.hash);
      return lookups === n;
    };
    try {
      // Once its listener is up, a repeated lookup is answered from memory.
      await eventually(cached);

      // Cut the LISTEN connections as a restart or a network failure would.
      const before = await listenerPids();
      await withAdmin((client) => client.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [before]));
      await store.revokeKey(key.id, T0 + 1);
      // Whether or not the loss has been noticed yet, the revoked key is not found.
      expect(await cache.find(key.hash)).toBeNull();
      await eventually(async () => errors.length > 0);
      // Until LISTEN is back nothing is cached; then it is again.
      await newListener(before);
      await eventually(cached);
      expect(await cache.find(key.hash)).toBeNull();
    } finally {
      await cache.close();
    }
  });
});

describe('schema migration', () => {
  it('takes a version 3 database to the current version: projects get bots drop, events is_bot false and no visitor, salts table added', async () => {
    const old = await createTestDatabase();
    try {
      const first = createPostgresStore({ url: old.url });
      await first.init();
      const p = newProjectId();
      await first.createProject(makeProject(p, { bots: 'keep' }));
      await first.write({ events: [makeEvent(p, 1, { isBot: true })], chunks: [] });
      await first.close();
      const admin = new pg.Client({ connectionString: old.url });
      await admin.connect();
      try {
        // What version 3 created: none of the new columns, no salts.
        await admin.query(`
          ALTER TABLE projects DROP COLUMN bots;
          ALTER TABLE events DROP COLUMN is_bot;
          ALTER TABLE events DROP COLUMN visitor_id;
          DROP TABLE salts;
          UPDATE schema_version SET version = 3;`);
      } finally {
        await admin.end();
      }
      const store = createPostgresStore({ url: old.url });
      await store.init();
      try {
        expect((await store.getProject(p))?.bots).toBe('drop');
        const [row] = (await store.queryEvents({ projectId: p, limit: 10 })).events;
        expect([row?.isBot, row?.visitorId]).toEqual([false, null]);
        expect(await store.dailySalt('2026-01-01', 'x')).toBe('x');
      } finally {
        await store.close();
      }
    } finally {
      await old.drop();
    }
  });

  it('takes a version 7 database to the current version: keys kept, an admin key can be created and found', async () => {
    const old = await createTestDatabase();
    try {
      const first = createPostgresStore({ url: old.url });
      await first.init();
      const p = makeProject(newProjectId());
      const read = makeKey(p.id, { kind: 'read' });
      await first.createProject(p);
      await first.createKey(read);
      await first.close();
      const admin = new pg.Client({ connectionString: old.url });
      await admin.connect();
      try {
        const checks = "SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = 'api_keys'::regclass AND contype = 'c'";
        // The name every version gave the column's CHECK, which the migration replaces.
        expect((await admin.query(checks)).rows).toEqual([
          { conname: 'api_keys_kind_check', def: "CHECK ((kind = ANY (ARRAY['write'::text, 'read'::text, 'admin'::text])))" },
        ]);
        // What version 7 created: the CHECK without admin.
        await admin.query(`
          ALTER TABLE api_keys DROP CONSTRAINT api_keys_kind_check;
          ALTER TABLE api_keys ADD CHECK (kind IN ('write', 'read'));
          UPDATE schema_version SET version = 7;`);
        expect((await admin.query(checks)).rows).toEqual([
          { conname: 'api_keys_kind_check', def: "CHECK ((kind = ANY (ARRAY['write'::text, 'read'::text])))" },
        ]);
        const store = createPostgresStore({ url: old.url });
        await store.init();
        try {
          const key = makeKey(p.id, { kind: 'admin', createdAt: T0 + 1 });
          await store.createKey(key);
          expect(await store.findCredential(key.hash)).toEqual({ key, project: p });
          expect(await store.findCredential(read.hash)).toEqual({ key: read, project: p });
          expect(await store.listKeys(p.id)).toEqual([read, key]);
        } finally {
          await store.close();
        }
        expect((await admin.query('SELECT version FROM schema_version')).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
        expect((await admin.query(checks)).rows).toHaveLength(1);
      } finally {
        await admin.end();
      }
    } finally {
      await old.drop();
    }
  });

  it('takes a version 8 database to the current version: events kept, `country` on every partition, null for them, filled for new ones', async () => {
    const old = await createTestDatabase();
    try {
      const p = makeProject(newProjectId());
      const first = createPostgresStore({ url: old.url });
      await first.init();
      await first.createProject(p);
      // Rows in a day partition (a UUIDv7 id of today) and in the default one (any other id).
      const today = Date.now();
      const none = { path: '/old', host: null, referrerHost: null, channel: null, utmSource: null, utmMedium: null, utmCampaign: null };
      const dims = { ...none, browser: 'Firefox', os: null, device: null, screenClass: null, anonymousId: 'a', country: null };
      const olds = [makeEvent(p.id, 1, { eventId: uuidV7(today), timestamp: today, dimensions: dims }), makeEvent(p.id, 2, { timestamp: today, dimensions: dims })];
      await first.write({ events: olds, chunks: [] });
      await first.close();
      const admin = new pg.Client({ connectionString: old.url });
      await admin.connect();
      try {
        // What version 8 had: no country; and the aggregates and rollups of their shapes then,
        // which the store builds again from the events.
        await admin.query(`
          ALTER TABLE events DROP COLUMN country;
          DELETE FROM agg_meta;
          DELETE FROM rollup_meta;
          UPDATE schema_version SET version = 8;`);
        const store = createPostgresStore({ url: old.url });
        await store.init();
        try {
          const fresh = makeEvent(p.id, 3, { eventId: uuidV7(today + 1), timestamp: today + 1, dimensions: { ...dims, path: '/new', country: 'GB' } });
          expect((await store.write({ events: [fresh], chunks: [] })).eventInserted).toEqual([true]);
          const query = { projectId: p.id, from: today - 60_000, to: today + 60_000, filters: {}, includeBots: false, visitorKey: 'anonymous' } as const;
          expect((await store.reports.totals(query)).events).toBe(3);
          expect(await store.reports.top(query, 'country', 10)).toEqual([{ value: 'GB', events: 1, visitors: 1 }]);
          expect((await store.reports.totals({ ...query, filters: { country: 'GB' } })).events).toBe(1);
          const rows = await admin.query('SELECT event_id, path, country FROM events WHERE project_id = $1 ORDER BY path, event_id', [p.id]);
          expect(rows.rows).toEqual([
            { event_id: fresh.eventId, path: '/new', country: 'GB' },
            ...olds.map((e) => ({ event_id: e.eventId, path: '/old', country: null })).sort((a, b) => (a.event_id < b.event_id ? -1 : 1)),
          ]);
        } finally {
          await store.close();
        }
        expect((await admin.query('SELECT version FROM schema_version')).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
        // Added to the partitioned table, the column is on each partition, the default one too.
        const partitions = await admin.query<{ table: string; country: boolean }>(
          `SELECT c.relname AS table, EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'country' AND NOT a.attisdropped) AS country
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass`,
        );
        expect(partitions.rows.length).toBeGreaterThan(1);
        expect(partitions.rows.filter((r) => !r.country)).toEqual([]);
      } finally {
        await admin.end();
      }
    } finally {
      await old.drop();
    }
  });

  it('takes a version 10 database to the current version: accounts, sessions and links tables added, projects and keys kept', async () => {
    const old = await createTestDatabase();
    try {
      const p = makeProject(newProjectId());
      const key = makeKey(p.id, { kind: 'read' });
      const first = createPostgresStore({ url: old.url });
      await first.init();
      await first.createProject(p);
      await first.createKey(key);
      await first.close();
      const admin = new pg.Client({ connectionString: old.url });
      await admin.connect();
      try {
        // What version 10 had: no tables for the dashboard's people.
        await admin.query(`
          DROP TABLE account_sessions;
          DROP TABLE accounts;
          DROP TABLE shared_links;
          UPDATE schema_version SET version = 10;`);
        const store = createPostgresStore({ url: old.url });
        await store.init();
        try {
          expect(await store.findCredential(key.hash)).toEqual({ key, project: p });
          const account = { id: 'acct_migrated', email: 'migrated@example.com', role: 'admin', passwordHash: 'scrypt$x', createdAt: T0, disabledAt: null } as const;
          await store.createAccount(account);
          expect(await store.findAccountByEmail(account.email)).toEqual(account);
        } finally {
          await store.close();
        }
        expect((await admin.query('SELECT version FROM schema_version')).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
      } finally {
        await admin.end();
      }
    } finally {
      await old.drop();
    }
  });

  it('takes a version 1 database to the current version: filter indexes dropped, credential triggers added, rows kept', async () => {
    const old = await createTestDatabase();
    try {
      const first = createPostgresStore({ url: old.url });
      await first.init();
      const p = newProjectId();
      await first.createProject(makeProject(p));
      await first.write({ events: [makeEvent(p, 1)], chunks: [] });
      await first.close();
      // Turn it back into what version 1 created.
      const admin = new pg.Client({ connectionString: old.url });
      await admin.connect();
      try {
        await admin.query(`
          DROP TRIGGER projects_notify_credentials ON projects;
          DROP TRIGGER api_keys_notify_credentials ON api_keys;
          DROP FUNCTION service_analytics_credentials_changed();
          DROP INDEX events_by_user;
          DROP INDEX events_by_heatmap;
          CREATE INDEX events_by_type ON events (project_id, event_type, timestamp, event_id);
          CREATE INDEX events_by_user ON events (project_id, user_id, timestamp, event_id) WHERE user_id IS NOT NULL;
          CREATE INDEX events_by_session ON events (project_id, session_id, timestamp, event_id) WHERE session_id IS NOT NULL;
          UPDATE schema_version SET version = 1;`);
        const stores = [createPostgresStore({ url: old.url }), createPostgresStore({ url: old.url })];
        // Two processes upgrading at once: the advisory lock makes one migrate and the other see it done.
        await Promise.all(stores.map((s) => s.init()));
        await Promise.all(stores.map((s) => s.close()));
        const version = await admin.query('SELECT version FROM schema_version');
        expect(version.rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
        const indexes = await admin.query("SELECT indexname FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname");
        // Declared on the partitioned table (version 6): the time index and the dedupe key with the id's day.
        // Version 10 brings back an index of identified events by user, without the time: for erasure only.
        // Version 12 adds one of only the clicks and scroll depths, by page: for the heatmap report.
        expect(indexes.rows.map((row: { indexname: string }) => row.indexname)).toEqual([
          'events_by_heatmap',
          'events_by_time',
          'events_by_user',
          'events_project_id_event_id_id_day_key',
        ]);
        const byPage = await admin.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'events' AND indexname = 'events_by_heatmap'");
        expect(byPage.rows[0]?.indexdef).toMatch(/\(project_id, path, "?timestamp"?\) WHERE \(event_type = ANY \(ARRAY\['click'::text, 'scroll_depth'::text\]\)\)$/);
        const byUser = await admin.query("SELECT indexdef FROM pg_indexes WHERE tablename = 'events' AND indexname = 'events_by_user'");
        expect(byUser.rows[0]?.indexdef).toMatch(/\(project_id, user_id\) WHERE \(user_id IS NOT NULL\)$/);
        // The daily rollups' marking triggers (rollup-schema.ts) are not part of the schema.
        const triggers = await admin.query("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname NOT LIKE 'rollup%' ORDER BY tgname");
        expect(triggers.rows.map((row: { tgname: string }) => row.tgname)).toEqual(['api_keys_notify_credentials', 'projects_notify_credentials']);
        const events = await admin.query('SELECT count(*)::int AS n FROM events');
        expect(events.rows).toEqual([{ n: 1 }]);
      } finally {
        await admin.end();
      }
    } finally {
      await old.drop();
    }
  });
});
