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
      await withAdmin(baseUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
