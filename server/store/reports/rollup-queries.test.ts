import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SQLITE_DIALECT, Values } from './dialect.js';
import { type DayPlan, visitsSource } from './rollup-queries.js';
import type { ReportQuery } from '../report-store.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';

/*
 * How the visits of the rollups are read on SQLite (the numbers are the contracts':
 * `rollup.contract.ts`, `report-store.contract.ts`). PostgreSQL's plans: `rollup-postgres.test.ts`.
 */

const dir = mkdtempSync(join(tmpdir(), 'sa-rollup-queries-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DAY = 86_400_000;
const q: ReportQuery = { projectId: 'p', from: DAY / 2, to: 90 * DAY + 5, filters: {}, includeBots: false, visitorKey: 'anonymous' };
/** Ninety days, one of them marked, and raw ends. */
const plan: DayPlan = { days: { first: 1, end: 90, dirty: [40] }, raw: [[DAY / 2, DAY], [40 * DAY, 41 * DAY], [90 * DAY, q.to]] };

/** The plan's lines of `rollup_values` for the visits `spec` asks, from an empty store's file. */
async function valuesPlan(spec: Parameters<typeof visitsSource>[3]): Promise<{ details: string[]; days: unknown[] }> {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
  const store = createSqliteStore({ path });
  await store.init();
  await store.close();
  const db = new Database(path, { readonly: true });
  try {
    const v = new Values(SQLITE_DIALECT);
    const where = (from: number, to: number) => `project_id = ${v.add('p')} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)} AND is_bot = 0`;
    const sql = visitsSource(q, plan, { dialect: SQLITE_DIALECT, add: (x) => v.add(x), rawWhere: where, visitor: 'visitor_id' }, spec);
    const details = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...v.list) as Array<{ detail: string }>).map((row) => row.detail);
    // The rollup part's values come first: the project, the dimension, then its days.
    return { details: details.filter((detail) => detail.includes('rollup_values')), days: v.list.slice(2, 2 + 88) };
  } finally {
    db.close();
  }
}

describe('the visits of the rollups on SQLite', () => {
  it("seeks one value's rows day by day, through the clean days only", async () => {
    const { details, days } = await valuesPlan({ dim: 'event_type', value: 'purchase', rawValue: 'event_type' });
    expect(details).toHaveLength(1);
    // A seek to the value in each day: with a range of days, every value of every day is read.
    expect(details[0]).toMatch(/^SEARCH rollup_values USING (COVERING )?INDEX rollup_values_by_day \(project_id=\? AND dim=\? AND day=\? AND is_bot=\? AND value=\?\)/);
    expect(days).toEqual(Array.from({ length: 89 }, (_, i) => i + 1).filter((day) => day !== 40));
  });

  it("reads a dimension's every value over the range of days", async () => {
    const { details } = await valuesPlan({ dim: 'page', value: null, rawValue: 'path' });
    expect(details).toHaveLength(1);
    expect(details[0]).toMatch(/^SEARCH rollup_values USING (COVERING )?INDEX rollup_values_by_day \(project_id=\? AND dim=\? AND day>\? AND day<\?\)/);
  });
});
