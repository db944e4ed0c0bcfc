import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { eventId, makeChunk, makeEvent, makeProject, newProjectId, recorded } from '../../../test-support/store/event-store.fixtures.js';
import type { EventStore } from '../event-store.js';
import { createPostgresStore } from './postgres-store.js';

/*
 * The read API's reads on PostgreSQL under the read budget (postgres-read-run.ts). A second
 * connection holds an ACCESS EXCLUSIVE lock on the table a read needs, inside an open transaction:
 * `statement_timeout` counts the wait for a lock, so the read is past its budget however fast the
 * machine, and no timing is measured. Once the lock is gone the same read answers.
 */

const BUDGET_MS = 200;

let database: TestDatabase;
let store: EventStore;
let holder: pg.Client;
const projectId = newProjectId();

beforeAll(async () => {
  database = await createTestDatabase();
  store = createPostgresStore({ url: database.url, readBudgetMs: BUDGET_MS });
  await store.init();
  await store.createProject(makeProject(projectId));
  await store.write({
    events: [1, 2, 3].map((n) => makeEvent(projectId, n)),
    chunks: [makeChunk(projectId, 's1', 0, 2), makeChunk(projectId, 's1', 2, 1, { isFinal: true })],
  });
  holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
});

afterAll(async () => {
  await holder?.end();
  await store?.close();
  await database?.drop();
});

/** Runs `work` while `holder` keeps `table` locked against every other access, then lets it go. */
async function whileLocked<T>(table: string, work: () => Promise<T>): Promise<T> {
  await holder.query('BEGIN');
  try {
    await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return await work();
  } finally {
    await holder.query('ROLLBACK');
  }
}

/** Statements of this database still running or waiting whose text holds `fragment`. */
async function running(fragment: string): Promise<number> {
  const { rows } = await holder.query<{ n: number }>(
    "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0",
    [fragment],
  );
  return rows[0]?.n ?? 0;
}

/** Each read, the table it needs, a fragment of its statement's text, and its answer once that table is free. */
const READS: Array<{ name: string; table: string; statement: string; read: () => Promise<unknown>; answer: unknown }> = [
  {
    name: 'queryEvents',
    table: 'events',
    statement: 'ORDER BY timestamp DESC, event_id DESC',
    read: () => store.queryEvents({ projectId, limit: 10 }),
    answer: { events: [3, 2, 1].map((n) => ({ eventId: eventId(n) })), nextCursor: null },
  },
  {
    name: 'exportEvents',
    table: 'events',
    statement: 'ORDER BY timestamp, event_id LIMIT',
    read: () => store.exportEvents({ projectId, limit: 10 }),
    answer: [1, 2, 3].map((n) => ({ eventId: eventId(n) })),
  },
  {
    name: 'listSessions',
    table: 'recording_chunks',
    statement: 'covered_before',
    read: () => store.listSessions(projectId, 10),
    answer: [{ sessionId: 's1', chunkCount: 2, eventCount: 3, finished: true }],
  },
  {
    name: 'getRecording',
    table: 'recording_chunks',
    statement: 'SELECT event_offset, events, is_final FROM recording_chunks',
    read: () => store.getRecording(projectId, 's1'),
    answer: { sessionId: 's1', events: recorded(0, 3), gaps: [], finished: true },
  },
];

describe('the PostgreSQL store’s reads of events and recordings under the read budget', () => {
  it.each(READS)('$name rejects with BUSY past the budget while $table is locked, stops waiting in the database, and answers once it is free', async ({ table, statement, read, answer }) => {
    await whileLocked(table, async () => {
      await expect(read()).rejects.toMatchObject({ name: 'StoreError', code: 'BUSY', message: `The database did not answer this read within its budget of ${BUDGET_MS} ms; retry later.` });
      // Cancelled by the database, not only given up by the store: nothing of it still waits for the lock.
      expect(await running(statement)).toBe(0);
    });
    expect(await read()).toMatchObject(answer as object);
  });
});
