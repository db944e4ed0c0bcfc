import pg from 'pg';
import { createPostgresStore } from '../../server/store/postgres/postgres-store.js';
import { createTestDatabase } from '../postgres.js';

/** A connection to a new database of the store's schema that answers with the plans of statements. */
export interface PlanReader {
  /** The text of `EXPLAIN sql` with `values`, one line per plan node and detail. */
  plan(sql: string, values: readonly unknown[]): Promise<string>;
  /** Closes the connection and drops the database. */
  end(): Promise<void>;
}

/**
 * Creates a test database, opens and closes the store once on it (its schema and indexes made), then connects with
 * sequential scans turned off, and the plan methods of `alsoOff` (`hashjoin`, `mergejoin`,
 * `bitmapscan`…): on the empty tables of a test the planner would rightly prefer those, and a plan
 * test asks which index a statement can use, not what the planner picks at this size.
 */
export async function planReader(alsoOff: readonly string[] = []): Promise<PlanReader> {
  const database = await createTestDatabase();
  const url = database.url;
  const store = createPostgresStore({ url, poolSize: 1 });
  await store.init();
  await store.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const method of ['seqscan', ...alsoOff]) await client.query(`SET enable_${method} = off`);
  return {
    async plan(sql, values) {
      const { rows } = await client.query<Record<string, string>>(`EXPLAIN ${sql}`, [...values]);
      return rows.map((row) => Object.values(row)[0]).join('\n');
    },
    async end() {
      await client.end();
      await database.drop();
    },
  };
}
