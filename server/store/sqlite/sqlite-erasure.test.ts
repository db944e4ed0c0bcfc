import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { NO_DIMENSIONS, makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import type { StoredEvent } from '../event-store.js';
import { isStoreError } from '../store-error.js';
import type { ReportQuery } from '../report-store.js';
import { SQLITE_DIALECT } from '../reports/dialect.js';
import { sqliteRefreshSql } from '../reports/rollup-refresh.js';
import { finerOf, GRAIN_DAY, GRAIN_HOUR, GRAIN_WEEK, SKETCH_COLUMNS } from '../aggregates/aggregate-schema.js';
import { unionSketchBytes } from '../aggregates/visitor-sketch.js';
import { sqliteErasureSql } from './sqlite-erasure.js';
import { createSqliteStore } from './sqlite-store.js';

/*
 * Where the SQLite erasure runs and what it reads (`sqlite-erasure.ts`). What it leaves behind, and
 * that every report stays exact, is the contract suites' part (`event-store.contract.ts`,
 * `rollup.contract.ts`, `aggregate.contract.ts`); here: it runs off the request thread, and it
 * finds its rows through indexes, never by reading every event of the project; and a refresh in
 * flight, which it races on the refresh thread, installs nothing an erasure made stale.
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

  it('leaves no answer kept for a retry that still shows the erased user\'s events', async () => {
    const path = join(dir, 'kept.db');
    // A budget of 1 ms: a page of 1,000 events is refused past it, and is answered only from the
    // answer its refused read went on to compute (sqlite-reader.ts), which is what is looked at.
    const store = createSqliteStore({ path, readBudgetMs: 1, readThreads: 1 });
    await store.init();
    try {
      const projectId = newProjectId();
      await store.createProject(makeProject(projectId));
      const events: StoredEvent[] = [...generateProject({ projectId, start: START, days: 2, sessions: 400, seed: 5, idPrefix: 'k' })];
      await store.write({ events, chunks: [] });
      const page = { projectId, limit: 1000 };
      const firstPage = [...events].sort((a, b) => a.timestamp - b.timestamp || (a.eventId < b.eventId ? -1 : 1)).slice(0, 1000);
      const user = firstPage.find((e) => e.userId !== null)?.userId as string;
      /** The page, asked until answered; and whether a refusal said its read goes on. */
      const answered = async () => {
        let continued = false;
        for (let i = 0; i < 500; i++) {
          const rows = await store.exportEvents(page).catch((error: unknown) => {
            if (!isStoreError(error) || error.code !== 'BUSY') throw error;
            continued ||= error.continues;
            return null;
          });
          if (rows !== null) return { rows, continued };
        }
        throw new Error('never answered');
      };
      const before = await answered();
      expect(before.continued).toBe(true);
      expect(before.rows.some((row) => row.userId === user)).toBe(true);
      await store.deleteUser(projectId, user);
      // Without the erasure forgetting it, the answer kept from before would be served here.
      const after = await answered();
      expect(after.rows.some((row) => row.userId === user)).toBe(false);
      expect(after.rows).toHaveLength(1000);
    } finally {
      await store.close();
    }
  });

  it('merges the user\'s day and week rows again to exactly the union of their finer rows, past the exact range too', async () => {
    const path = join(dir, 'merged.db');
    const store = createSqliteStore({ path });
    await store.init();
    const projectId = newProjectId();
    try {
      await store.createProject(makeProject(projectId));
      // A busy day (over 256 sessions an hour: hour rows of registers, whose day row is merged
      // again register by register) and a quiet one in the same week.
      const day = START + 2 * 86_400_000;
      const events = [...generateProject({ projectId, start: day, days: 1, sessions: 8_000, seed: 7, idPrefix: 'm' }), ...generateProject({ projectId, start: day + 86_400_000, days: 1, sessions: 300, seed: 8, idPrefix: 'q' })];
      for (let i = 0; i < events.length; i += 5_000) await store.write({ events: events.slice(i, i + 5_000), chunks: [] });
      const counts = new Map<string, number>();
      for (const e of events) if (e.userId !== null) counts.set(e.userId, (counts.get(e.userId) ?? 0) + 1);
      const user = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] as string;
      const db = new Database(path, { readonly: true });
      try {
        const type = (grain: number, column: string) =>
          (db.prepare(`SELECT hex(substr(${column}, 1, 1)) AS t FROM agg_values WHERE project_id = ? AND dim = '' AND grain = ? ORDER BY ${column} IS NULL, length(${column}) DESC LIMIT 1`).get(projectId, grain) as { t: string }).t;
        expect(type(GRAIN_HOUR, 'sessions')).toBe('13');
        expect(['13', '14']).toContain(type(GRAIN_DAY, 'sessions'));
      } finally {
        db.close();
      }
      expect((await store.deleteUser(projectId, user)).events).toBe(counts.get(user));
    } finally {
      await store.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      type AggRow = { dim: string; grain: number; bucket: number; value: string; is_bot: number; events: number; page_views: number } & Record<string, Buffer | null>;
      const rows = db.prepare(`SELECT dim, grain, bucket, value, is_bot, events, page_views, ${SKETCH_COLUMNS.join(', ')} FROM agg_values WHERE project_id = ?`).all(projectId) as AggRow[];
      let compared = 0;
      for (const grain of [GRAIN_DAY, GRAIN_WEEK] as const) {
        const [finer, per] = finerOf(grain);
        const merged = new Map<string, { events: number; pageViews: number; sketches: Array<Uint8Array | null> }>();
        for (const row of rows) {
          if (row.grain !== finer) continue;
          const key = `${row.dim}\u0000${Math.floor(row.bucket / per)}\u0000${row.value}\u0000${row.is_bot}`;
          const into = merged.get(key) ?? { events: 0, pageViews: 0, sketches: SKETCH_COLUMNS.map(() => null) };
          into.events += row.events;
          into.pageViews += row.page_views;
          into.sketches = into.sketches.map((sketch, c) => {
            const bytes = row[SKETCH_COLUMNS[c] as string] as Buffer | null;
            return bytes === null ? sketch : unionSketchBytes(sketch, bytes);
          });
          merged.set(key, into);
        }
        const own = rows.filter((row) => row.grain === grain);
        expect(own.length).toBe(merged.size);
        for (const row of own) {
          const key = `${row.dim}\u0000${row.bucket}\u0000${row.value}\u0000${row.is_bot}`;
          const expected = merged.get(key);
          expect(expected, key).toBeDefined();
          expect([row.events, row.page_views], key).toEqual([expected?.events, expected?.pageViews]);
          SKETCH_COLUMNS.forEach((column, c) => {
            const bytes = row[column] as Buffer | null;
            expect(bytes === null ? null : Buffer.from(bytes).toString('hex'), `${key} ${column}`).toBe(expected?.sketches[c] == null ? null : Buffer.from(expected.sketches[c] as Uint8Array).toString('hex'));
          });
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(100);
    } finally {
      db.close();
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
      // The days whose rollups hold a key: a seek per key in the rows of dimension '', by visitor and by session.
      const holders = plan(db, sql.holderDays, { p: 'p', keys: '["k"]' });
      expect(holders).toContain('SEARCH rollup_values USING COVERING INDEX rollup_values_visitor_days (project_id=? AND visitor=?)');
      expect(holders).toContain('SEARCH rollup_values USING COVERING INDEX rollup_values_session_days (project_id=? AND session_id=?)');
      expect(holders).not.toMatch(/SCAN (events|rollup_values)\b/);
      // An hour's events, a rollup row of a step: by their keys.
      expect(plan(db, `SELECT ${sql.hourKeys}, ${sql.hourColumns.join(', ')} ${sql.hourFrom}`, ['p', 0, 1])).toContain('USING INDEX events_by_time (project_id=? AND timestamp>? AND timestamp<?)');
      // A day or week row's finer rows, and the row itself: by value.
      expect(plan(db, sql.readFiner, ['p', 'path', 0, 0, 24, '/', 0])).toContain('USING INDEX agg_values_by_value (project_id=? AND dim=? AND value=? AND grain=? AND bucket>? AND bucket<?)');
      expect(plan(db, sql.readSketches, ['p', 'path', 1, 0, '/', 0])).toMatch(/USING INDEX agg_values_(key|by_value) /);
      expect(plan(db, sql.deleteStep, ['p', 1, 0, '/', 'e'])).toContain('USING PRIMARY KEY (project_id=? AND day=? AND kind=? AND value=? AND event_id=?)');
      for (const text of [...sql.textKeyDeletes, ...sql.dayDeletes]) {
        const found = plan(db, text, { p: 'p', keys: '["k"]', days: '[1]', touched: '[1]' });
        expect(found).toMatch(/USING (COVERING )?INDEX rollup_((errors|exposures|filtered|kept_sessions)_by_day \(project_id=\? AND day=\?|filtered_weeks_by_week \(project_id=\? AND week=\?)\)/);
        expect(found).not.toMatch(/SCAN (events|rollup_values|rollup_filtered|rollup_filtered_weeks|rollup_kept_sessions)\b/);
      }
    } finally {
      db.close();
    }
  });
});

