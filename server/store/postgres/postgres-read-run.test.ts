import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { createPostgresReadRun } from './postgres-read-run.js';

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection: every statement below runs on the connection the one before gave back.
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
  await pool.query('CREATE TABLE t (n INTEGER)');
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

describe('createPostgresReadRun(pool, budgetMs)', () => {
  it('runs a read statement with JIT and parallel plans off and gives the connection back with its own settings', async () => {
    const run = createPostgresReadRun(() => pool);
    const settings = "SELECT current_setting('jit') AS jit, current_setting('max_parallel_workers_per_gather') AS workers";
    const before = (await pool.query(settings)).rows[0];
    expect(await run(`${settings}, $1::int AS n`, [7])).toEqual([{ jit: 'off', workers: '0', n: 7 }]);
    expect((await pool.query(settings)).rows[0]).toEqual(before);
  });

  it('turns sequential scans off for a statement hinted to read through indexes only, and only for it', async () => {
    const run = createPostgresReadRun(() => pool);
    const scans = "SELECT current_setting('enable_seqscan') AS scans";
    expect(await run(scans, [], { indexesOnly: true })).toEqual([{ scans: 'off' }]);
    expect(await run(scans, [])).toEqual([{ scans: 'on' }]);
    expect((await pool.query(scans)).rows).toEqual([{ scans: 'on' }]);
  });

  it('refuses a write, the transaction being read-only, and the connection stays usable', async () => {
    const run = createPostgresReadRun(() => pool);
    await expect(run('INSERT INTO t (n) VALUES (1)', [])).rejects.toMatchObject({ code: '25006' });
    expect((await pool.query('SELECT COUNT(*)::int AS n FROM t')).rows).toEqual([{ n: 0 }]);
    expect(await run('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
  });

  it('cancels a statement past its budget and rejects with BUSY; the connection goes back without the budget', async () => {
    const run = createPostgresReadRun(() => pool, 200);
    await expect(run('SELECT pg_sleep(5)', [])).rejects.toMatchObject({ name: 'StoreError', code: 'BUSY', message: expect.stringContaining('budget of 200 ms') });
    expect(await run("SELECT current_setting('statement_timeout') AS budget", [])).toEqual([{ budget: '200ms' }]);
    expect((await pool.query("SELECT current_setting('statement_timeout') AS budget")).rows).toEqual([{ budget: '0' }]);
    expect((await pool.query<{ open: boolean }>('SELECT now() <> statement_timestamp() AS open')).rows[0]?.open).toBe(false);
  });

  it('passes on the error of a failing statement and leaves no transaction open', async () => {
    const run = createPostgresReadRun(() => pool);
    await expect(run('SELECT 1 / $1::int AS n', [0])).rejects.toMatchObject({ code: '22012' });
    expect((await pool.query<{ open: boolean }>("SELECT now() <> statement_timestamp() AS open")).rows[0]?.open).toBe(false);
  });
});
