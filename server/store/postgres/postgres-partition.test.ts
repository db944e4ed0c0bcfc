import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { uuidV7 } from '../../ids.js';
import type { EventStore } from '../event-store.js';
import { makeChunk, makeEvent, makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { DAYS_AHEAD, DAYS_BACK, RECORDING_PARTITIONS, idDay, partitionDay, partitionName } from './postgres-partition.js';
import { POSTGRES_SCHEMA_VERSION } from './postgres-schema.js';
import { createPostgresStore } from './postgres-store.js';
import { REPORT_COLUMNS_V5 } from '../reports/report-columns.js';

const DAY = 86_400_000;
const TODAY = Math.floor(Date.now() / DAY);

let database: TestDatabase;
let admin: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase();
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await database?.drop();
});

/** The day partitions of `events` now, by day, and the partition each event id of `projectId` lives in. */
async function partitions(): Promise<number[]> {
  const { rows } = await admin.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass",
  );
  return rows.map((r) => partitionDay(r.name)).filter((d): d is number => d !== null).sort((a, b) => a - b);
}

async function homes(projectId: string): Promise<Map<string, string>> {
  const { rows } = await admin.query<{ event_id: string; home: string }>(
    'SELECT event_id, tableoid::regclass::text AS home FROM events WHERE project_id = $1',
    [projectId],
  );
  return new Map(rows.map((r) => [r.event_id, r.home]));
}

/** Runs `work` on a database of its own and a client of it, dropped afterwards (retention and upgrades count every row). */
async function withOwnDatabase(work: (db: TestDatabase, client: pg.Client) => Promise<void>): Promise<void> {
  const db = await createTestDatabase();
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await work(db, client);
  } finally {
    await client.end();
    await db.drop();
  }
}

