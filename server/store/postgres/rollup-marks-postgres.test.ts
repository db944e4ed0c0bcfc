import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import type { EventStore } from '../event-store.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createPostgresStore } from './postgres-store.js';
import { POSTGRES_DIALECT } from '../reports/dialect.js';
import { createPostgresRollupRefresh } from '../reports/rollup-refresh.js';

/*
 * How PostgreSQL marks days for the rollups (rollup-schema.ts, docs/decisions.md "Daily rollups"):
 * writers of one day never wait for each other's marks, and a refresh that reads a day while a
 * commit to it is in flight leaves the day marked. The rollups' exactness as a whole is the
 * contract's (rollup.contract.ts).
 */

const DAY = 86_400_000;
/** A past day, refreshed here by the tests' own refresh: no store is open then, so no background refresher takes it. */
const START = Date.UTC(2026, 0, 5);
/** A day after today, which a store's background refresher leaves alone. */
const LATER = Date.UTC(2100, 0, 5);

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 4 });
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const dirtyDays = async (projectId: string) =>
  (await pool.query<{ day: number }>('SELECT day FROM rollup_dirty WHERE project_id = $1 ORDER BY day', [projectId])).rows.map((row) => Number(row.day));

/**
 * A transaction on its own connection that inserts one event at `timestamp` (its id a UUIDv7 of
 * that time) and waits to be ended. Each test has the store write first: a store's first write
 * may create day partitions, which waits for every open writer of the default partition.
 */
async function openInsert(projectId: string, n: number, timestamp: number) {
  const hex = timestamp.toString(16).padStart(12, '0');
  const eventId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-${n.toString(16).padStart(12, '0')}`;
  const client = await pool.connect();
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO events (project_id, event_id, event_type, timestamp, received_at, properties, is_bot, id_day)
     VALUES ($1, $2, 'purchase', $3, $3, '{}', false, service_analytics_id_day($2))`,
    [projectId, eventId, timestamp],
  );
  return {
    async end(how: 'COMMIT' | 'ROLLBACK') {
      await client.query(how);
      client.release();
    },
  };
}

/** Resolves once a session of this database waits for an advisory lock (the refresh, for the day's marks). */
async function refreshWaits(): Promise<void> {
  for (;;) {
    const waiting = await pool.query(
      "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    );
    if (waiting.rowCount !== 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function withStore(body: (store: EventStore) => Promise<void>): Promise<void> {
  const store = createPostgresStore({ url: database.url, poolSize: 4 });
  await store.init();
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

/** Writes a day of events at START through a store, closed again so that no background refresher runs. */
async function writeAndClose(projectId: string, seed: number): Promise<void> {
  await withStore(async (store) => {
    await store.write({ events: [...generateProject({ projectId, start: START, days: 1, sessions: 5, seed })], chunks: [] });
  });
}

describe('postgres: rollup marks', () => {
  it('lets a group commit mark a day while another transaction that marked it is still open', async () => {
    const projectId = newProjectId();
    await withStore(async (store) => {
      const events = [...generateProject({ projectId, start: LATER, days: 1, sessions: 10, seed: 1 })];
      await store.write({ events: events.slice(0, 10), chunks: [] });
      const open = await openInsert(projectId, 1, LATER + 1000);
      try {
        // With one counter row per day, this write waited for the open transaction to end.
        const result = await store.write({ events: events.slice(10), chunks: [] });
        expect(result.eventInserted.every(Boolean)).toBe(true);
      } finally {
        await open.end('COMMIT');
      }
    });
    expect(await dirtyDays(projectId)).toEqual([LATER / DAY]);
  });

  it('keeps a day marked when a commit to it lands while its refresh computes', async () => {
    const projectId = newProjectId();
    await writeAndClose(projectId, 2);
    const refresh = createPostgresRollupRefresh(pool, POSTGRES_DIALECT);
    const open = await openInsert(projectId, 2, START + 2000);
    // The refresh's snapshot does not see the open insert; it then waits for the day's mark lock.
    const refreshing = refresh(START / DAY + 1);
    await refreshWaits();
    await open.end('COMMIT');
    expect(await refreshing).toEqual({ projectId, day: START / DAY, changed: true });
    expect(await dirtyDays(projectId)).toEqual([START / DAY]);
    // The next refresh sees the late event and clears the day.
    expect(await refresh(START / DAY + 1)).toEqual({ projectId, day: START / DAY });
    expect(await dirtyDays(projectId)).toEqual([]);
    const marks = await pool.query('SELECT 1 FROM rollup_marks WHERE project_id = $1', [projectId]);
    expect(marks.rowCount).toBe(0);
  });

  it('clears a day whose marking transaction rolled back while its refresh waited', async () => {
    const projectId = newProjectId();
    await writeAndClose(projectId, 3);
    const refresh = createPostgresRollupRefresh(pool, POSTGRES_DIALECT);
    const open = await openInsert(projectId, 3, START + 3000);
    const refreshing = refresh(START / DAY + 1);
    await refreshWaits();
    await open.end('ROLLBACK');
    expect(await refreshing).toEqual({ projectId, day: START / DAY });
    expect(await dirtyDays(projectId)).toEqual([]);
  });

  it('deletes the marks of the days a refresh leaves, which stay marked', async () => {
    const projectId = newProjectId();
    const events = [...generateProject({ projectId, start: LATER, days: 1, sessions: 20, seed: 4 })];
    await withStore(async (store) => {
      for (let i = 0; i < events.length; i += 10) await store.write({ events: events.slice(i, i + 10), chunks: [] });
    });
    const count = async () => Number((await pool.query('SELECT count(*) AS n FROM rollup_marks WHERE project_id = $1', [projectId])).rows[0]?.n);
    expect(await count()).toBeGreaterThan(1);
    // A refresh of the days before LATER: this project has none, and the marks of LATER go.
    const refresh = createPostgresRollupRefresh(pool, POSTGRES_DIALECT);
    while ((await refresh(LATER / DAY)) !== null);
    expect(await count()).toBe(0);
    expect(await dirtyDays(projectId)).toEqual([LATER / DAY]);
  });
});
