import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject, writeProject } from '../../../test-support/server/report-fixtures.js';
import { uuidV7 } from '../../ids.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import type { ReportQuery } from '../report-store.js';
import type { StoredEvent } from '../event-store.js';
import { compactPostgresAggregates } from './postgres-aggregates.js';
import { GRAIN_HOUR, SKETCH_COLUMNS } from '../aggregates/aggregate-schema.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { describeAggregates } from '../../../test-support/store/aggregate.contract.js';
import { postgresLocation } from '../../../test-support/store/database-locations.js';
import { createPostgresStore } from './postgres-store.js';

let database: TestDatabase;
let nodeMerged: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
  nodeMerged = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
  await nodeMerged?.drop();
});

// The test server has the hll extension (the test command installs it): the store lets it merge
// the reports' sketches. The same contract with Node merging them, as where it is not installed.
describeAggregates('postgres', async () => postgresLocation(database.url));
describeAggregates('postgres, sketches merged in Node', async () => postgresLocation(nodeMerged.url, { hllExtension: false }));

describe('postgres: aggregate parts', () => {
  it('merges each key parts into one row, and the reports answer the same before and after', async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2026, 1, 2);
    const store = createPostgresStore({ url: database.url, poolSize: 4, compactEveryMs: 3_600_000 });
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    await store.init();
    try {
      // Small groups: every key gets many parts.
      await writeProject(store, { projectId, start, days: 2, sessions: 20, seed: 21 }, 25);
      const q: ReportQuery = { projectId, from: start + 3_600_000 + 7, to: start + 2 * 86_400_000, filters: {}, includeBots: true, visitorKey: 'anonymous' };
      const panels = async () => ({
        totals: await store.reports.totals(q),
        series: await store.reports.series(q, 3_600_000),
        top: await store.reports.top(q, 'page', 10),
        sessions: await store.reports.sessions(q),
      });
      const before = await panels();
      const partsPerKey = async (table: 'agg_values' | 'agg_sessions' | 'agg_session_days', key: string) =>
        Number(
          (await pool.query(`SELECT max(n) AS n FROM (SELECT count(*) AS n FROM ${table} WHERE project_id = $1 GROUP BY ${key}) c`, [projectId])).rows[0]?.n,
        );
      expect(await partsPerKey('agg_values', 'dim, grain, bucket, value, is_bot')).toBeGreaterThan(1);
      expect(await partsPerKey('agg_sessions', 'hour, session_id, is_bot')).toBeGreaterThan(1);
      expect(await partsPerKey('agg_session_days', 'day, last_day, with_bots')).toBeGreaterThan(1);
      const mark = await compactPostgresAggregates(pool, { values: 0, sessions: 0, sessionDays: 0 });
      expect(await partsPerKey('agg_values', 'dim, grain, bucket, value, is_bot')).toBe(1);
      expect(await partsPerKey('agg_sessions', 'hour, session_id, is_bot')).toBe(1);
      expect(await partsPerKey('agg_session_days', 'day, last_day, with_bots')).toBe(1);
      expect(await panels()).toEqual(before);
      // A round from the new mark finds nothing to merge; new commits add parts that the next round merges.
      await compactPostgresAggregates(pool, mark);
      await writeProject(store, { projectId, start, days: 2, sessions: 5, seed: 22, idPrefix: 'more' }, 25);
      expect(await partsPerKey('agg_values', 'dim, grain, bucket, value, is_bot')).toBeGreaterThan(1);
      const after = await panels();
      await compactPostgresAggregates(pool, mark);
      expect(await partsPerKey('agg_values', 'dim, grain, bucket, value, is_bot')).toBe(1);
      expect(await panels()).toEqual(after);
    } finally {
      await store.close();
      await pool.end();
    }
  });
});

