import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { WEEK_DAYS } from '../aggregates/aggregate-schema.js';
import { type Beside, erasePostgresUser } from '../reports/rollup-erasure.js';
import { besideOn } from './postgres-beside.js';
import { erasePostgresUserData } from './postgres-erasure.js';
import { createPostgresStore, type PostgresEventStore } from './postgres-store.js';

/*
 * The rows reports kept of an erased user's days go beside the erasure, on a connection of their
 * own (`reports/rollup-erasure.ts`, `postgres-beside.ts`), or in the erasure's own transaction when
 * no connection is free or that work fails: either way none is left once the erasure commits, and
 * the kept rows of other days stay. The days and keys that work starts from are read before the
 * events' delete; an event of the user that commits between the two is taken from the delete's
 * rows. What those rows are and which days hold a user's keys is the contract suites' part
 * (`rollup.contract.ts`).
 */

let database: TestDatabase;
let store: PostgresEventStore;

beforeAll(async () => {
  database = await createTestDatabase();
  // No refresh in the background: it would delete the kept rows of the days the writes mark, which the tests put there.
  store = createPostgresStore({ url: database.url, poolSize: 2, compactEveryMs: 3_600_000, backgroundRollups: false, keepFiltersAhead: false });
  await store.init();
});

afterAll(async () => {
  await store?.close();
  await database?.drop();
});

const DAY = 86_400_000;
/** The first day of one of the aggregates' weeks (each starts at a day number that is a multiple of seven). */
const USER_DAY = WEEK_DAYS * 2930;
/** A day of another week, which only another user's events are on. */
const OTHER_DAY = USER_DAY + 10;

/** How long the tests that need the work beside the erasure let it wait for its connection, ms (a new one, on a machine that may be slow). */
const BESIDE_WAIT_MS = 10_000;

const weekOf = (day: number) => Math.floor(day / WEEK_DAYS);

/** The `n`th second of an hour into `day`. */
const at = (day: number, n: number) => day * DAY + 3_600_000 + n * 1000;

/**
 * A project with the erased user's events on {@link USER_DAY} and another user's on both days, and
 * kept rows of each day and week. With `rollups`, an anonymous event of `sharedSession` on
 * {@link OTHER_DAY} too, and the days' rollups built before the kept rows are put.
 */
async function projectWithKeptRows(rollups = false, sharedSession = 's-shared'): Promise<string> {
  const projectId = newProjectId();
  await store.createProject(makeProject(projectId));
  await store.write({
    events: [
      makeEvent(projectId, 1, { userId: 'erased', sessionId: 's-erased', visitorId: 'v-erased', timestamp: at(USER_DAY, 1), receivedAt: at(USER_DAY, 1) }),
      makeEvent(projectId, 2, { userId: 'erased', sessionId: 's-erased', visitorId: 'v-erased', timestamp: at(USER_DAY, 2), receivedAt: at(USER_DAY, 2) }),
      makeEvent(projectId, 3, { userId: 'kept', sessionId: 's-kept', visitorId: 'v-kept', timestamp: at(USER_DAY, 3), receivedAt: at(USER_DAY, 3) }),
      makeEvent(projectId, 4, { userId: 'kept', sessionId: 's-kept-2', visitorId: 'v-kept-2', timestamp: at(OTHER_DAY, 4), receivedAt: at(OTHER_DAY, 4) }),
      ...(rollups ? [makeEvent(projectId, 5, { userId: null, sessionId: sharedSession, visitorId: 'v-anonymous', timestamp: at(OTHER_DAY, 5), receivedAt: at(OTHER_DAY, 5) })] : []),
    ],
    chunks: [],
  });
  if (rollups) while ((await store.reports.refreshRollups()) > 0);
  await withPool(1, async (pool) => {
    for (const day of [USER_DAY, OTHER_DAY]) {
      await pool.query(
        `INSERT INTO rollup_filtered (project_id, filter_dim, filter_value, dim, day, is_bot, value, n) VALUES ($1, 'device', 'mobile', 'page', $2, false, '/', 1)`,
        [projectId, day],
      );
      await pool.query(
        `INSERT INTO rollup_filtered_weeks (project_id, filter_dim, filter_value, dim, week, is_bot, value, n) VALUES ($1, 'device', 'mobile', 'page', $2, false, '/', 1)`,
        [projectId, weekOf(day)],
      );
      await pool.query(`INSERT INTO rollup_kept_sessions (project_id, report, with_bots, day, total, spans) VALUES ($1, 'sessions', 0, $2, '1', '1')`, [projectId, day]);
    }
  });
  return projectId;
}

