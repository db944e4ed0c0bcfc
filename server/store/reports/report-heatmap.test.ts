import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_DIALECT, Values } from './dialect.js';
import { heatmapClicksSql, heatmapScrollSql } from './report-heatmap.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';

/*
 * The heatmap report's cost is one page's clicks and scroll depths, not the project's events: on a
 * SQLite file of the current schema, both statements search `events_by_heatmap` by project, page
 * and time, never `events_by_time` or the whole table. (Its numbers are the contract's,
 * `test-support/store/report-store.contract.ts`.)
 */

const dir = mkdtempSync(join(tmpdir(), 'sa-heatmap-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the heatmap report on SQLite', () => {
  it('reads the page through events_by_heatmap, with and without bots and other filters', async () => {
    const path = join(dir, 'plan.db');
    const store = createSqliteStore({ path });
    await store.init();
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      for (const includeBots of [false, true]) {
        for (const browser of [undefined, 'Firefox']) {
          const where = (v: Values): string => {
            const parts = [`project_id = ${v.add('p')}`, `timestamp >= ${v.add(0)}`, `timestamp < ${v.add(1)}`];
            if (!includeBots) parts.push('is_bot = 0');
            parts.push(`path = ${v.add('/pricing')}`);
            if (browser !== undefined) parts.push(`browser = ${v.add(browser)}`);
            return parts.join(' AND ');
          };
          const c = new Values(SQLITE_DIALECT);
          const clicks = heatmapClicksSql(SQLITE_DIALECT, c, where(c), 10);
          const s = new Values(SQLITE_DIALECT);
          const scroll = heatmapScrollSql(SQLITE_DIALECT, where(s));
          for (const [sql, values] of [
            [clicks, c.list],
            [scroll, s.list],
          ] as const) {
            const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as Array<{ detail: string }>).map((row) => row.detail);
            const reads = plan.filter((detail) => /\bevents\b/.test(detail) && /^(SEARCH|SCAN)/.test(detail));
            expect(reads.length, plan.join('\n')).toBeGreaterThan(0);
            for (const detail of reads) expect(detail).toMatch(/^SEARCH events USING INDEX events_by_heatmap \(project_id=\? AND path=\? AND timestamp>\? AND timestamp<\?\)$/);
          }
        }
      }
    } finally {
      db.close();
    }
  });
});
