import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { POSTGRES_DIALECT, Values } from '../reports/dialect.js';
import { heatmapClicksSql, heatmapScrollSql } from '../reports/report-heatmap.js';
import { createPostgresStore } from './postgres-store.js';

/*
 * The heatmap report's cost on PostgreSQL is one page's clicks and scroll depths: both statements
 * can be answered through `events_by_heatmap`, whose condition the planner proves from the
 * statements' constant event types (a parameter would not do). Sequential scans are turned off for
 * the check: on an empty table the planner would rightly prefer one.
 */

let database: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
});

describe('the heatmap report on PostgreSQL', () => {
  it('reads the page through events_by_heatmap', async () => {
    database = await createTestDatabase();
    const store = createPostgresStore({ url: database.url, poolSize: 1 });
    await store.init();
    await store.close();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const where = (v: Values): string =>
        [`project_id = ${v.add('p')}`, `timestamp >= ${v.add(0)}`, `timestamp < ${v.add(1)}`, 'is_bot = false', `path = ${v.add('/pricing')}`].join(' AND ');
      const c = new Values(POSTGRES_DIALECT);
      const clicks = heatmapClicksSql(POSTGRES_DIALECT, c, where(c), 10);
      const s = new Values(POSTGRES_DIALECT);
      const scroll = heatmapScrollSql(POSTGRES_DIALECT, where(s));
      for (const [sql, values] of [
        [clicks, c.list],
        [scroll, s.list],
      ] as const) {
        const plan = (await client.query(`EXPLAIN ${sql}`, values as unknown[])).rows.map((row: Record<string, string>) => Object.values(row)[0]).join('\n');
        // Each partition has its own copy of the index, named for its columns.
        expect(plan).toMatch(/Index Scan using events_\w+_project_id_path_timestamp_idx/);
        expect(plan).not.toMatch(/project_id_timestamp_event_id_idx|event_id_id_day|Seq Scan/);
      }
    } finally {
      await client.end();
    }
  });
});
