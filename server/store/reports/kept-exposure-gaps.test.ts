import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../sqlite/sqlite-store.js';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import type { ReportQuery } from '../report-store.js';
import { SQLITE_DIALECT } from './dialect.js';
import { createReportStore } from './report-queries.js';
import { StoreError } from '../store-error.js';

/*
 * When the experiment report's kept cells answer, on a real database that no background refresh
 * touches (the rollup contract, test-support/store/rollup.contract.ts, checks their answers with
 * a store's refresher running): a day marked after the build, and the days after it, are read as
 * the rollups read them while the cells answer for the days before it; a refreshed day starts a
 * new build.
 */

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'kept-exposure-gaps-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A file with six days of a generated project ending two days ago, rolled up by a store that is
 * then closed (so no background refresh runs), opened again on a connection of the test's own.
 */
async function rolledUp(name: string, seed: number): Promise<{ db: Database.Database; projectId: string; today: number }> {
  const path = join(dir, `${name}.db`);
  const projectId = newProjectId();
  const today = Math.floor(Date.now() / DAY);
  const store = createSqliteStore({ path });
  await store.init();
  await store.write({ events: [...generateProject({ projectId, start: (today - 8) * DAY, days: 6, sessions: 150, seed, idPrefix: name })], chunks: [] });
  while ((await store.reports.refreshRollups()) > 0);
  await store.close();
  return { db: new Database(path), projectId, today };
}