describe('postgres: the compaction across restarts', () => {
  it('goes on from where the last process got to: the parts since are merged, none before is read again', async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2026, 1, 5);
    const fresh = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: fresh.url, max: 2 });
    const tables = ['agg_values', 'agg_sessions', 'agg_session_days'] as const;
    const saved = async () => {
      const row = (await pool.query('SELECT values_part, sessions_part, session_days_part FROM agg_compaction')).rows[0] as Record<string, string> | undefined;
      return [row?.values_part, row?.sessions_part, row?.session_days_part].map((n) => Number(n ?? 0));
    };
    const newest = async () => Promise.all(tables.map(async (t) => Number((await pool.query(`SELECT max(part) AS n FROM ${t}`)).rows[0]?.n ?? 0)));
    const manyParts = async () =>
      (await pool.query('SELECT count(*) AS n FROM agg_values WHERE project_id = $1 GROUP BY dim, grain, bucket, value, is_bot HAVING count(*) > 1', [projectId])).rows.map((row) =>
        Number(row.n),
      );
    // Until each saved mark passes its table's newest part of now: two rounds after it was committed.
    // A bound on a round that never comes, not on its speed: 10 s ran out once under a full test run beside a bench.
    const compactedPast = async (parts: number[]) => {
      const passed = async () => (await saved()).every((mark, i) => mark >= (parts[i] as number));
      for (let i = 0; i < 1200 && !(await passed()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await saved()).toEqual((await saved()).map((mark, i) => Math.max(mark, parts[i] as number)));
    };
    const withStore = async (compactEveryMs: number, work: (store: ReturnType<typeof createPostgresStore>) => Promise<void>) => {
      const store = createPostgresStore({ url: fresh.url, poolSize: 4, compactEveryMs });
      await store.init();
      try {
        await work(store);
      } finally {
        await store.close();
      }
    };
    try {
      await withStore(20, async (store) => {
        await writeProject(store, { projectId, start, days: 1, sessions: 10, seed: 31 }, 25);
        await compactedPast(await newest());
      });
      expect(await manyParts()).toEqual([]);
      // A second part of a key under a number the saved mark has passed (one the compaction freed):
      // a later start must not read that far back.
      const [mark] = await saved();
      const below = await pool.query<{ part: string }>('SELECT min(g) AS part FROM generate_series(1, $1::bigint) g WHERE NOT EXISTS (SELECT 1 FROM agg_values WHERE part = g)', [mark]);
      await pool.query(
        `INSERT INTO agg_values (part, project_id, dim, grain, bucket, value, is_bot, events, page_views) OVERRIDING SYSTEM VALUE
         SELECT $2, project_id, dim, grain, bucket, value, is_bot, 0, 0 FROM agg_values WHERE project_id = $1 AND dim = '' AND grain = ${GRAIN_HOUR} ORDER BY part LIMIT 1`,
        [projectId, below.rows[0]?.part],
      );
      // The next process's commits, left by a close before a round: parts above the mark, the next
      // day's hours and some of the same week rows (none of the first day's hours).
      await withStore(3_600_000, async (store) => {
        await writeProject(store, { projectId, start: start + 86_400_000, days: 1, sessions: 20, seed: 32, idPrefix: 'second' }, 5);
      });
      expect(Math.max(...(await manyParts()))).toBeGreaterThan(2);
      await withStore(20, async () => compactedPast(await newest()));
      // Only the key given a part by hand below the mark keeps two.
      expect(await manyParts()).toEqual([2]);
      // A mark past a table's newest part is of a table made again since (its parts numbered from
      // 1 again): that table's round starts from the first part.
      const stale = 1_000_000_000_000;
      await pool.query('UPDATE agg_compaction SET values_part = $1', [stale]);
      await withStore(20, async () => {
        // Until a round saved a mark of its own.
        for (let i = 0; i < 400 && (await saved())[0] === stale; i++) await new Promise((resolve) => setTimeout(resolve, 25));
        expect((await saved())[0]).toBeLessThan(stale);
      });
      expect(await manyParts()).toEqual([]);
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });
});

describe('postgres: session summaries from two processes', () => {
  it('counts a session once when two stores write its events at the same time', async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2026, 1, 2);
    const stores = [0, 1].map(() => createPostgresStore({ url: database.url, poolSize: 4, compactEveryMs: 3_600_000 }));
    const pool = new pg.Pool({ connectionString: database.url, max: 2 });
    try {
      for (const store of stores) await store.init();
      // The same sessions' events, each store a share of every session's, written in small groups at once.
      const events = [...generateProject({ projectId, start, days: 2, sessions: 30, seed: 23 })];
      const shares = [events.filter((_, i) => i % 2 === 0), events.filter((_, i) => i % 2 === 1)];
      await Promise.all(
        stores.map(async (store, k) => {
          const mine = shares[k] ?? [];
          for (let i = 0; i < mine.length; i += 5) await store.write({ events: mine.slice(i, i + 5), chunks: [] });
        }),
      );
      for (const includeBots of [false, true]) {
        const q: ReportQuery = { projectId, from: start, to: start + 2 * 86_400_000, filters: {}, includeBots, visitorKey: 'anonymous' };
        const { rows } = await pool.query(
          `WITH s AS (SELECT session_id, max(timestamp) - min(timestamp) AS duration, count(*) FILTER (WHERE event_type = 'page_view') AS pv
             FROM events WHERE project_id = $1 AND timestamp >= $2 AND timestamp < $3 AND session_id IS NOT NULL AND ($4 OR NOT is_bot) GROUP BY session_id)
           SELECT count(*) AS sessions, count(*) FILTER (WHERE pv <= 1) AS bounces, COALESCE(sum(duration), 0) AS duration, COALESCE(sum(pv), 0) AS pv FROM s`,
          [projectId, q.from, q.to, includeBots],
        );
        const row = rows[0] as Record<string, string>;
        expect(await stores[0]?.reports.sessions(q)).toEqual({
          sessions: Number(row.sessions),
          bounces: Number(row.bounces),
          totalDurationMs: Number(row.duration),
          pageViews: Number(row.pv),
        });
      }
    } finally {
      for (const store of stores) await store.close();
      await pool.end();
    }
  });
});

