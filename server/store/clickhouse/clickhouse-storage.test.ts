import { describe, expect, it } from 'vitest';
import { chdb, chdbStore, newClickHouseDatabase } from '../../../test-support/store/clickhouse-chdb.js';
import { T0, makeChunk, makeEvent, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { eventToRow } from './clickhouse-rows.js';
import { tablesOf } from './clickhouse-schema.js';

const { transport } = chdb();

/** The months (partitions) that hold rows of a table. */
const monthsOf = async (database: string, table: string) =>
  (
    await transport.query('SELECT DISTINCT partition_id FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active AND rows > 0 ORDER BY partition_id', {
      db: database,
      t: table,
    })
  ).map((row) => String(row.partition_id));

describe('clickhouse: dedupe across processes, retention and erasure', () => {
  it('drops the months before the cut-off whole, deletes rows only in the month it falls in, and forgets the deleted ids', async () => {
    const database = newClickHouseDatabase();
    const store = chdbStore({ database });
    await store.init();
    try {
      const p = newProjectId();
      const at = (month: number, day: number) => Date.UTC(2026, month, day);
      await store.write({
        events: [makeEvent(p, 1, { timestamp: at(0, 5) }), makeEvent(p, 2, { timestamp: at(0, 20) }), makeEvent(p, 3, { timestamp: at(1, 3) }), makeEvent(p, 4, { timestamp: at(1, 25) }), makeEvent(p, 5, { timestamp: at(2, 1) })],
        chunks: [makeChunk(p, 's', 0, 1, { receivedAt: at(0, 7) }), makeChunk(p, 's', 1, 1, { receivedAt: at(1, 20) })],
      });
      expect(await monthsOf(database, 'events')).toEqual(['202601', '202602', '202603']);
      expect(await monthsOf(database, 'recording_chunks')).toEqual(['202601', '202602']);

      expect(await store.deleteOlderThan(at(1, 10))).toEqual({ events: 3, chunks: 1 });
      // January's partitions are gone (dropped, not rewritten); February keeps its later row.
      expect(await monthsOf(database, 'events')).toEqual(['202602', '202603']);
      expect(await monthsOf(database, 'event_ids')).toEqual(['202602', '202603']);
      expect(await monthsOf(database, 'recording_chunks')).toEqual(['202602']);
      expect((await store.queryEvents({ projectId: p, limit: 10 })).events.map((e) => e.timestamp)).toEqual([at(2, 1), at(1, 25)]);
      expect(await store.deleteOlderThan(at(1, 10))).toEqual({ events: 0, chunks: 0 });
      // A deleted event sent again is stored again, as on the other stores: its id went with it.
      expect((await store.write({ events: [makeEvent(p, 3, { timestamp: at(1, 3) }), makeEvent(p, 4, { timestamp: at(1, 25) })], chunks: [] })).eventInserted).toEqual([true, false]);
    } finally {
      await store.close();
    }
  });

  it("forgets an erased user's event ids, so that events sent again after the erasure are stored", async () => {
    const store = chdbStore();
    await store.init();
    try {
      const p = newProjectId();
      await store.write({ events: [makeEvent(p, 1, { userId: 'alice' }), makeEvent(p, 2, { userId: 'bob' })], chunks: [] });
      expect(await store.deleteUser(p, 'alice')).toEqual({ events: 1, recordings: 0 });
      expect((await store.write({ events: [makeEvent(p, 1, { userId: 'alice' }), makeEvent(p, 2, { userId: 'bob' })], chunks: [] })).eventInserted).toEqual([true, false]);
    } finally {
      await store.close();
    }
  });

  it('counts once an event that two processes stored at the same instant, before and after the merge', async () => {
    const database = newClickHouseDatabase();
    const store = chdbStore({ database });
    await store.init();
    try {
      const p = newProjectId();
      const event = makeEvent(p, 1);
      await store.write({ events: [event, makeEvent(p, 2)], chunks: [] });
      // Another process's copy, inserted past its own check at the same instant (no check sees the other).
      await transport.insert(tablesOf(database).events, [eventToRow(event, event.eventId)]);
      const q = { projectId: p, from: T0, to: T0 + 1000, filters: {}, includeBots: false, visitorKey: 'anonymous' as const };
      const seen = async () => ({
        listed: (await store.queryEvents({ projectId: p, limit: 10 })).events.length,
        exported: (await store.exportEvents({ projectId: p, limit: 10 })).length,
        counted: (await store.reports.totals(q)).events,
      });
      expect(await seen()).toEqual({ listed: 2, exported: 2, counted: 2 });
      await transport.command(`OPTIMIZE TABLE ${tablesOf(database).events} FINAL`);
      expect(await seen()).toEqual({ listed: 2, exported: 2, counted: 2 });
      expect((await transport.query(`SELECT count() AS n FROM ${tablesOf(database).events}`))[0]?.n).toBe(2);
    } finally {
      await store.close();
    }
  });
});
