import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { writeProject } from '../../../test-support/server/report-fixtures.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';
import { registerSketchOf } from '../sqlite/sketch-of-function.js';
import { createSketchKit } from '../aggregates/visitor-sketch.js';
import { BUILT_IN_EVENT_TYPES, FILTER_DIMENSIONS, type FilterDimension, type ReportQuery } from '../report-store.js';
import { SQLITE_DIALECT } from './dialect.js';
import { createFilteredTops } from './filtered-tops.js';
import { createFilteredAhead } from './filtered-ahead.js';
import { prepareSqliteFilteredKeep, prepareSqliteSessionDaysKeep } from './report-keep.js';
import { createReportStore } from './report-queries.js';
import { planDays } from './rollup-queries.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 5);
const dir = mkdtempSync(join(tmpdir(), 'filtered-tops-test-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A SQLite file of six days of generated events with their rollups built, opened as the reader
 * thread opens it (with `sa_sketch_of`), and the store's keep on it.
 */
async function sixDays(name: string, seed: number) {
  const path = join(dir, name);
  const projectId = newProjectId();
  const store = createSqliteStore({ path });
  await store.init();
  try {
    await writeProject(store, { projectId, start: START, days: 6, sessions: 150, seed }, 500);
    while ((await store.reports.refreshRollups()) > 0);
  } finally {
    await store.close();
  }
  const db = new Database(path);
  registerSketchOf(db, createSketchKit());
  return { projectId, db, keep: prepareSqliteFilteredKeep(db, createSketchKit()) };
}

describe('filtered top lists', () => {
  it('keeps the days it has read as it reads them, so that a first view refused part way (past the read budget) leaves them kept', async () => {
    const { projectId, db, keep } = await sixDays('partial.db', 41);
    try {
      let dayStatements = 0;
      // The second read of missing days is refused, as SQLite's reader refuses a read past its budget.
      const run = async (sql: string, values: unknown[]) => {
        if (sql.includes('rollup_versions') && ++dayStatements === 2) throw new Error('past the read budget');
        return db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      };
      const { top } = createFilteredTops(SQLITE_DIALECT, run, { keep: async (k) => keep(k), sketchOf: () => (key) => `sa_sketch_of(${key})` });
      const q: ReportQuery = { projectId, from: START, to: START + 6 * DAY, filters: { device: 'mobile' }, includeBots: false, visitorKey: 'anonymous' };
      const plan = await planDays(q, run, SQLITE_DIALECT);
      await expect(top(q, ['device', 'mobile'], 'page', 10, plan)).rejects.toThrow('past the read budget');
      const keptDays = () =>
        (db.prepare("SELECT day FROM rollup_filtered WHERE project_id = ? AND dim = 'page' AND value IS NULL ORDER BY day").all(projectId) as Array<{ day: number }>).map((r) => r.day);
      // The first read is one day; it stays kept.
      expect(keptDays()).toEqual([START / DAY]);
      // The next view reads that day kept and the other five from the events, and keeps them.
      const answer = await top(q, ['device', 'mobile'], 'page', 10, plan);
      expect(keptDays()).toEqual([0, 1, 2, 3, 4, 5].map((i) => START / DAY + i));
      const direct = db
        .prepare(
          `SELECT path AS value, COUNT(*) AS events, COUNT(DISTINCT COALESCE(anonymous_id, visitor_id)) AS visitors FROM events
           WHERE project_id = ? AND timestamp >= ? AND timestamp < ? AND is_bot = 0 AND device = 'mobile' AND event_type = 'page_view' AND path IS NOT NULL
           GROUP BY path ORDER BY events DESC, path LIMIT 10`,
        )
        .all(projectId, q.from, q.to);
      // Fewer than 256 visitors a value: the sketches are exact.
      expect(answer).toEqual(direct);
      expect(await top(q, ['device', 'mobile'], 'page', 10, plan)).toEqual(direct);
    } finally {
      db.close();
    }
  });
  it("reads each day's events once for the overview's top lists of one filter asked at once, and keeps every dimension", async () => {
    const { projectId, db, keep } = await sixDays('overview.db', 43);
    try {
      /** The days each read of missing days covered. */
      const read: number[] = [];
      // Each statement answers a little later, as from a reader thread or a pooled connection.
      let reading = 0;
      let mostAtOnce = 0;
      const run = async (sql: string, values: unknown[]) => {
        const days = sql.includes('rollup_versions');
        if (days) mostAtOnce = Math.max(mostAtOnce, ++reading);
        try {
          await new Promise((resolve) => setTimeout(resolve, 1));
          if (days) read.push((Number(values[2]) - Number(values[1])) / DAY); // [project, from, to, …]
          return db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
        } finally {
          if (days) reading--;
        }
      };
      const { top } = createFilteredTops(SQLITE_DIALECT, run, { keep: async (k) => keep(k), sketchOf: () => (key) => `sa_sketch_of(${key})` });
      const q: ReportQuery = { projectId, from: START, to: START + 6 * DAY, filters: { browser: 'Chrome' }, includeBots: false, visitorKey: 'anonymous' };
      const plan = await planDays(q, run, SQLITE_DIALECT);
      const overview = ['page', 'referrer', 'channel', 'browser', 'os', 'device', 'country', 'custom_event'] as const;
      const first = await Promise.all(overview.map((dimension) => top(q, ['browser', 'Chrome'], dimension, 10, plan)));
      expect(read.reduce((a, b) => a + b, 0)).toBe(6);
      // Side by side, but two reads of the events at most at a time.
      expect(mostAtOnce).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const kept = db.prepare('SELECT dim, COUNT(*) AS days FROM rollup_filtered WHERE project_id = ? AND value IS NULL GROUP BY dim ORDER BY dim').all(projectId);
      expect(kept).toEqual([...FILTER_DIMENSIONS].sort().map((dim) => ({ dim, days: 6 })));
      // Every list as the events count it (fewer than 256 visitors a value: sketches are exact), then as kept.
      const direct = (column: string, pages: boolean, exclude: readonly string[] = []) =>
        db
          .prepare(
            `SELECT ${column} AS value, COUNT(*) AS events, COUNT(DISTINCT COALESCE(anonymous_id, visitor_id)) AS visitors FROM events
             WHERE project_id = ? AND timestamp >= ? AND timestamp < ? AND is_bot = 0 AND browser = 'Chrome' AND ${column} IS NOT NULL
             ${pages ? "AND event_type = 'page_view'" : ''} ${exclude.length > 0 ? `AND ${column} NOT IN (${exclude.map(() => '?').join(', ')})` : ''}
             GROUP BY ${column} ORDER BY events DESC, ${column} LIMIT 10`,
          )
          .all(projectId, q.from, q.to, ...exclude);
      expect(first[0]).toEqual(direct('path', true));
      expect(first[1]).toEqual(direct('referrer_host', true));
      expect(first[5]).toEqual(direct('device', true));
      expect(first[7]).toEqual(direct('event_type', false, BUILT_IN_EVENT_TYPES));
      expect(first[0]!.length).toBeGreaterThan(1);
      read.length = 0;
      expect(await Promise.all(overview.map((dimension) => top(q, ['browser', 'Chrome'], dimension, 10, plan)))).toEqual(first);
      expect(read).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('filtered top lists kept ahead', () => {
  it("keeps every value with at least the threshold's events on a clean past day, no other, newest days first, and only while no report reads", async () => {
    const { projectId, db, keep } = await sixDays('ahead.db', 47);
    try {
      const statements: string[] = [];
      const run = async (sql: string, values: unknown[]) => {
        statements.push(sql);
        return db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      };
      const tops = createFilteredTops(SQLITE_DIALECT, run, { keep: async (k) => keep(k), sketchOf: () => (key) => `sa_sketch_of(${key})` });
      const minEvents = 40;
      let busy = true;
      let now = START + 5 * DAY + 1000;
      /** The days of the keeps, in the order asked. */
      const keptDays: number[] = [];
      const keepDay: typeof tops.keepDay = (project, filter, day) => (keptDays.push(day), tops.keepDay(project, filter, day));
      // The sixth day is today: not kept ahead (its rollups are built again as it goes on).
      const ahead = createFilteredAhead(SQLITE_DIALECT, run, { keepDay, busy: () => busy, minEvents, now: () => now });
      expect(await ahead(true)).toBe(false);
      expect(statements).toEqual([]);
      busy = false;
      const heavy = (db.prepare(
        `SELECT dim AS filter_dim, value AS filter_value, day FROM rollup_values WHERE project_id = ? AND dim != '' AND day < ?
         GROUP BY dim, value, day HAVING SUM(events) >= ? ORDER BY 1, 2, 3`,
      ).all(projectId, START / DAY + 5, minEvents) as Array<{ filter_dim: string; filter_value: string; day: number }>);
      const light = db.prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM rollup_values WHERE project_id = ? AND dim != '' GROUP BY dim, value, day HAVING SUM(events) < ?)`).get(projectId, minEvents) as { n: number };
      expect(heavy.length).toBeGreaterThan(5);
      expect(light.n).toBeGreaterThan(5);
      const keptFilters = () =>
        db.prepare(`SELECT DISTINCT filter_dim, filter_value, day FROM rollup_filtered WHERE project_id = ? AND value IS NULL ORDER BY 1, 2, 3`).all(projectId);
      let turns = 0;
      while (await ahead(true)) expect(++turns).toBeLessThan(500);
      expect(keptFilters()).toEqual(heavy);
      // A day's events read once for all its values (fewer events than a turn's bound).
      expect(keptDays).toHaveLength(5);
      expect(statements.filter((sql) => sql.includes('FROM events'))).toHaveLength(5);
      // Newest first.
      expect(new Set(keptDays).size).toBe(5);
      expect(keptDays).toEqual([...keptDays].sort((a, b) => b - a));
      // Done: a turn now reads nothing (the list of days is read again a few seconds later).
      statements.length = 0;
      expect(await ahead()).toBe(false);
      expect(statements).toEqual([]);
      // A top list of a heavy value over a day where it is heavy reads no event.
      const { filter_dim: dim, filter_value: value, day } = heavy[0]!;
      const q: ReportQuery = { projectId, from: day * DAY, to: (day + 1) * DAY, filters: { [dim]: value }, includeBots: false, visitorKey: 'anonymous' };
      const plan = await planDays(q, run, SQLITE_DIALECT);
      const keptBefore = keptFilters();
      statements.length = 0;
      await tops.top(q, [dim as FilterDimension, value], 'page', 10, plan);
      expect(statements.filter((sql) => sql.includes('FROM events'))).toEqual([]);
      expect(keptFilters()).toEqual(keptBefore);

      // The day built again (as a refresh does: its kept rows deleted, its version bumped) is kept
      // again once it has stood half an hour unchanged: a day late events reach is built every ten minutes.
      db.prepare('DELETE FROM rollup_filtered WHERE project_id = ? AND day = ?').run(projectId, day);
      db.prepare('UPDATE rollup_versions SET version = version + 1 WHERE project_id = ? AND day = ?').run(projectId, day);
      now += 61_000;
      keptDays.length = 0;
      expect(await ahead(true)).toBe(false);
      now += 20 * 60_000;
      expect(await ahead(true)).toBe(false);
      expect(keptDays).toEqual([]);
      now += 10 * 60_000;
      while (await ahead(true)) expect(++turns).toBeLessThan(1000);
      expect(keptFilters()).toEqual(heavy);
      expect(new Set(keptDays)).toEqual(new Set([day]));
    } finally {
      db.close();
    }
  });

  it('reads a value of a day at most three times per version of the day, when its keep never lands', async () => {
    const { projectId, db } = await sixDays('ahead-refused.db', 48);
    try {
      const run = async (sql: string, values: unknown[]) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      const asked: string[] = [];
      // A keep that never lands, as when every day is built again before its keep.
      const ahead = createFilteredAhead(SQLITE_DIALECT, run, {
        keepDay: async (_project, filters, day) => void asked.push(...filters.map(([dim, value]) => `${dim} ${value} ${day}`)),
        busy: () => false,
        minEvents: 40,
        now: () => START + 5 * DAY + 1000,
      });
      let turns = 0;
      while (await ahead()) expect(++turns).toBeLessThan(500);
      const heavy = db
        .prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM agg_values WHERE project_id = ? AND dim != '' AND dim != 'error_message' AND grain = 1 AND bucket < ? GROUP BY dim, value, bucket HAVING SUM(events) >= 40)`)
        .get(projectId, START / DAY + 5) as { n: number };
      expect(heavy.n).toBeGreaterThan(5);
      expect(asked).toHaveLength(3 * heavy.n);
      expect(new Set(asked).size).toBe(heavy.n);
    } finally {
      db.close();
    }
  });

  it("takes a day's values a turn as long as their events add up to the turn's bound, and one value past it", async () => {
    const { projectId, db } = await sixDays('ahead-bound.db', 50);
    try {
      const run = async (sql: string, values: unknown[]) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      const counts = new Map(
        (
          db
            .prepare(`SELECT dim, value, bucket AS day, SUM(events) AS n FROM agg_values WHERE project_id = ? AND grain = 1 AND dim != '' AND bucket < ? GROUP BY dim, value, bucket`)
            .all(projectId, START / DAY + 5) as Array<{ dim: string; value: string; day: number; n: number }>
        ).map((r) => [`${r.dim} ${r.value} ${r.day}`, r.n]),
      );
      // A bound below the largest value's count, so that one value alone is past it.
      const bound = Math.max(...[...counts].filter(([key, n]) => n >= 40 && FILTER_DIMENSIONS.includes(key.split(' ')[0] as FilterDimension)).map(([, n]) => n)) - 1;
      const batches: string[][] = [];
      const ahead = createFilteredAhead(SQLITE_DIALECT, run, {
        keepDay: async (_project, filters, day) => void batches.push(filters.map(([dim, value]) => `${dim} ${value} ${day}`)),
        busy: () => false,
        minEvents: 40,
        eventsATurn: bound,
        now: () => START + 5 * DAY + 1000,
      });
      let turns = 0;
      while (await ahead()) expect(++turns).toBeLessThan(2000);
      const sizes = batches.map((batch) => batch.reduce((sum, filter) => sum + (counts.get(filter) ?? Infinity), 0));
      expect(sizes.every((n, i) => n <= bound || batches[i]!.length === 1)).toBe(true);
      expect(batches.some((batch) => batch.length > 1)).toBe(true);
      expect(sizes.some((n) => n > bound)).toBe(true);
      // Where a read is one value's (no sketches in the database), a turn is one value.
      const single: number[] = [];
      const one = createFilteredAhead(SQLITE_DIALECT, run, {
        keepDay: async (_project, filters) => void single.push(filters.length),
        busy: () => false,
        minEvents: 40,
        manyValuesARead: () => false,
        now: () => START + 5 * DAY + 1000,
      });
      while (await one()) expect(++turns).toBeLessThan(4000);
      expect(single.length).toBeGreaterThan(batches.length);
      expect(single.every((n) => n === 1)).toBe(true);
      // A failed turn (a read past its budget) makes the next ones a quarter as large.
      const tried: Array<{ events: number; values: number }> = [];
      const failing = createFilteredAhead(SQLITE_DIALECT, run, {
        keepDay: async (_project, filters, day) => {
          tried.push({ events: filters.reduce((sum, [dim, value]) => sum + (counts.get(`${dim} ${value} ${day}`) ?? 0), 0), values: filters.length });
          if (tried.length === 1) throw new Error('past the read budget');
        },
        busy: () => false,
        minEvents: 40,
        eventsATurn: 1000,
        now: () => START + 5 * DAY + 1000,
      });
      await expect(failing()).rejects.toThrow('past the read budget');
      await failing();
      expect(tried[0]!.values).toBeGreaterThan(1);
      expect(tried[0]!.events).toBeLessThanOrEqual(1000);
      expect(tried[1]!.events <= 250 || tried[1]!.values === 1).toBe(true);
      expect(tried[1]!.values).toBeLessThan(tried[0]!.values);
    } finally {
      db.close();
    }
  });

  it("reads ahead through the background's own run, so a report never waits behind it, and a turn yields to a report in flight with false", async () => {
    const { projectId, db, keep } = await sixDays('ahead-background.db', 49);
    try {
      const keepDays = prepareSqliteSessionDaysKeep(db);
      const direct = (sql: string, values: unknown[]) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>;
      const reportStatements: string[] = [];
      const backgroundStatements: string[] = [];
      /** While set, the reports' statements wait for it (as behind a read on SQLite's one reader thread). */
      let reportsHeld: Promise<void> | null = null;
      /** While set, the reports' reads of events wait for it, counted in `eventsInFlight`. */
      let reportEventsHeld: Promise<void> | null = null;
      let eventsInFlight = 0;
      /** While set, the background's reads of events wait for it; `onEventsHeld` is called when one starts waiting. */
      let eventsHeld: Promise<void> | null = null;
      let onEventsHeld = () => {};
      const eventsReached = new Promise<void>((resolve) => (onEventsHeld = resolve));
      const gate = () => {
        let open = () => {};
        return { closed: new Promise<void>((resolve) => (open = resolve)), open: () => open() };
      };
      const reports = createReportStore(
        SQLITE_DIALECT,
        async (sql, values) => {
          reportStatements.push(sql);
          if (reportsHeld !== null) await reportsHeld;
          if (reportEventsHeld !== null && sql.includes('FROM events')) {
            eventsInFlight++;
            await reportEventsHeld;
            eventsInFlight--;
          }
          return direct(sql, values);
        },
        {
          runBackground: async (sql, values) => {
            backgroundStatements.push(sql);
            if (eventsHeld !== null && sql.includes('FROM events')) {
              onEventsHeld();
              await eventsHeld;
            }
            return direct(sql, values);
          },
          refreshNext: async () => null,
          aggregates: true,
          sessionSummaries: true,
          keepFiltered: async (k) => keep(k),
          keepSessionDays: async (k) => keepDays(k),
          sketchOf: () => (key) => `sa_sketch_of(${key})`,
          keepAhead: { minEvents: 40, now: () => START + 5 * DAY + 1000 },
        },
      );
      const q: ReportQuery = { projectId, from: START, to: START + 5 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };

      // A turn while a report's statement is in flight reads nothing and says false, so the
      // refresher's loop of turns ends (on true it called again at once and held the event loop).
      const reportsGate = gate();
      reportsHeld = reportsGate.closed;
      const report = reports.totals(q);
      await vi.waitFor(() => expect(reportStatements.length).toBeGreaterThan(0));
      expect(await reports.keepFilteredAhead(true)).toBe(false);
      expect(backgroundStatements).toEqual([]);
      reportsHeld = null;
      reportsGate.open();
      await report;

      // Turns until one is held in its read of a value's day; reports answer meanwhile.
      const eventsGate = gate();
      eventsHeld = eventsGate.closed;
      let turn: Promise<boolean> = Promise.resolve(true);
      for (let turns = 0; ; turns++) {
        expect(turns).toBeLessThan(20);
        turn = reports.keepFilteredAhead(true);
        if ((await Promise.race([turn.then(() => 'turned'), eventsReached.then(() => 'held')])) === 'held') break;
      }
      const [, pages, sessions] = await Promise.all([reports.totals(q), reports.top(q, 'page', 10), reports.sessions(q)]);
      expect(pages.length).toBeGreaterThan(0);
      expect(sessions.sessions).toBeGreaterThan(0);
      // A top list filtered by any value the background keeps ahead, the one held among them,
      // answers too: a report reads such a day itself rather than wait for the background's read.
      const aheadValues = db
        .prepare(
          `SELECT DISTINCT dim, value FROM agg_values WHERE project_id = ? AND dim IN (${FILTER_DIMENSIONS.map((dim) => `'${dim}'`).join(', ')}) AND grain = 1
           GROUP BY dim, value, bucket HAVING SUM(events) >= 40`,
        )
        .all(projectId) as Array<{ dim: FilterDimension; value: string }>;
      expect(aheadValues.length).toBeGreaterThan(5);
      // Two first views at once read side by side: the background's read takes no turn of theirs.
      const reportEventsGate = gate();
      reportEventsHeld = reportEventsGate.closed;
      const [a, b] = aheadValues as [(typeof aheadValues)[number], (typeof aheadValues)[number]];
      const firstViews = Promise.all([a, b].map(({ dim, value }) => reports.top({ ...q, filters: { [dim]: value } }, 'page', 10)));
      await vi.waitFor(() => expect(eventsInFlight).toBe(2));
      reportEventsHeld = null;
      reportEventsGate.open();
      await firstViews;
      for (const { dim, value } of aheadValues) await reports.top({ ...q, filters: { [dim]: value } }, 'page', 10);
      const reportsRan = reportStatements.length;
      eventsHeld = null;
      eventsGate.open();
      await turn;

      // Every turn to the end: its reads, of both kinds kept ahead, all through the background's run.
      let more = 0;
      while (await reports.keepFilteredAhead()) expect(++more).toBeLessThan(500);
      expect(reportStatements).toHaveLength(reportsRan);
      expect(backgroundStatements.some((sql) => sql.includes('agg_session_state'))).toBe(true);
      const kept = db
        .prepare('SELECT (SELECT COUNT(*) FROM rollup_filtered WHERE project_id = ?) AS tops, (SELECT COUNT(*) FROM rollup_kept_sessions WHERE project_id = ?) AS sessions')
        .get(projectId, projectId) as { tops: number; sessions: number };
      expect(kept.tops).toBeGreaterThan(0);
      expect(kept.sessions).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });
});