describe('postgres: more sessions than the lock table holds', () => {
  it('builds the aggregates at open, and retention counts the sessions again, past max_locks_per_transaction', async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2026, 1, 2);
    const first = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000 });
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    // One event per session: 12,000 sessions, past the 64 × 100 locks a default server's table holds.
    const model = [...generateProject({ projectId, start, days: 1, sessions: 1, seed: 24 })].find((e) => e.eventType === 'page_view') as StoredEvent;
    const events = Array.from({ length: 12_000 }, (_, i): StoredEvent => ({ ...model, eventId: uuidV7(start + i), sessionId: `many-${i}`, timestamp: start + i * 1000, receivedAt: start + i * 1000 }));
    try {
      await first.init();
      for (let i = 0; i < events.length; i += 2000) await first.write({ events: events.slice(i, i + 2000), chunks: [] });
      await first.close();
      await pool.query('DROP TABLE agg_meta');
      const store = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000 });
      await store.init();
      try {
        const q: ReportQuery = { projectId, from: start, to: start + 86_400_000, filters: {}, includeBots: true, visitorKey: 'anonymous' };
        expect((await store.reports.sessions(q)).sessions).toBe(12_000);
        await store.deleteOlderThan(start + 6_000 * 1000);
        expect((await store.reports.sessions(q)).sessions).toBe(6_000);
      } finally {
        await store.close();
      }
    } finally {
      await pool.end();
    }
  });
});

describe('postgres: the aggregates build at open', () => {
  it('says when it builds the aggregates from the events, and not when they are built already', async () => {
    const told: string[] = [];
    const open = () => createPostgresStore({ url: database.url, poolSize: 2, onAggregatesBuild: (phase) => told.push(phase) });
    const first = open();
    await first.init();
    await writeProject(first, { projectId: newProjectId(), start: Date.UTC(2026, 1, 2), days: 1, sessions: 5, seed: 32 }, 100);
    await first.close();
    expect(told).toEqual([]);
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    await pool.query('DROP TABLE agg_meta');
    await pool.end();
    const second = open();
    await second.init();
    await second.close();
    expect(told).toEqual(['building', 'built']);
  });
});

describe('postgres: aggregates under retention', () => {
  // Last in the file: its cut-off, after tomorrow, deletes every event of the database.
  it('drops the aggregates of a project whose every event went with a dropped day partition', async () => {
    const projectId = newProjectId();
    const start = Date.UTC(2025, 5, 2);
    const store = createPostgresStore({ url: database.url, poolSize: 4, compactEveryMs: 3_600_000 });
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    await store.init();
    try {
      // Ids made now: the events sit in today's day partition (partitions exist around today only),
      // which a cut-off after tomorrow drops whole, as it holds nothing newer.
      const events = [...generateProject({ projectId, start, days: 1, sessions: 10, seed: 23 })].map((e) => ({ ...e, eventId: uuidV7() }));
      await store.write({ events, chunks: [] });
      const rows = async () =>
        Number((await pool.query('SELECT (SELECT count(*) FROM agg_values WHERE project_id = $1) + (SELECT count(*) FROM agg_sessions WHERE project_id = $1) AS n', [projectId])).rows[0]?.n);
      expect(await rows()).toBeGreaterThan(0);
      const deleted = await store.deleteOlderThan((Math.floor(Date.now() / 86_400_000) + 2) * 86_400_000);
      expect(deleted.events).toBeGreaterThanOrEqual(events.length);
      expect(Number((await pool.query('SELECT count(*) AS n FROM events WHERE project_id = $1', [projectId])).rows[0]?.n)).toBe(0);
      expect(await rows()).toBe(0);
      const q: ReportQuery = { projectId, from: start, to: start + 86_400_000, filters: {}, includeBots: true, visitorKey: 'anonymous' };
      expect(await store.reports.totals(q)).toEqual({ events: 0, pageViews: 0, visitors: 0, sessions: 0 });
    } finally {
      await store.close();
      await pool.end();
    }
  });
});

describe('postgres: the sketch columns', () => {
  it('are stored out of line without compression, and a database of the version before gets them so at its next open', async () => {
    const fresh = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: fresh.url, max: 1 });
    const storage = async () =>
      (
        await pool.query<{ s: string }>("SELECT attstorage AS s FROM pg_attribute WHERE attrelid = 'agg_values'::regclass AND attname = ANY($1::text[]) ORDER BY attnum", [
          SKETCH_COLUMNS,
        ])
      ).rows.map((row) => row.s);
    const open = async () => {
      const store = createPostgresStore({ url: fresh.url, poolSize: 1 });
      await store.init();
      await store.close();
    };
    try {
      await open();
      expect(await storage()).toEqual(SKETCH_COLUMNS.map(() => 'e'));
      // As a version before this one left them: compressed where PostgreSQL could.
      await pool.query(`ALTER TABLE agg_values ${SKETCH_COLUMNS.map((c) => `ALTER COLUMN ${c} SET STORAGE EXTENDED`).join(', ')}`);
      expect(await storage()).toEqual(SKETCH_COLUMNS.map(() => 'x'));
      await open();
      expect(await storage()).toEqual(SKETCH_COLUMNS.map(() => 'e'));
    } finally {
      await pool.end();
      await fresh.drop();
    }
  });
});
