import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test-support/postgres.js';
import { planReader } from '../../../test-support/store/postgres-plan.js';
import { POSTGRES_STEPS_DELETE_SQL } from '../reports/rollup-erasure.js';
import { POSTGRES_RECOUNT_SQL } from './postgres-session-summaries.js';
import { createPostgresStore } from './postgres-store.js';

/*
 * An erasure deletes its events' own funnel steps: a seek per event, the event id in the index
 * condition. Through the key without it, PostgreSQL kept every step row of a popular page's day
 * and filtered them (about 15,000 rows per erased event at 10M events). It counts its sessions
 * again by a seek per session and hour: by a range of hours per session, PostgreSQL scanned every
 * session row (about 320 ms at 10M events).
 */

describe('an erasure on PostgreSQL', () => {
  it("deletes its events' funnel steps through an index that ends with the event id", async () => {
    const reader = await planReader();
    try {
      const plan = await reader.plan(POSTGRES_STEPS_DELETE_SQL, ['p', [20000], [0], ['/'], ['e1']]);
      expect(plan).toMatch(/Index (Only )?Scan using rollup_steps_by_event/);
      // Every column of the key in the condition: one missing from the statement would still put
      // the event id there, and range over the rest.
      const condition = plan.split('\n').find((line) => line.includes('Index Cond:')) ?? '';
      for (const column of ['project_id', 'day', 'kind', 'value', 'event_id']) expect(condition).toMatch(new RegExp(`\\(${column} = `));
      expect(plan).not.toMatch(/Filter:/);
    } finally {
      await reader.end();
    }
  });

  it("counts the erased sessions again by a seek of agg_sessions_key per session and hour", async () => {
    // The join a nested loop: what the planner picks at 10M events (a seek per pair, 4 ms), not on an empty table.
    const reader = await planReader(['hashjoin', 'mergejoin', 'bitmapscan']);
    try {
      const plan = await reader.plan(POSTGRES_RECOUNT_SQL, ['p', ['s1', 's1'], [1, 2]]);
      expect(plan).toMatch(/Index (Only )?Scan using agg_sessions_key/);
      const condition = plan.split('\n').find((line) => line.includes('Index Cond:')) ?? '';
      for (const column of ['project_id', 'hour', 'session_id']) expect(condition).toMatch(new RegExp(`\\(a?\\.?${column} = `));
    } finally {
      await reader.end();
    }
  });

  it('gets that index in place of the one before at the next open of a database of the version before', async () => {
    const before = await createTestDatabase();
    const indexes = async (client: pg.Client) =>
      (await client.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'rollup_steps' ORDER BY indexname")).rows.map((row) => row.indexname);
    const client = new pg.Client({ connectionString: before.url });
    try {
      const first = createPostgresStore({ url: before.url, poolSize: 1 });
      await first.init();
      await first.close();
      await client.connect();
      // The version before's index, as its open made it.
      await client.query('DROP INDEX rollup_steps_by_event');
      await client.query('CREATE INDEX rollup_steps_by_key ON rollup_steps (project_id, day, kind, value)');
      expect(await indexes(client)).toEqual(['rollup_steps_by_key']);
      const second = createPostgresStore({ url: before.url, poolSize: 1 });
      await second.init();
      await second.close();
      expect(await indexes(client)).toEqual(['rollup_steps_by_event']);
    } finally {
      await client.end();
      await before.drop();
    }
  });
});
