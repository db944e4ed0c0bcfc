import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../sqlite/sqlite-store.js';
import { prepareSqliteFunnelKeep } from './report-keep.js';
import type { FunnelKeep } from './funnel-days.js';

const dir = mkdtempSync(join(tmpdir(), 'report-keep-test-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite keep of funnel days', () => {
  it('keeps a day only while it is clean at the version given, and replaces a day kept already', async () => {
    const path = join(dir, 'keep.db');
    const store = createSqliteStore({ path });
    await store.init();
    await store.close();
    const db = new Database(path);
    try {
      const keep = prepareSqliteFunnelKeep(db);
      const rows = () =>
        db.prepare('SELECT day, session_id, masks, reached, spans FROM rollup_funnels WHERE project_id = ? ORDER BY day, session_id').all('p') as Array<Record<string, unknown>>;
      const funnel = (day: number, version: number, reached: number[], spans: FunnelKeep['days'][number]['spans'] = []): FunnelKeep => ({
        projectId: 'p',
        funnel: '[["page","/"]]',
        withBots: false,
        days: [{ day, version, reached, spans, spanDigest: `${spans.length}` }],
      });

      expect(keep(funnel(10, 0, [5], [{ sessionId: 's1', masks: '1,1' }]))).toBe(1);
      expect(rows()).toEqual([
        { day: 10, session_id: null, masks: null, reached: '5', spans: '1' },
        { day: 10, session_id: 's1', masks: '1,1', reached: null, spans: null },
      ]);
      // Kept again (a session came to span days): replaced, not added to.
      expect(keep(funnel(10, 0, [6], [{ sessionId: 's2', masks: '4' }]))).toBe(1);
      expect(rows()).toEqual([
        { day: 10, session_id: null, masks: null, reached: '6', spans: '1' },
        { day: 10, session_id: 's2', masks: '4', reached: null, spans: null },
      ]);

      // Refreshed since the read (version 1 now): refused; the refresh itself deletes what was kept.
      db.prepare('INSERT INTO rollup_versions (project_id, day, version) VALUES (?, ?, ?)').run('p', 11, 1);
      expect(keep(funnel(11, 0, [7]))).toBe(0);
      expect(keep(funnel(11, 1, [7]))).toBe(1);
      // Marked: refused.
      db.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?)').run('p', 12);
      expect(keep(funnel(12, 0, [8]))).toBe(0);
      expect(rows().map((row) => row.day)).toEqual([10, 10, 11]);
    } finally {
      db.close();
    }
  });
});
