import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test-support/postgres.js';
import { type TestProject, createTestProject, makeEvent } from '../../test-support/server/test-server.js';
import { silentLogger } from '../logger.js';
import { type RunningServer, serve } from '../serve.js';
import { openStore } from '../store/open-store.js';

/*
 * The read API on PostgreSQL past the read budget, over HTTP on a real server: a second connection
 * holds the events table locked inside an open transaction, and the database counts the wait for
 * that lock against the statement's budget (store/postgres/postgres-read-run.ts), so the event list
 * is refused without any timing measured here.
 */

const BUDGET_MS = 200;

describe('GET /api/v1/events on PostgreSQL past the read budget', () => {
  let database: TestDatabase;
  let running: RunningServer;
  let project: TestProject;
  let holder: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    const store = openStore(database.url, { readBudgetMs: BUDGET_MS });
    await store.init();
    project = await createTestProject(store);
    running = await serve({ store, logger: silentLogger, port: 0, host: '127.0.0.1' });
    const batch = await fetch(`${running.url}/api/v1/events/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.writeKey}`, 'x-project-id': project.id },
      body: JSON.stringify([makeEvent({ event_type: 'signup' })]),
    });
    expect(batch.status).toBe(200);
    holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
  });

  afterAll(async () => {
    await holder?.end();
    await running?.close();
    await database?.drop();
  });

  const list = (query: string) =>
    fetch(`${running.url}/api/v1/events${query}`, { headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.id } });

  it('answers 503 STORAGE_UNAVAILABLE with Retry-After while the events are locked, and the events once they are free', async () => {
    await holder.query('BEGIN');
    try {
      await holder.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      const refused = await list('?event_type=absent');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toEqual({
        error: `The database did not answer this read within its budget of ${BUDGET_MS} ms; retry later.`,
        code: 'STORAGE_UNAVAILABLE',
      });
    } finally {
      await holder.query('ROLLBACK');
    }
    const answered = await list('?event_type=signup');
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as { events: Array<{ event_type: string }> }).events.map((e) => e.event_type)).toEqual(['signup']);
  });
});