async function withStore<T>(work: (store: EventStore) => Promise<T>, url = database.url): Promise<T> {
  const store = createPostgresStore({ url, poolSize: 4 });
  await store.init();
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

describe('idDay(eventId)', () => {
  it('is the day of a UUIDv7 time, 0 for any other id, exactly as the SQL function computes it', async () => {
    await withStore(async () => {});
    const ids = [
      uuidV7(Date.UTC(2026, 10, 25, 0, 0, 0, 0)),
      uuidV7(Date.UTC(2026, 10, 25, 23, 59, 59, 999)),
      uuidV7(Date.UTC(2000, 0, 1)),
      uuidV7(0),
      uuidV7(2 ** 48 - 1),
      uuidV7(Date.UTC(2026, 10, 25)).toUpperCase(),
      '6ba7b810-9dad-41d1-80b4-00c04fd430c8', // v4
      `${uuidV7(Date.UTC(2026, 10, 25))}x`,
      `${uuidV7(Date.UTC(2026, 10, 25)).slice(0, 14)}7${uuidV7(Date.UTC(2026, 10, 25)).slice(15, 19)}c${uuidV7(Date.UTC(2026, 10, 25)).slice(20)}`,
      'evt-000001',
      'x',
      '\n' + uuidV7(Date.UTC(2026, 10, 25)).slice(1),
    ];
    expect(idDay(ids[0])).toBe(Date.UTC(2026, 10, 25) / DAY);
    expect(idDay(ids[1])).toBe(Date.UTC(2026, 10, 25) / DAY);
    for (const id of ids) {
      const { rows } = await admin.query<{ d: number }>('SELECT service_analytics_id_day($1::text) AS d', [id]);
      expect([id, rows[0]?.d]).toEqual([id, idDay(id)]);
    }
    expect(partitionDay(partitionName(TODAY))).toBe(TODAY);
  });
});

describe('PostgreSQL events partitioned by the day of the event id (schema version 6)', () => {
  it('creates the partitions of today and the next days at start', async () => {
    await withStore(async () => {
      const days = await partitions();
      for (let d = TODAY; d <= TODAY + DAYS_AHEAD; d++) expect(days).toContain(d);
    });
  });

  it('stores a batch of a day without a partition: a recent day gets its partition, a far one and other ids go to the default partition', async () => {
    await withStore(async (store) => {
      const p = newProjectId();
      const recent = uuidV7((TODAY - 5) * DAY + 1000);
      const farPast = uuidV7((TODAY - DAYS_BACK - 40) * DAY);
      const farFuture = uuidV7((TODAY + 400) * DAY);
      const events = [recent, farPast, farFuture, 'not-a-uuid'].map((eventId, n) => makeEvent(p, n, { eventId }));
      expect((await store.write({ events, chunks: [] })).eventInserted).toEqual([true, true, true, true]);
      expect(await partitions()).toContain(TODAY - 5);
      expect(await partitions()).not.toContain(TODAY + 400);
      const home = await homes(p);
      expect(home.get(recent)).toBe(partitionName(TODAY - 5));
      expect([home.get(farPast), home.get(farFuture), home.get('not-a-uuid')]).toEqual(['events_default', 'events_default', 'events_default']);
    });
  });

  it('dedupes across partitions and processes: a resent event with another timestamp is a duplicate, whatever its day', async () => {
    const stores = [createPostgresStore({ url: database.url, poolSize: 2 }), createPostgresStore({ url: database.url, poolSize: 2 })];
    try {
      await Promise.all(stores.map((s) => s.init()));
      const p = newProjectId();
      // Ids of three days (two of them new to both processes) and ids that are not UUIDv7.
      const ids = [TODAY - 3, TODAY - 2, TODAY, TODAY - 3].map((d, k) => uuidV7(d * DAY + k)).concat(['legacy-1', 'legacy-2']);
      const first = ids.map((eventId, n) => makeEvent(p, n, { eventId }));
      // The same events again from the other process, with times a skew correction could have moved to other days.
      const again = ids.map((eventId, n) => makeEvent(p, n, { eventId, timestamp: (TODAY - 10) * DAY + n }));
      const [a, b] = await Promise.all([stores[0].write({ events: first, chunks: [] }), stores[1].write({ events: again, chunks: [] })]);
      // Each event stored by exactly one of the two writes.
      a.eventInserted.forEach((inserted, i) => expect(inserted).not.toBe(b.eventInserted[i]));
      const third = await stores[0].write({ events: again.slice(0, 3), chunks: [] });
      expect(third.eventInserted).toEqual([false, false, false]);
      const { rows } = await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE project_id = $1', [p]);
      expect(rows).toEqual([{ n: ids.length }]);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('two processes creating the partition of the same new day at once both store their events', async () => {
    const stores = [createPostgresStore({ url: database.url, poolSize: 2 }), createPostgresStore({ url: database.url, poolSize: 2 })];
    try {
      await Promise.all(stores.map((s) => s.init()));
      const p = newProjectId();
      const day = TODAY - 7;
      const results = await Promise.all(
        stores.map((s, k) => s.write({ events: [makeEvent(p, k, { eventId: uuidV7(day * DAY + k) })], chunks: [] })),
      );
      expect(results.map((r) => r.eventInserted)).toEqual([[true], [true]]);
      expect(await partitions()).toContain(day);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('retention drops the partitions of expired days whole, and keeps a partition that holds a row after the cut-off', async () => {
    // A database of its own: retention counts every project's rows.
    await withOwnDatabase(async (own, ownAdmin) => {
      const partitions = async (): Promise<number[]> => {
        const { rows } = await ownAdmin.query<{ name: string }>(
          "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass",
        );
        return rows.map((r) => partitionDay(r.name)).filter((d): d is number => d !== null);
      };
      await withStore(async (store) => {
      const p = newProjectId();
      const old = [TODAY - 20, TODAY - 20, TODAY - 19];
      const events = old.map((d, n) => makeEvent(p, n, { eventId: uuidV7(d * DAY + n), timestamp: d * DAY + n }));
      // An id of day -18 whose (corrected) time lies after the cut-off: its partition must stay.
      const late = makeEvent(p, 10, { eventId: uuidV7((TODAY - 18) * DAY), timestamp: (TODAY - 1) * DAY });
      const early = makeEvent(p, 11, { eventId: uuidV7((TODAY - 18) * DAY + 1), timestamp: (TODAY - 18) * DAY + 1 });
      const legacy = makeEvent(p, 12, { eventId: 'legacy-old', timestamp: (TODAY - 20) * DAY });
      const fresh = makeEvent(p, 13, { eventId: uuidV7(TODAY * DAY), timestamp: TODAY * DAY });
      await store.write({ events: [...events, late, early, legacy, fresh], chunks: [] });
      const before = await partitions();
      expect(before).toEqual(expect.arrayContaining([TODAY - 20, TODAY - 19, TODAY - 18]));
      // The daily rollups built: from here on, reports read those days from them, not the events.
      const range = { projectId: p, from: (TODAY - 25) * DAY, to: (TODAY + 1) * DAY, filters: {}, includeBots: false, visitorKey: 'hash' as const };
      for (let attempt = 0; attempt < 50 && (await store.reports.refreshRollups()) > 0; attempt++);
      expect((await store.reports.totals(range)).events).toBe(7);

      const deleted = await store.deleteOlderThan((TODAY - 2) * DAY);
      expect(deleted.events).toBe(5);
      const after = await partitions();
      expect(after).not.toContain(TODAY - 20);
      expect(after).not.toContain(TODAY - 19);
      expect(after).toContain(TODAY - 18);
      expect(after).toContain(TODAY);
      // A DROP fires no DELETE trigger: the days it emptied are marked as a row delete marks them,
      // so the reports, rollups or not, count only what is left.
      expect((await store.reports.totals(range)).events).toBe(2);
      const left = await store.queryEvents({ projectId: p, limit: 10 });
      expect(left.events.map((e) => e.eventId).sort()).toEqual([late.eventId, fresh.eventId].sort());
      // A late copy of an expired day's event finds no partition and goes to the default one: no failure.
      expect((await store.write({ events: [events[0]], chunks: [] })).eventInserted).toEqual([true]);
      }, own.url);
    });
  });
});

describe('schema migration to version 6', () => {
  it('moves every row of a version 5 database into the partitioned table, each to its day, and dedupes them afterwards', async () => {
    await withOwnDatabase(async (old, client) => {
      const first = createPostgresStore({ url: old.url });
      await first.init();
      const p = newProjectId();
      await first.createProject(makeProject(p));
      await first.close();
      // The version 5 table, as version 5 created it, with rows of several days and legacy ids.
      const reportColumns = REPORT_COLUMNS_V5.map((c) => `${c} TEXT COLLATE "C",`).join('\n');
      await client.query(`
        DROP TABLE events CASCADE;
        CREATE TABLE events (
          project_id TEXT COLLATE "C" NOT NULL, event_id TEXT COLLATE "C" NOT NULL, event_type TEXT COLLATE "C" NOT NULL,
          user_id TEXT COLLATE "C", session_id TEXT COLLATE "C", timestamp BIGINT NOT NULL, client_timestamp BIGINT,
          received_at BIGINT NOT NULL, properties JSONB NOT NULL, user_agent TEXT, ip_address TEXT,
          is_bot BOOLEAN NOT NULL DEFAULT false, visitor_id TEXT COLLATE "C", ${reportColumns}
          UNIQUE (project_id, event_id));
        CREATE INDEX events_by_time ON events (project_id, timestamp, event_id);
        UPDATE schema_version SET version = 5;`);
      const ids = [uuidV7((TODAY - 40) * DAY), uuidV7((TODAY - 1) * DAY), uuidV7((TODAY - 1) * DAY + 5), 'legacy-a', uuidV7((TODAY + 900) * DAY)];
      for (const [n, id] of ids.entries()) {
        await client.query(
          `INSERT INTO events (project_id, event_id, event_type, timestamp, received_at, properties, path)
           VALUES ($1, $2, 'page_view', $3, $3, $4, '/p')`,
          [p, id, (TODAY - 2) * DAY + n, JSON.stringify({ n })],
        );
      }

      const stores = [createPostgresStore({ url: old.url }), createPostgresStore({ url: old.url })];
      // Two processes upgrading at once: one migrates, the other finds it done.
      await Promise.all(stores.map((s) => s.init()));
      try {
        const version = await client.query('SELECT version FROM schema_version');
        expect(version.rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
        const kind = await client.query("SELECT relkind FROM pg_class WHERE oid = 'events'::regclass");
        expect(kind.rows).toEqual([{ relkind: 'p' }]);
        const { rows } = await client.query<{ event_id: string; home: string; id_day: number; path: string; properties: unknown }>(
          'SELECT event_id, tableoid::regclass::text AS home, id_day, path, properties FROM events WHERE project_id = $1',
          [p],
        );
        expect(rows).toHaveLength(ids.length);
        const byId = new Map(rows.map((r) => [r.event_id, r]));
        for (const [n, id] of ids.entries()) {
          expect(byId.get(id)).toMatchObject({ id_day: idDay(id), path: '/p', properties: { n } });
        }
        expect(byId.get(ids[0])?.home).toBe(partitionName(TODAY - 40));
        expect(byId.get(ids[1])?.home).toBe(partitionName(TODAY - 1));
        expect(byId.get('legacy-a')?.home).toBe('events_default');
        expect(byId.get(ids[4])?.home).toBe('events_default');
        // Every migrated event, resent, is a duplicate.
        const again = ids.map((eventId, n) => makeEvent(p, n, { eventId }));
        expect((await stores[0].write({ events: again, chunks: [] })).eventInserted).toEqual(ids.map(() => false));
        const left = await client.query("SELECT to_regclass('events_v5') AS t");
        expect(left.rows).toEqual([{ t: null }]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  });
});

describe('PostgreSQL recording chunks partitioned by the day of the session id (schema version 7)', () => {
  /** The day partitions of `recording_chunks` of the database at `client`. */
  async function recordingPartitions(client: pg.Client = admin): Promise<number[]> {
    const { rows } = await client.query<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'recording_chunks'::regclass",
    );
    return rows.map((r) => partitionDay(r.name, RECORDING_PARTITIONS)).filter((d): d is number => d !== null).sort((a, b) => a - b);
  }

  async function chunkHomes(client: pg.Client, projectId: string): Promise<Map<string, string>> {
    const { rows } = await client.query<{ session_id: string; home: string }>(
      'SELECT DISTINCT session_id, tableoid::regclass::text AS home FROM recording_chunks WHERE project_id = $1',
      [projectId],
    );
    return new Map(rows.map((r) => [r.session_id, r.home]));
  }

  it("stores each session's chunks in its day's partition, dedupes a resent chunk and replays the session whole", async () => {
    await withStore(async (store) => {
      const p = newProjectId();
      const recent = uuidV7((TODAY - 4) * DAY + 7);
      const today = uuidV7(TODAY * DAY + 7);
      const chunks = [makeChunk(p, recent, 0, 3), makeChunk(p, recent, 3, 2, { isFinal: true }), makeChunk(p, today, 0, 1), makeChunk(p, 'not-a-uuid', 0, 2)];
      expect((await store.write({ events: [], chunks })).chunkInserted).toEqual([true, true, true, true]);
      expect(await recordingPartitions()).toEqual(expect.arrayContaining([TODAY - 4, TODAY, TODAY + DAYS_AHEAD]));
      const home = await chunkHomes(admin, p);
      expect(home.get(recent)).toBe(partitionName(TODAY - 4, RECORDING_PARTITIONS));
      expect(home.get(today)).toBe(partitionName(TODAY, RECORDING_PARTITIONS));
      expect(home.get('not-a-uuid')).toBe(RECORDING_PARTITIONS.defaultPartition);
      // Sent again (a retry whose answer was lost): duplicates, in every partition.
      expect((await store.write({ events: [], chunks })).chunkInserted).toEqual([false, false, false, false]);
      const replay = await store.getRecording(p, recent);
      expect(replay?.events.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4]);
      expect((await store.getRecording(p, 'not-a-uuid'))?.events).toHaveLength(2);
      expect((await store.listSessions(p, 10)).map((s) => s.sessionId).sort()).toEqual([recent, today, 'not-a-uuid'].sort());
    });
  });

  it("retention drops a day of recordings whole, and keeps a day that holds a chunk received after the cut-off", async () => {
    await withOwnDatabase(async (own, ownAdmin) => {
      await withStore(async (store) => {
        const p = newProjectId();
        const expired = uuidV7((TODAY - 20) * DAY);
        const stillGoing = uuidV7((TODAY - 18) * DAY);
        const fresh = uuidV7(TODAY * DAY);
        const chunks = [
          makeChunk(p, expired, 0, 2, { receivedAt: (TODAY - 20) * DAY + 1 }),
          makeChunk(p, expired, 2, 2, { receivedAt: (TODAY - 20) * DAY + 2 }),
          // A session of day -18 whose last chunk came after the cut-off: its partition must stay.
          makeChunk(p, stillGoing, 0, 1, { receivedAt: (TODAY - 18) * DAY }),
          makeChunk(p, stillGoing, 1, 1, { receivedAt: (TODAY - 1) * DAY }),
          makeChunk(p, 'legacy-session', 0, 1, { receivedAt: (TODAY - 20) * DAY }),
          makeChunk(p, fresh, 0, 1, { receivedAt: TODAY * DAY }),
        ];
        await store.write({ events: [], chunks });
        expect(await recordingPartitions(ownAdmin)).toEqual(expect.arrayContaining([TODAY - 20, TODAY - 18]));

        const deleted = await store.deleteOlderThan((TODAY - 2) * DAY);
        expect(deleted.chunks).toBe(4);
        const after = await recordingPartitions(ownAdmin);
        expect(after).not.toContain(TODAY - 20);
        expect(after).toEqual(expect.arrayContaining([TODAY - 18, TODAY]));
        expect(await store.getRecording(p, expired)).toBeNull();
        expect(await store.getRecording(p, 'legacy-session')).toBeNull();
        expect((await store.getRecording(p, stillGoing))?.events.map((e) => (e.data as { i: number }).i)).toEqual([1]);
        expect((await store.getRecording(p, fresh))?.events).toHaveLength(1);
        // A late chunk of an expired day finds no partition and goes to the default one: no failure.
        expect((await store.write({ events: [], chunks: [chunks[0]] })).chunkInserted).toEqual([true]);
      }, own.url);
    });
  });

  it('the upgrade from version 6 moves every chunk into the partitioned table, each to its session\'s day, and dedupes them afterwards', async () => {
    await withOwnDatabase(async (old, client) => {
      const first = createPostgresStore({ url: old.url });
      await first.init();
      await first.close();
      // The version 6 table, as version 6 created it.
      await client.query(`
        DROP TABLE recording_chunks CASCADE;
        CREATE TABLE recording_chunks (
          project_id TEXT COLLATE "C" NOT NULL, session_id TEXT COLLATE "C" NOT NULL, event_offset DOUBLE PRECISION NOT NULL,
          events JSONB NOT NULL, event_count INTEGER NOT NULL, duration DOUBLE PRECISION NOT NULL, start_url TEXT, user_id TEXT,
          is_final BOOLEAN NOT NULL, received_at BIGINT NOT NULL,
          UNIQUE (project_id, session_id, event_offset));
        CREATE INDEX recording_chunks_by_received ON recording_chunks (received_at);
        UPDATE schema_version SET version = 6;`);
      const p = newProjectId();
      const sessions = [uuidV7((TODAY - 40) * DAY), uuidV7((TODAY - 1) * DAY), 'legacy-s'];
      const chunks = sessions.flatMap((s) => [makeChunk(p, s, 0, 2), makeChunk(p, s, 2, 1, { isFinal: true })]);
      for (const c of chunks) {
        await client.query(
          `INSERT INTO recording_chunks (project_id, session_id, event_offset, events, event_count, duration, start_url, user_id, is_final, received_at)
           VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, $10)`,
          [c.projectId, c.sessionId, c.eventOffset, c.eventsJson, c.eventCount, c.duration, c.startUrl, c.userId, c.isFinal, c.receivedAt],
        );
      }

      const stores = [createPostgresStore({ url: old.url }), createPostgresStore({ url: old.url })];
      // Two processes upgrading at once: one migrates, the other finds it done.
      await Promise.all(stores.map((s) => s.init()));
      try {
        expect((await client.query('SELECT version FROM schema_version')).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
        expect((await client.query("SELECT relkind FROM pg_class WHERE oid = 'recording_chunks'::regclass")).rows).toEqual([{ relkind: 'p' }]);
        const home = await chunkHomes(client, p);
        expect(home.get(sessions[0])).toBe(partitionName(TODAY - 40, RECORDING_PARTITIONS));
        expect(home.get(sessions[1])).toBe(partitionName(TODAY - 1, RECORDING_PARTITIONS));
        expect(home.get('legacy-s')).toBe(RECORDING_PARTITIONS.defaultPartition);
        for (const s of sessions) expect((await stores[1].getRecording(p, s))?.events.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2]);
        expect((await stores[0].write({ events: [], chunks })).chunkInserted).toEqual(chunks.map(() => false));
        expect((await client.query("SELECT to_regclass('recording_chunks_v6') AS t")).rows).toEqual([{ t: null }]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });
  });
});
