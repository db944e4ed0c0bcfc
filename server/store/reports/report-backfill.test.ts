import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test-support/postgres.js';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import type { EventStore, StoredEvent } from '../event-store.js';
import { POSTGRES_SCHEMA_VERSION } from '../postgres/postgres-schema.js';
import { makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createPostgresStore } from '../postgres/postgres-store.js';
import { dimensionValues } from './report-backfill.js';
import { SQLITE_SCHEMA_VERSION } from '../sqlite/sqlite-schema.js';
import { REPORT_COLUMNS } from './report-columns.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';

/*
 * Schema version 5 on a database of version 4: the report columns are added and the rows stored
 * before get theirs from their properties and user agent, batch by batch (batches of 7 here, so
 * that the position is carried across many), and `client_timestamp` where it was null. All but
 * `country`, which only the full client address at ingest gives: it stays null, even for a row
 * whose stored address is a full one (a project that keeps full addresses).
 */

const dir = mkdtempSync(join(tmpdir(), 'report-backfill-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const START = Date.UTC(2026, 0, 5);

/** Events as version 4 stored them: no report columns, no client time unless corrected. */
function oldEvents(projectId: string): { events: StoredEvent[]; expected: Map<string, Array<string | null>> } {
  const events: StoredEvent[] = [];
  const expected = new Map<string, Array<string | null>>();
  for (const e of generateProject({ projectId, start: START, days: 2, sessions: 12, seed: 3 })) {
    expected.set(e.eventId, dimensionValues(e.dimensions && { ...e.dimensions, country: null }));
    const { dimensions: _, ...old } = e;
    events.push({ ...old, clientTimestamp: null, ipAddress: '81.2.69.160' });
  }
  return { events, expected };
}

const DROP_REPORT_COLUMNS = REPORT_COLUMNS.map((c) => `ALTER TABLE events DROP COLUMN ${c};`).join('\n');

async function checkBackfilled(rows: Array<Record<string, unknown>>, events: StoredEvent[], expected: Map<string, Array<string | null>>) {
  expect(rows).toHaveLength(events.length);
  for (const row of rows) {
    const id = row.event_id as string;
    expect([id, ...REPORT_COLUMNS.map((c) => row[c])]).toEqual([id, ...(expected.get(id) ?? [])]);
    expect(Number(row.client_timestamp)).toBe(Number(row.timestamp));
  }
  expect(rows.some((row) => row.browser !== null && row.path !== null && row.channel !== null)).toBe(true);
  expect(rows.every((row) => row.country === null)).toBe(true);
}

describe('report columns of a version 4 database', () => {
  it('fills them on SQLite in batches, then forgets the backfill', async () => {
    const path = join(dir, 'v4.db');
    const p = newProjectId();
    const { events, expected } = oldEvents(p);
    const first = createSqliteStore({ path });
    await first.init();
    await first.write({ events, chunks: [] });
    await first.close();
    const raw = new Database(path);
    // A version 4 database has none of the later indexes over the report columns either.
    raw.exec(`DROP INDEX events_by_heatmap;\n${DROP_REPORT_COLUMNS}\nDROP TABLE backfills;\nUPDATE events SET client_timestamp = NULL;`);
    raw.pragma('user_version = 4');
    raw.close();

    const store: EventStore = createSqliteStore({ path, backfillBatch: 7 });
    await store.init();
    await store.close();
    const check = new Database(path, { readonly: true });
    try {
      await checkBackfilled(check.prepare('SELECT * FROM events WHERE project_id = ?').all(p) as Array<Record<string, unknown>>, events, expected);
      expect(check.prepare('SELECT COUNT(*) AS n FROM backfills').get()).toEqual({ n: 0 });
      expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    } finally {
      check.close();
    }
  });

  it('fills them on PostgreSQL in batches, with two processes upgrading at once', async () => {
    const db = await createTestDatabase();
    try {
      const p = newProjectId();
      const { events, expected } = oldEvents(p);
      const first = createPostgresStore({ url: db.url });
      await first.init();
      await first.createProject(makeProject(p));
      await first.write({ events, chunks: [] });
      await first.close();
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      try {
        await admin.query(`${DROP_REPORT_COLUMNS}\nDROP TABLE backfills;\nUPDATE events SET client_timestamp = NULL;\nUPDATE schema_version SET version = 4;`);
        const stores = [createPostgresStore({ url: db.url, backfillBatch: 7 }), createPostgresStore({ url: db.url, backfillBatch: 7 })];
        await Promise.all(stores.map((s) => s.init()));
        await Promise.all(stores.map((s) => s.close()));
        await checkBackfilled((await admin.query('SELECT * FROM events WHERE project_id = $1', [p])).rows, events, expected);
        expect((await admin.query('SELECT count(*)::int AS n FROM backfills')).rows).toEqual([{ n: 0 }]);
        expect((await admin.query('SELECT version FROM schema_version')).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
      } finally {
        await admin.end();
      }
    } finally {
      await db.drop();
    }
  });
});