/** `work` on a pool of its own of `max` connections, ended after it. */
async function withPool<T>(max: number, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: database.url, max });
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/** Rows of a statement run on a connection of its own. */
const direct = (sql: string, values: unknown[]) => withPool(1, async (pool) => (await pool.query<Record<string, unknown>>(sql, values)).rows);

/** How many kept rows each day has left: the day's filtered and session rows and its week's filtered rows. */
async function keptRows(projectId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, day] of [['user day', USER_DAY], ['other day', OTHER_DAY]] as const) {
    const [row] = await direct(
      `SELECT (SELECT count(*) FROM rollup_filtered WHERE project_id = $1 AND day = $2)
            + (SELECT count(*) FROM rollup_kept_sessions WHERE project_id = $1 AND day = $2)
            + (SELECT count(*) FROM rollup_filtered_weeks WHERE project_id = $1 AND week = $3) AS n`,
      [projectId, day, weekOf(day)],
    );
    out[name] = Number(row?.n);
  }
  return out;
}

/** The project's marked days. */
const dirtyDays = async (projectId: string) => (await direct('SELECT day FROM rollup_dirty WHERE project_id = $1 ORDER BY day', [projectId])).map((row) => Number(row.day));

/**
 * Runs `before` on another connection just before `client`'s delete of the events: a write or a
 * delete that commits between the erasure's first read and that delete.
 */
function beforeEventsDelete(client: pg.PoolClient, before: () => Promise<void>): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as unknown as { query: typeof query }).query = async (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('DELETE FROM events')) await before();
    return query(...args);
  };
}

/** Erases user "erased" in a transaction of `pool`'s, committed, with `beside`. */
async function eraseWith(pool: pg.Pool, projectId: string, beside: Beside | null): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const erased = await erasePostgresUserData(client, projectId, 'erased', null, beside);
    await client.query('COMMIT');
    return erased.events;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

