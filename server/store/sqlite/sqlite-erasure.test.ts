import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import type { StoredEvent } from '../event-store.js';
import { sqliteErasureSql } from './sqlite-erasure.js';
import { createSqliteStore } from './sqlite-store.js';

/*
 * Where the SQLite erasure runs and what it reads (`sqlite-erasure.ts`). What it leaves behind, and
 * that every report stays exact, is the contract suites' part (`event-store.contract.ts`,
 * `rollup.contract.ts`, `aggregate.contract.ts`); here: it runs off the request thread, and it
 * finds its rows through indexes, never by reading every event of the project.
 */

const dir = mkdtempSync(join(tmpdir(), 'sqlite-erasure-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const START = Date.UTC(2026, 0, 5);

/** The plan SQLite picks for `sql`, its steps' details joined. */
function plan(db: Database.Database, sql: string, values: unknown): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(values as Record<string, unknown>) as Array<{ detail: string }>;
  return rows.map((row) => row.detail).join(' | ');
}

describe('the SQLite erasure', () => {
  it('runs on the writer thread: the request thread turns while it runs, and it answers the counts', async () => {
    const path = join(dir, 'thread.db');
    const store = createSqliteStore({ path });
    await store.init();
    try {
      const projectId = newProjectId();
      await store.createProject(makeProject(projectId));
      const events: StoredEvent[] = [...generateProject({ projectId, start: START, days: 3, sessions: 200, seed: 3, idPrefix: 'e' })];
      await store.write({ events, chunks: [] });
      const user = events.find((e) => e.userId !== null)?.userId as string;
      let turned = false;
      setImmediate(() => (turned = true));
      // On the request thread the whole transaction ran inside this call, and its promise settled
      // before the event loop turned once; on the writer thread the answer comes back as a message.
      const erased = await store.deleteUser(projectId, user);
      expect(turned).toBe(true);
      expect(erased.events).toBe(events.filter((e) => e.userId === user).length);
      const left = await store.queryEvents({ projectId, userId: user, limit: 10 });
      expect(left.events).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('finds the user\'s events through events_by_user and the days holding their keys through an index of the rollups, never by reading every event', async () => {
    const path = join(dir, 'plans.db');
    const store = createSqliteStore({ path });
    await store.init();
    await store.close();
    const db = new Database(path);
    try {
      const sql = sqliteErasureSql();
      const byUser = /^SEARCH events USING (COVERING )?INDEX events_by_user \(project_id=\? AND user_id=\?\)$/;
      expect(plan(db, sql.userEvents, ['p', 'u'])).toMatch(byUser);
      expect(plan(db, sql.deleteEvents, ['p', 'u'])).toMatch(byUser);
      // The days whose rollups hold a key: one index range of the project's rows of dimension ''.
      const holders = plan(db, sql.markHolders, { p: 'p', keys: '["k"]' });
      expect(holders).toContain('SEARCH rollup_values USING COVERING INDEX rollup_values_by_day (project_id=? AND dim=?)');
      expect(holders).not.toMatch(/SCAN (events|rollup_values)\b/);
      // An hour's events, a rollup row of a step: by their keys.
      expect(plan(db, sql.readHour, ['p', 0, 1])).toContain('USING INDEX events_by_time (project_id=? AND timestamp>? AND timestamp<?)');
      expect(plan(db, sql.deleteStep, ['p', 1, 0, '/', 'e'])).toContain('USING PRIMARY KEY (project_id=? AND day=? AND kind=? AND value=? AND event_id=?)');
      for (const text of sql.textKeyDeletes) {
        const found = plan(db, text, { p: 'p', keys: '["k"]', days: '[1]' });
        expect(found).toMatch(/USING (COVERING )?INDEX rollup_(errors|exposures|filtered|kept_sessions)_by_day \(project_id=\? AND day=\?\)/);
        expect(found).not.toMatch(/SCAN (events|rollup_values|rollup_filtered|rollup_kept_sessions)\b/);
      }
    } finally {
      db.close();
    }
  });
});