describe('the experiment report\'s kept cells', () => {
  it('answer the days before a marked or refreshed day, the rollups and the events the rest, and are built again after a refresh', async () => {
    // The store's SQL on a connection of the test's own, with no background refresh.
    const { db, projectId, today } = await rolledUp('marked', 4);
    try {
      let refreshes = 0;
      let pieces = 0;
      const run = async (sql: string, values: unknown[]) => {
        if (sql.includes('ORDER BY day, kind')) pieces++;
        return db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      };
      const reports = createReportStore(SQLITE_DIALECT, run, {
        // Only the rollups' plan is asked of it here: a refresh is the test's own UPDATE below.
        refreshNext: async () => {
          refreshes++;
          return null;
        },
      });
      // The same SQL without rollups reads the events alone.
      const events = createReportStore(SQLITE_DIALECT, run);
      const q = (from: number): ReportQuery => ({ projectId, from: from * DAY, to: (today - 2) * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' });
      const report = (from: number) => reports.experiment(q(from), 'checkout-button', 'purchase');
      const truth = (from: number) => events.experiment(q(from), 'checkout-button', 'purchase');
      const before = await report(today - 8);
      expect(before).toEqual(await truth(today - 8));
      await reports.keptSettled();
      const built = pieces;
      expect(built).toBeGreaterThan(0);
      // The cells are read: a change to a day's exposure rows does not show.
      db.prepare("UPDATE rollup_exposures SET variant = 'zzz' WHERE project_id = ? AND day = ?").run(projectId, today - 6);
      expect(await report(today - 8)).toEqual(before);

      // Late on day -4, as a write makes them: an exposure of a new visitor, a conversion of a
      // visitor the cells hold as exposed and not converted, and the day's mark.
      const copy = (id: string, set: string, ...values: unknown[]) => {
        db.exec('DROP TABLE IF EXISTS temp.late; CREATE TEMP TABLE late AS SELECT * FROM events WHERE 0');
        db.prepare('INSERT INTO temp.late SELECT * FROM events WHERE event_id = ?').run(id);
        db.prepare(`UPDATE temp.late SET ${set}`).run(...values);
        db.exec('INSERT INTO events SELECT * FROM temp.late');
      };
      const at = (today - 4) * DAY + 3_600_000;
      const exposure = db.prepare("SELECT event_id FROM events WHERE project_id = ? AND event_type = 'experiment_exposure' AND timestamp >= ? AND timestamp < ? LIMIT 1").get(projectId, (today - 4) * DAY, (today - 3) * DAY) as { event_id: string };
      copy(exposure.event_id, "event_id = 'late-x', anonymous_id = 'late-visitor', session_id = 'late-session'");
      const unconverted = db
        .prepare(
          `SELECT anonymous_id FROM events x WHERE project_id = ? AND event_type = 'experiment_exposure' AND timestamp < ? AND anonymous_id IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM events c WHERE c.project_id = x.project_id AND c.event_type = 'purchase' AND c.anonymous_id = x.anonymous_id) LIMIT 1`,
        )
        .get(projectId, (today - 5) * DAY) as { anonymous_id: string };
      const purchase = db.prepare("SELECT event_id FROM events WHERE project_id = ? AND event_type = 'purchase' LIMIT 1").get(projectId) as { event_id: string };
      copy(purchase.event_id, "event_id = 'late-c', anonymous_id = ?, session_id = 'late-session-2', timestamp = ?", unconverted.anonymous_id, at);
      db.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING').run(projectId, today - 4);
      // The cells answer for the days before it (a change to their rows does not show), the rest is
      // read as the rollups read it (the marked day from the events): the events' answer.
      const held = db.prepare('SELECT rowid, variant FROM rollup_exposures WHERE project_id = ? AND day >= ? AND day <= ?').all(projectId, today - 8, today - 5) as Array<{
        rowid: number;
        variant: string;
      }>;
      db.prepare("UPDATE rollup_exposures SET variant = 'before' WHERE project_id = ? AND day >= ? AND day <= ?").run(projectId, today - 8, today - 5);
      const marked = await report(today - 8);
      for (const row of held) db.prepare('UPDATE rollup_exposures SET variant = ? WHERE rowid = ?').run(row.variant, row.rowid);
      expect(marked).toEqual(await truth(today - 8));
      expect(marked).not.toEqual(before);
      // A mark starts no build: the refresh that clears it will.
      await reports.keptSettled();
      expect(pieces).toBe(built);

      // The day refreshed: its mark gone, its version moved (what a refresh does, its rows aside).
      db.prepare('DELETE FROM rollup_dirty WHERE project_id = ? AND day = ?').run(projectId, today - 4);
      db.prepare('INSERT INTO rollup_versions (project_id, day, version) VALUES (?, ?, 1) ON CONFLICT (project_id, day) DO UPDATE SET version = version + 1').run(projectId, today - 4);
      await report(today - 8);
      await reports.keptSettled();
      expect(pieces).toBeGreaterThan(built);
      // The cells built again read the rollups as they are (day -6's 'zzz' rows), and are read after.
      const rebuilt = await report(today - 8);
      expect(rebuilt.some((v) => v.variant === 'zzz')).toBe(true);
      db.prepare("UPDATE rollup_exposures SET variant = 'yyy' WHERE project_id = ? AND variant = 'zzz'").run(projectId);
      expect(await report(today - 8)).toEqual(rebuilt);
      expect(refreshes).toBe(0);
    } finally {
      db.close();
    }
  });

  it('are given up until the next day when they would take more than their budget alone', async () => {
    const { db, projectId, today } = await rolledUp('budget', 5);
    try {
      let pieces = 0;
      let clock = Date.now();
      const reports = createReportStore(
        SQLITE_DIALECT,
        async (sql, values) => {
          if (sql.includes('ORDER BY day, kind')) pieces++;
          return db.prepare(sql).all(...(values as unknown[])) as Array<Record<string, unknown>>;
        },
        { refreshNext: async () => null, keptCells: { maxBytes: 100, now: () => clock } },
      );
      const q: ReportQuery = { projectId, from: (today - 8) * DAY, to: (today - 2) * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      const report = () => reports.experiment(q, 'checkout-button', 'purchase');
      const answer = await report();
      await reports.keptSettled();
      const built = pieces;
      expect(built).toBeGreaterThan(0);
      // Not kept (a change to the rollups shows), and not built again the same day.
      db.prepare("UPDATE rollup_exposures SET variant = 'zzz' WHERE project_id = ? AND day = ?").run(projectId, today - 6);
      const changed = await report();
      expect(changed).not.toEqual(answer);
      await reports.keptSettled();
      expect(pieces).toBe(built);
      // The next day, tried again.
      clock += DAY;
      expect(await report()).toEqual(changed);
      await reports.keptSettled();
      expect(pieces).toBeGreaterThan(built);
    } finally {
      db.close();
    }
  });

  it('are built after a first read that failed (past the read budget, say), and answer the next', async () => {
    const { db, projectId, today } = await rolledUp('refused', 6);
    try {
      let refuse = true;
      const reports = createReportStore(
        SQLITE_DIALECT,
        async (sql, values) => {
          // The report's own read from the rollups fails once, as a read past its budget does.
          if (refuse && sql.includes('LEFT JOIN c ON')) {
            refuse = false;
            throw new StoreError('BUSY', 'past the read budget');
          }
          return db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
        },
        { refreshNext: async () => null },
      );
      const q: ReportQuery = { projectId, from: (today - 8) * DAY, to: (today - 2) * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      await expect(reports.experiment(q, 'checkout-button', 'purchase')).rejects.toThrow(/budget/);
      await reports.keptSettled();
      const answer = await reports.experiment(q, 'checkout-button', 'purchase');
      expect(answer.length).toBeGreaterThan(0);
      // From the cells: a change to the rollups does not show.
      db.prepare("UPDATE rollup_exposures SET variant = 'zzz' WHERE project_id = ?").run(projectId);
      expect(await reports.experiment(q, 'checkout-button', 'purchase')).toEqual(answer);
    } finally {
      db.close();
    }
  });
});