describe("the kept rows of an erased user's days", () => {
  it('go beside the erasure on another connection when one is free, and only theirs', async () => {
    const projectId = await projectWithKeptRows();
    expect(await keptRows(projectId)).toEqual({ 'user day': 3, 'other day': 3 });
    await withPool(2, async (pool) => {
      const pids: number[] = [];
      // A connection opened beside on a slow machine may take past the store's 100 ms.
      const commit = besideOn(pool, 'COMMIT', BESIDE_WAIT_MS);
      const beside: Beside = (work) =>
        commit(async (client) => {
          pids.push(Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid));
          await work(client);
        });
      let erasurePid = 0;
      const client = await pool.connect();
      try {
        erasurePid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
        await client.query('BEGIN');
        expect((await erasePostgresUserData(client, projectId, 'erased', null, beside)).events).toBe(2);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      expect(pids).toHaveLength(1);
      expect(pids[0]).not.toBe(erasurePid);
    });
    expect(await keptRows(projectId)).toEqual({ 'user day': 0, 'other day': 3 });
  });

  it('go in the erasure when no connection comes in time (the erasure holds the only one)', async () => {
    const projectId = await projectWithKeptRows();
    await withPool(1, async (pool) => {
      const answers: boolean[] = [];
      const commit = besideOn(pool, 'COMMIT', 20);
      expect(await eraseWith(pool, projectId, (work) => commit(work).then((ran) => (answers.push(ran), ran)))).toBe(2);
      expect(answers).toEqual([false]);
      // The connection that came late was given back: the pool serves again.
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
    });
    expect(await keptRows(projectId)).toEqual({ 'user day': 0, 'other day': 3 });
  });

  it('go in the erasure when the work beside it fails, which is rolled back', async () => {
    const projectId = await projectWithKeptRows();
    await withPool(2, async (pool) => {
      const commit = besideOn(pool, 'COMMIT');
      const failing: Beside = (work) =>
        commit(async (client) => {
          await work(client);
          throw new Error('lost the connection');
        });
      expect(await failing(async () => undefined)).toBe(false);
      expect(await eraseWith(pool, projectId, failing)).toBe(2);
    });
    expect(await keptRows(projectId)).toEqual({ 'user day': 0, 'other day': 3 });
  });

  it('stay with the user\u2019s events when the erasure fails, the work beside it ended first', async () => {
    const projectId = await projectWithKeptRows();
    await withPool(2, async (pool) => {
      let ended = false;
      // Rolled back beside, as the erasure is: nothing of the failed erasure stays.
      const rollback = besideOn(pool, 'ROLLBACK');
      const beside: Beside = (work) => rollback(work).then((ran) => ((ended = true), ran));
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const failing = async (): Promise<never> => {
          throw new Error('the events could not be deleted');
        };
        await expect(erasePostgresUser(client, projectId, 'erased', failing, beside)).rejects.toThrow('the events could not be deleted');
        expect(ended).toBe(true);
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      expect(pool.totalCount - pool.idleCount).toBe(0);
    });
    expect(await keptRows(projectId)).toEqual({ 'user day': 3, 'other day': 3 });
  });

  it('go, with every key of theirs, when an event of the user commits between the erasure\u2019s first read and its delete', async () => {
    const projectId = await projectWithKeptRows(true);
    const keys = async () =>
      (await direct('SELECT key FROM rollup_keys WHERE project_id = $1 AND key = ANY($2::text[]) ORDER BY key', [projectId, ['s-erased', 's-shared']])).map((row) => row.key);
    expect(await keys()).toEqual(['s-erased', 's-shared']);
    expect(await dirtyDays(projectId)).not.toContain(OTHER_DAY);
    await withPool(2, async (pool) => {
      const client = await pool.connect();
      // The event commits just before the erasure's delete of the events: in session `s-shared`,
      // a key that only {@link OTHER_DAY}'s rollups hold, which the first read did not see.
      beforeEventsDelete(client, async () => {
        await store.write({
          events: [makeEvent(projectId, 6, { userId: 'erased', sessionId: 's-shared', visitorId: 'v-erased', timestamp: at(USER_DAY, 6), receivedAt: at(USER_DAY, 6) })],
          chunks: [],
        });
      });
      try {
        await client.query('BEGIN');
        expect((await erasePostgresUserData(client, projectId, 'erased', null, besideOn(pool, 'COMMIT'))).events).toBe(3);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
    expect(await keys()).toEqual([]);
    expect(await dirtyDays(projectId)).toContain(OTHER_DAY);
    expect(await keptRows(projectId)).toEqual({ 'user day': 0, 'other day': 0 });
  });

  it('go, and no day is marked, when another delete (retention\u2019s) takes the user\u2019s events between the first read and the delete', async () => {
    // The user's session is also on {@link OTHER_DAY}, anonymous there: a day the erasure would mark had it deleted the key.
    const projectId = await projectWithKeptRows(true, 's-erased');
    let marked: number[] = [];
    await withPool(2, async (pool) => {
      const client = await pool.connect();
      beforeEventsDelete(client, async () => {
        await direct('DELETE FROM events WHERE project_id = $1 AND user_id = $2', [projectId, 'erased']);
        marked = await dirtyDays(projectId);
      });
      try {
        await client.query('BEGIN');
        expect((await erasePostgresUserData(client, projectId, 'erased', null, besideOn(pool, 'COMMIT', BESIDE_WAIT_MS))).events).toBe(0);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
      expect(pool.totalCount - pool.idleCount).toBe(0);
    });
    // No key of the user left a rollup row, so none of their days needs building again: the marks
    // are those of the other delete; the kept rows of the days the first read saw went beside.
    const keys = await direct('SELECT key FROM rollup_keys WHERE project_id = $1 AND key = ANY($2::text[])', [projectId, ['s-erased', 'v-erased']]);
    expect(keys.map((row) => row.key).sort()).toEqual(['s-erased', 'v-erased']);
    expect(marked).toEqual([USER_DAY]);
    expect(await dirtyDays(projectId)).toEqual(marked);
    expect(await keptRows(projectId)).toEqual({ 'user day': 0, 'other day': 0 });
  });

  it('go when the store erases a user, with its own pool', async () => {
    const projectId = await projectWithKeptRows();
    expect((await store.deleteUser(projectId, 'erased')).events).toBe(2);
    expect(await keptRows(projectId)).toEqual({ 'user day': 0, 'other day': 3 });
  });
});