describe('an erasure between a refresh\'s compute and its install', () => {
  const DAY = 86_400_000;
  const HOUR = 3_600_000;
  let n = 0;
  /** An event of the visitor with anonymous id `anonymous` (a session and a visitor hash of its day). */
  const event = (projectId: string, type: string, at: number, anonymous: string, userId: string | null, properties: Record<string, string> = {}): StoredEvent => ({
    projectId,
    eventId: `race-${++n}`,
    eventType: type,
    userId,
    sessionId: `s-${anonymous}-${Math.floor(at / DAY)}`,
    timestamp: at,
    clientTimestamp: null,
    receivedAt: at,
    properties: { ...properties, anonymous_id: anonymous },
    userAgent: null,
    ipAddress: null,
    isBot: false,
    visitorId: `h-${anonymous}-${Math.floor(at / DAY)}`,
    dimensions: { ...NO_DIMENSIONS, anonymousId: anonymous },
  });

  it("drops a day's first build that holds an id of a key the erasure forgot, so the day's exposures meet the key's conversions again", async () => {
    const path = join(dir, 'race.db');
    const store = createSqliteStore({ path });
    await store.init();
    const projectId = newProjectId();
    const marked = async () => {
      const db = new Database(path, { readonly: true });
      try {
        return (db.prepare('SELECT day FROM rollup_dirty WHERE project_id = ? ORDER BY day').all(projectId) as Array<{ day: number }>).map((row) => row.day);
      } finally {
        db.close();
      }
    };
    const settle = async () => {
      for (let i = 0; i < 100 && (await marked()).length > 0; i++) await store.reports.refreshRollups();
    };
    const q: ReportQuery = { projectId, from: START, to: START + 3 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
    const answers = async () => ({ experiment: await store.reports.experiment(q, 'exp', 'purchase'), totals: await store.reports.totals(q) });
    try {
      // Day 1: the user, identified, under anonymous id 'a-u'; day 2: a purchase of 'a-u' sent
      // without the user id (kept by the erasure), and another visitor.
      await store.write({
        events: [event(projectId, 'page_view', START + DAY + HOUR, 'a-u', 'u'), event(projectId, 'purchase', START + 2 * DAY + HOUR, 'a-u', null), event(projectId, 'page_view', START + 2 * DAY + HOUR, 'a-o', null)],
        chunks: [],
      });
      await settle();
      // Day 0, with no rollup row yet: an exposure of 'a-u' before `identify()`, kept too.
      await store.write({ events: [event(projectId, 'experiment_exposure', START + HOUR, 'a-u', null, { experiment: 'exp', variant: 'green' })], chunks: [] });
      const day = START / DAY;
      expect(await marked()).toEqual([day]);
      // Day 0's refresh as the refresh thread runs it (`prepareSqliteRefresh`), the erasure between its two transactions.
      const db = new Database(path);
      try {
        const sql = sqliteRefreshSql(SQLITE_DIALECT);
        for (const statement of sql.setup) db.exec(statement);
        db.exec('BEGIN');
        const marks = db.prepare(sql.marksOf).pluck().get(projectId, day);
        const values = { p: projectId, d: day, base: db.prepare(sql.lastKey).pluck().get() as number };
        for (const statement of sql.clears) db.prepare(statement).run();
        db.prepare(sql.load).run(projectId, day * DAY, (day + 1) * DAY);
        for (const statement of sql.computes) db.prepare(statement).run(values);
        db.exec('COMMIT');
        // The staged exposure holds the id 'a-u' has now.
        expect(db.prepare('SELECT COUNT(*) FROM temp.rollup_staged_exposures WHERE visitor IS NOT NULL').pluck().get()).toBe(1);
        expect((await store.deleteUser(projectId, 'u')).events).toBe(1);
        db.exec('BEGIN IMMEDIATE');
        const installs = db.prepare(sql.marksOf).pluck().get(projectId, day) === marks && db.prepare(sql.lastKey).pluck().get() === values.base;
        db.exec('COMMIT');
        // The count moved: the result is dropped and the day stays marked for a refresh of its own.
        expect(installs).toBe(false);
      } finally {
        db.close();
      }
      await settle();
      const rolled = await answers();
      expect(rolled.experiment).toEqual([{ variant: 'green', exposures: 1, conversions: 1 }]);
      // The same from the events: every day marked.
      const writer = new Database(path);
      try {
        for (let d = day - 1; d <= day + 3; d++) writer.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING').run(projectId, d);
      } finally {
        writer.close();
      }
      expect(await answers()).toEqual(rolled);
    } finally {
      await store.close();
    }
  });
});
