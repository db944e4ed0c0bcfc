import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of a database on the run's PostgreSQL server (see `postgres-global-setup.ts`). */
    postgresUrl: string;
  }
}

/** A database of its own for one test file. */
export interface TestDatabase {
  /** Connection URL of the new database. */
  readonly url: string;
  /** Drops the database, closing any connection still open on it. */
  drop(): Promise<void>;
}

/** Tenths of a second a drop waits for the database's connections to end before it ends them. */
const DROP_WAITS = 20;

async function withAdmin<T>(baseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: baseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a fresh, randomly named database on the run's PostgreSQL server, so test files that run
 * in parallel never see each other's tables or rows. Call it in `beforeAll` and `drop()` in `afterAll`.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const baseUrl = inject('postgresUrl');
  const name = `test_${randomBytes(8).toString('hex')}`;
  await withAdmin(baseUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await withAdmin(baseUrl, async (client) => {
        // A connection still closing (a pool's end() in flight) ends on its own within moments; one
        // the forced drop ends meanwhile gets a FATAL its client may no longer listen for, which
        // the test run reports as an uncaught error. So wait a little for them, then force.
        for (let i = 0; i < DROP_WAITS; i++) {
          const open = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if ((open.rows[0]?.n ?? 0) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}
