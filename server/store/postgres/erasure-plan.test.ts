import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { POSTGRES_STEPS_DELETE_SQL } from '../reports/rollup-erasure.js';
import { createPostgresStore } from './postgres-store.js';

/*
 * An erasure deletes its events' own funnel steps: a seek per event, the event id in the index
 * condition. Through the key without it, PostgreSQL kept every step row of a popular page's day
 * and filtered them (about 15,000 rows per erased event at 10M events). Sequential scans are
 * turned off for the check: on an empty table the planner would rightly prefer one.
 */

let database: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
});

describe('an erasure on PostgreSQL', () => {
  it("deletes its events' funnel steps through an index that ends with the event id", async () => {
    database = await createTestDatabase();
    const store = createPostgresStore({ url: database.url, poolSize: 1 });
    await store.init();
    await store.close();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const plan = (await client.query(`EXPLAIN ${POSTGRES_STEPS_DELETE_SQL}`, ['p', [20000], [0], ['/'], ['e1']])).rows
        .map((row: Record<string, string>) => Object.values(row)[0])
        .join('\n');
      expect(plan).toMatch(/Index (Only )?Scan using rollup_steps_by_event/);
      expect(plan).toMatch(/Index Cond: .*event_id = /);
      expect(plan).not.toMatch(/Filter: .*event_id/);
    } finally {
      await client.end();
    }
  });
});
