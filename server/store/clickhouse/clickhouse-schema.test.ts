import { describe, expect, it } from 'vitest';
import { chdb, chdbStore, newClickHouseDatabase, newConfigStore } from '../../../test-support/store/clickhouse-chdb.js';
import { T0, eventId, makeChunk, makeEvent, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { CLICKHOUSE_SCHEMA_VERSION, checkDatabaseName, tablesOf } from './clickhouse-schema.js';
import { schemaVersionOf } from './clickhouse-migrate.js';

const { transport } = chdb();

/** The skip indexes of the database's `events`. */
const indexesOf = async (database: string) =>
  (await transport.query('SELECT name FROM system.data_skipping_indices WHERE database = {db:String} AND table = {t:String} ORDER BY name', { db: database, t: 'events' })).map(
    (row) => String(row.name),
  );

describe('clickhouse: schema and migrations', () => {
  it('creates a new database at the current version, and opens it again without changing it', async () => {
    const database = newClickHouseDatabase();
    const config = newConfigStore();
    const first = chdbStore({ database, config });
    await first.init();
    expect(await schemaVersionOf(transport, tablesOf(database))).toBe(CLICKHOUSE_SCHEMA_VERSION);
    expect(await indexesOf(database)).toEqual(['events_by_session', 'events_by_user']);
    const p = newProjectId();
    await first.write({ events: [makeEvent(p, 1)], chunks: [makeChunk(p, 's', 0, 2)] });
    await first.close();
    const second = chdbStore({ database, config: newConfigStore() });
    await second.init();
    try {
      // The data stays, and dedupe reads what the first store wrote.
      expect((await second.write({ events: [makeEvent(p, 1), makeEvent(p, 2)], chunks: [makeChunk(p, 's', 0, 2)] })).eventInserted).toEqual([false, true]);
      const versions = await transport.query(`SELECT version FROM ${tablesOf(database).schemaVersion} ORDER BY version`);
      expect(versions.map((row) => Number(row.version))).toEqual([1, 2]);
    } finally {
      await second.close();
    }
  });

  it('migrates a version 1 database: keeps its events and recordings, adds the indexes', async () => {
    const database = newClickHouseDatabase();
    const old = chdbStore({ database, schemaVersion: 1 });
    await old.init();
    const p = newProjectId();
    await old.write({ events: [makeEvent(p, 1, { userId: 'alice' }), makeEvent(p, 2)], chunks: [makeChunk(p, 's', 0, 3)] });
    await old.close();
    expect(await schemaVersionOf(transport, tablesOf(database))).toBe(1);
    expect(await indexesOf(database)).toEqual([]);

    const store = chdbStore({ database });
    await store.init();
    try {
      expect(await schemaVersionOf(transport, tablesOf(database))).toBe(CLICKHOUSE_SCHEMA_VERSION);
      expect(await indexesOf(database)).toEqual(['events_by_session', 'events_by_user']);
      expect((await store.queryEvents({ projectId: p, userId: 'alice', limit: 10 })).events.map((e) => e.eventId)).toEqual([eventId(1)]);
      expect((await store.getRecording(p, 's'))?.events).toHaveLength(3);
      expect((await store.write({ events: [makeEvent(p, 2)], chunks: [] })).eventInserted).toEqual([false]);
    } finally {
      await store.close();
    }
  });

  it('lets two stores start on one new database at once, as two processes would', async () => {
    const database = newClickHouseDatabase();
    const a = chdbStore({ database });
    const b = chdbStore({ database });
    await Promise.all([a.init(), b.init()]);
    try {
      expect(await schemaVersionOf(transport, tablesOf(database))).toBe(CLICKHOUSE_SCHEMA_VERSION);
      const p = newProjectId();
      await a.write({ events: [makeEvent(p, 1)], chunks: [] });
      expect((await b.write({ events: [makeEvent(p, 1)], chunks: [] })).eventInserted).toEqual([false]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('refuses a database of a newer version than it knows, and a database name that would need quoting', async () => {
    const database = newClickHouseDatabase();
    const store = chdbStore({ database });
    await store.init();
    await store.close();
    await transport.insert(tablesOf(database).schemaVersion, [{ version: 99 }]);
    await expect(chdbStore({ database }).init()).rejects.toThrow(/schema version 99/);
    expect(() => checkDatabaseName('events; DROP')).toThrow(/letters, digits/);
    expect(checkDatabaseName('service_analytics')).toBe('service_analytics');
  });

  it('answers NOT_OPEN before init() and after close(), and closes its configuration store with it', async () => {
    const store = chdbStore();
    await expect(store.queryEvents({ projectId: 'p', limit: 1 })).rejects.toMatchObject({ code: 'NOT_OPEN' });
    await store.init();
    await store.close();
    await expect(store.reports.totals({ projectId: 'p', from: T0, to: T0 + 1, filters: {}, includeBots: false, visitorKey: 'anonymous' })).rejects.toMatchObject({
      code: 'NOT_OPEN',
    });
    await expect(store.listProjects()).rejects.toMatchObject({ code: 'NOT_OPEN' });
  });
});
