import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../sqlite/sqlite-store.js';
import { prepareSqliteSessionDaysKeep } from './report-keep.js';
import type { SessionDaysKeep } from './session-days.js';

const dir = mkdtempSync(join(tmpdir(), 'report-keep-test-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `test` on a connection to a new store's database file and the keep prepared on it. */
async function withKeep(name: string, test: (db: Database.Database, keep: (k: SessionDaysKeep) => number) => void): Promise<void> {
  const path = join(dir, `${name}.db`);
  const store = createSqliteStore({ path });
  await store.init();
  await store.close();
  const db = new Database(path);
  try {
    test(db, prepareSqliteSessionDaysKeep(db));
  } finally {
    db.close();
  }
}

describe('SQLite keep of session days', () => {
  it('keeps a day only while it is clean at the version given, and replaces a day kept already', async () => {
    await withKeep('keep', (db, keep) => {
      const rows = () =>
        db.prepare('SELECT day, session_id, piece, total, spans FROM rollup_kept_sessions WHERE project_id = ? ORDER BY day, session_id').all('p') as Array<Record<string, unknown>>;
      const report = (day: number, version: number, total: number[], spans: SessionDaysKeep['days'][number]['spans'] = []): SessionDaysKeep => ({
        projectId: 'p',
        report: 'funnel [["page","/"]]',
        withBots: false,
        days: [{ day, version, total, spans, sessions: 3 }],
      });

      expect(keep(report(10, 0, [5], [{ sessionId: 's1', piece: '1,1' }]))).toBe(1);
      expect(rows()).toEqual([
        { day: 10, session_id: null, piece: null, total: '5', spans: 'c3' },
        { day: 10, session_id: 's1', piece: '1,1', total: null, spans: null },
      ]);
      // Kept again (a session came to span days): replaced, not added to.
      expect(keep(report(10, 0, [6], [{ sessionId: 's2', piece: '4' }]))).toBe(1);
      expect(rows()).toEqual([
        { day: 10, session_id: null, piece: null, total: '6', spans: 'c3' },
        { day: 10, session_id: 's2', piece: '4', total: null, spans: null },
      ]);

      // Refreshed since the read (version 1 now): refused; the refresh itself deletes what was kept.
      db.prepare('INSERT INTO rollup_versions (project_id, day, version) VALUES (?, ?, ?)').run('p', 11, 1);
      expect(keep(report(11, 0, [7]))).toBe(0);
      expect(keep(report(11, 1, [7]))).toBe(1);
      // Marked: refused.
      db.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?)').run('p', 12);
      expect(keep(report(12, 0, [8]))).toBe(0);
      expect(rows().map((row) => row.day)).toEqual([10, 10, 11]);
    });
  });

  it('keeps a span only while every day of it is clean at the version given, and replaces one kept already', async () => {
    await withKeep('keep-spans', (db, keep) => {
      const spans = () =>
        db.prepare('SELECT first_day, last_day, sessions, versions, total FROM rollup_kept_spans WHERE project_id = ? ORDER BY first_day').all('p') as Array<Record<string, unknown>>;
      const report = (first: number, versions: number[], total: number[], sessions = 2): SessionDaysKeep => ({
        projectId: 'p',
        report: 'funnel [["page","/"]]',
        withBots: false,
        days: [],
        spans: [{ first, last: first + versions.length - 1, sessions, versions, total }],
      });
      db.prepare('INSERT INTO rollup_versions (project_id, day, version) VALUES (?, ?, ?)').run('p', 21, 4);

      expect(keep(report(20, [0, 4], [2, 1]))).toBe(1);
      expect(spans()).toEqual([{ first_day: 20, last_day: 21, sessions: 2, versions: 4, total: '2,1' }]);
      expect(keep(report(20, [0, 4], [3, 3], 3))).toBe(1);
      expect(spans()).toEqual([{ first_day: 20, last_day: 21, sessions: 3, versions: 4, total: '3,3' }]);
      // A day of the span refreshed since the read (its last), or marked (its first): refused.
      expect(keep(report(21, [3, 0], [1, 1]))).toBe(0);
      db.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?)').run('p', 30);
      expect(keep(report(30, [0, 0, 0], [1, 1]))).toBe(0);
      expect(spans().map((row) => row.first_day)).toEqual([20]);
    });
  });
});
