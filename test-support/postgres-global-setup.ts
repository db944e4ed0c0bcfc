import type { TestProject } from 'vitest/node';
import { Client } from 'pg';
import { startPostgres } from './postgres-server.js';

/** The database created for the run; test files make their own beside it with `createTestDatabase()`. */
const RUN_DATABASE = 'service_analytics_test';

/**
 * Vitest global setup of the `node` project: starts one real PostgreSQL server for the whole run,
 * creates a database on it and hands its URL to the tests as `inject('postgresUrl')`. The returned
 * teardown stops the server and deletes its data directory.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  try {
    const admin = new Client({ connectionString: server.url });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${RUN_DATABASE}`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await server.stop();
    throw error;
  }
  const url = new URL(server.url);
  url.pathname = `/${RUN_DATABASE}`;
  project.provide('postgresUrl', url.toString());
  return () => server.stop();
}
