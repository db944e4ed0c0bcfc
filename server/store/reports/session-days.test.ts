import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { sqliteSql } from '../../../test-support/store/database-locations.js';
import type { StoredEvent } from '../event-store.js';
import type { FunnelStepSpec, ReportQuery } from '../report-store.js';
import { createSqliteStore } from '../sqlite/sqlite-store.js';
import { SQLITE_DIALECT, type Values } from './dialect.js';
import { funnelDays } from './funnel-days.js';
import { createSessionDays } from './session-days.js';
import { sessionStatsDays } from './session-stats-days.js';
import { prepareSqliteSessionDaysKeep } from './report-keep.js';
import { type SourceContext, planDays, visitsSource } from './rollup-queries.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 0, 5);
const dir = mkdtempSync(join(tmpdir(), 'session-days-test-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite store on a new file, a maker of page views and other events, and a refresh of every marked day. */
async function sqliteProject(name: string) {
  const path = join(dir, `${name}.db`);
  const store = createSqliteStore({ path });
  await store.init();
  const projectId = `p-${name}`;
  const model = [...generateProject({ projectId, start: START, days: 1, sessions: 5, seed: 1, idPrefix: 'm' })].find(
    (e) => e.eventType === 'page_view' && !e.isBot && e.sessionId !== null,
  ) as StoredEvent;
  const made = (id: string, session: string, at: number, type: string, path: string | null, userId: string | null = null): StoredEvent => ({
    ...model,
    eventId: id,
    sessionId: session,
    userId,
    eventType: type,
    timestamp: at,
    receivedAt: at,
    dimensions: { ...(model.dimensions as NonNullable<StoredEvent['dimensions']>), path },
  });
  const sql = (text: string, values: unknown[] = []) => sqliteSql(path, text, values);
  const settle = async () => {
    for (let attempt = 0; attempt < 200; attempt++) {
      await store.reports.refreshRollups();
      if ((await sql('SELECT 1 FROM rollup_dirty WHERE project_id = ?', [projectId])).length === 0) return;
      await sleep(20);
    }
    throw new Error('marked days remained');
  };
  /** Waits until `days` days of the project are kept. */
  const kept = async (days: number) => {
    for (let attempt = 0; attempt < 250; attempt++) {
      if ((await sql('SELECT 1 FROM rollup_kept_sessions WHERE project_id = ? AND session_id IS NULL', [projectId])).length >= days) return;
      await sleep(20);
    }
    throw new Error('not kept');
  };
  return { path, store, projectId, made, sql, settle, kept };
}

/** The raw conditions of a report of the project without bots (and of one event type), as the report store writes them. */
function rawConditions(projectId: string, eventType?: string): (v: Values) => SourceContext {
  return (v) => ({
    dialect: SQLITE_DIALECT,
    add: (value) => v.add(value),
    rawWhere: (from, to) =>
      `project_id = ${v.add(projectId)} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)} AND is_bot = 0${eventType === undefined ? '' : ` AND event_type = ${v.add(eventType)}`}`,
    visitor: 'COALESCE(anonymous_id, visitor_id)',
  });
}

describe('reports over sessions kept per day', () => {
  it('counts a session once when it comes to span days while another comes to its day, after the range is planned', async () => {
    const { path, store, projectId, made, settle, kept } = await sqliteProject('race');
    try {
      await store.write({ events: [made('s-1', 'S', START + DAY + 10 * HOUR, 'page_view', '/'), made('t-1', 'T', START + 2 * DAY + 10 * HOUR, 'page_view', '/')], chunks: [] });
      await settle();
      // Day 2 marked again (a late event of T): the range's last day is read from the events.
      await store.write({ events: [made('t-2', 'T', START + 2 * DAY + 11 * HOUR, 'page_view', '/pricing')], chunks: [] });
      const funnel: FunnelStepSpec[] = [{ kind: 'page', value: '/' }];
      const q: ReportQuery = { projectId, from: START, to: START + 3 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      expect(await store.reports.funnel(q, funnel)).toEqual([2]);
      await kept(2);

      // The same funnel on a connection of its own, right after the range is planned: S goes on
      // after midnight (day 1 then holds one session fewer) and a new session N comes to day 1
      // (one more, and the day marked): day 1's count is the same, and its kept total is S's.
      const db = new Database(path, { readonly: true });
      try {
        let wrote = false;
        const run = async (text: string, values: unknown[]) => {
          const rows = db.prepare(text).all(...values) as Array<Record<string, unknown>>;
          if (!wrote && text.includes('FROM rollup_dirty')) {
            wrote = true;
            await store.write({ events: [made('s-2', 'S', START + 2 * DAY + 12 * HOUR, 'page_view', '/'), made('n-1', 'N', START + DAY + 12 * HOUR, 'page_view', '/pricing')], chunks: [] });
          }
          return rows;
        };
        const plan = await planDays(q, run, SQLITE_DIALECT);
        expect(plan.raw).toEqual([[START + 2 * DAY, START + 3 * DAY]]);
        const context = rawConditions(projectId);
        const report = createSessionDays(SQLITE_DIALECT, run, { keep: async () => 0 });
        // S once, across midnight, and T (N never reaches the step).
        expect(await report.read(q, funnelDays(SQLITE_DIALECT, q, funnel, context), plan)).toEqual([2]);
        expect(wrote).toBe(true);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
  });

  it('counts a session once when it comes to span between the read of the rest and a day read again after it', async () => {
    const { path, store, projectId, made, settle } = await sqliteProject('reread');
    const page = (id: string, session: string, at: number) => made(id, session, at, 'page_view', '/');
    try {
      // Each a one-day session: S on day 1, T on day 2, U on day 0, W on day 3.
      await store.write({
        events: [
          page('s1', 'S', START + DAY + 2 * HOUR),
          page('s2', 'S', START + DAY + 3 * HOUR),
          page('t1', 'T', START + 2 * DAY + 2 * HOUR),
          page('t2', 'T', START + 2 * DAY + 3 * HOUR),
          page('u1', 'U', START + 4 * HOUR),
          page('w1', 'W', START + 3 * DAY + 4 * HOUR),
        ],
        chunks: [],
      });
      await settle();
      const reader = new Database(path, { readonly: true });
      const writer = new Database(path);
      try {
        writer.pragma('busy_timeout = 5000');
        const keep = prepareSqliteSessionDaysKeep(writer);
        /** Runs once, right after the statement that reads the rest of the range. */
        let between: (() => Promise<void>) | null = null;
        const run = async (text: string, values: unknown[]) => {
          const rows = reader.prepare(text).all(...values) as Array<Record<string, unknown>>;
          if (between !== null && text.startsWith('WITH cs AS')) {
            const once = between;
            between = null;
            await once();
          }
          return rows;
        };
        const report = createSessionDays(SQLITE_DIALECT, run, { keep: async (k) => keep(k) });
        const q: ReportQuery = { projectId, from: START, to: START + 4 * DAY, filters: { event_type: 'page_view' }, includeBots: false, visitorKey: 'anonymous' };
        const context = rawConditions(projectId, 'page_view');
        const sessions = async () => {
          const plan = await planDays(q, run, SQLITE_DIALECT);
          const visits = (v: Values, days: typeof plan) => visitsSource(q, days, context(v), { dim: 'event_type', value: 'page_view', rawValue: "''" });
          return (await report.read(q, sessionStatsDays(SQLITE_DIALECT, q, visits, context), plan))?.[0];
        };
        expect(await sessions()).toBe(4);
        expect(await sessions()).toBe(4);
        // T comes to span (a late event on day 3, marked, read from the events): day 2 is read again
        // after the rest. Before that, S comes to span into day 2, and day 2 is built again.
        await store.write({ events: [page('t3', 'T', START + 3 * DAY + 5 * HOUR)], chunks: [] });
        between = async () => {
          await store.write({ events: [page('s3', 'S', START + 2 * DAY + HOUR)], chunks: [] });
          for (let round = 0; round < 50; round++) await store.reports.refreshRollups();
        };
        // Four sessions in either snapshot; S not in day 1's total and whole as well.
        expect(await sessions()).toBe(4);
        expect(between).toBeNull();
      } finally {
        reader.close();
        writer.close();
      }
    } finally {
      await store.close();
    }
  });

  it('takes whole, once the spans inside the range are kept, only the sessions crossing its ends', async () => {
    const { path, store, projectId, made, settle } = await sqliteProject('spans');
    const page = (id: string, session: string, at: number) => made(id, session, at, 'page_view', '/');
    try {
      // S spans days 1 and 2, C days 0 and 1; O lies inside day 1.
      await store.write({
        events: [
          page('s1', 'S', START + 2 * DAY - HOUR),
          page('s2', 'S', START + 2 * DAY + HOUR),
          page('c1', 'C', START + DAY - HOUR),
          page('c2', 'C', START + DAY + HOUR),
          page('o1', 'O', START + DAY + 5 * HOUR),
        ],
        chunks: [],
      });
      await settle();
      const funnel: FunnelStepSpec[] = [{ kind: 'page', value: '/' }];
      // Days 1 to 3: S inside, C across the first midnight.
      const q: ReportQuery = { projectId, from: START + DAY, to: START + 4 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      expect(await store.reports.funnel(q, funnel)).toEqual([3]);
      await store.reports.keptSettled();
      expect(await store.reports.funnel(q, funnel)).toEqual([3]);
      await store.reports.keptSettled();

      const db = new Database(path, { readonly: true });
      try {
        const whole: string[] = [];
        const run = async (text: string, values: unknown[]) => {
          const rows = db.prepare(text).all(...values) as Array<Record<string, unknown>>;
          for (const row of rows) if (Number(row.kind) === 6) whole.push(String(row.session_id));
          return rows;
        };
        const plan = await planDays(q, run, SQLITE_DIALECT);
        const report = createSessionDays(SQLITE_DIALECT, run, { keep: async () => 0 });
        expect(await report.read(q, funnelDays(SQLITE_DIALECT, q, funnel, rawConditions(projectId)), plan)).toEqual([3]);
        expect(whole).toEqual(['C']);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
  });

  it('gives up, for the range to be read another way, while sessions keep coming to span as it reads', async () => {
    const { path, store, projectId, made, settle } = await sqliteProject('churn');
    let spanning = 0;
    try {
      // A and ten more one-day sessions on day 1, B on day 2.
      const ones = Array.from({ length: 10 }, (_, k) => made(`o${k}`, `O${k}`, START + DAY + HOUR + k * 1000, 'page_view', '/'));
      await store.write({ events: [made('a', 'A', START + DAY + HOUR, 'page_view', '/'), made('b', 'B', START + 2 * DAY + HOUR, 'page_view', '/'), ...ones], chunks: [] });
      await settle();
      const db = new Database(path, { readonly: true });
      try {
        const run = async (text: string, values: unknown[]) => {
          const rows = db.prepare(text).all(...values) as Array<Record<string, unknown>>;
          // After each read of days, one more of day 1's sessions goes on after midnight: day 1 then
          // holds one session fewer than the day just read.
          if (text.startsWith('WITH sp AS')) {
            await store.write({ events: [made(`o${spanning}-2`, `O${spanning}`, START + 2 * DAY + 1000, 'page_view', '/')], chunks: [] });
            spanning++;
          }
          return rows;
        };
        const funnel: FunnelStepSpec[] = [{ kind: 'page', value: '/' }];
        const q: ReportQuery = { projectId, from: START, to: START + 4 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
        const plan = await planDays(q, run, SQLITE_DIALECT);
        const context = rawConditions(projectId);
        const report = createSessionDays(SQLITE_DIALECT, run, { keep: async () => 0 });
        expect(await report.read(q, funnelDays(SQLITE_DIALECT, q, funnel, context), plan)).toBeNull();
        expect(spanning).toBeGreaterThanOrEqual(3);
      } finally {
        db.close();
      }
      // The store then reads the range from the steps' rows: the answer is exact.
      const q: ReportQuery = { projectId, from: START, to: START + 4 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      expect(await store.reports.funnel(q, [{ kind: 'page', value: '/' }])).toEqual([12]);
    } finally {
      await store.close();
    }
  });

  it('keeps no row naming a session on a day it has no step, so that an erasure and retention leave none', async () => {
    const { store, projectId, made, sql, settle, kept } = await sqliteProject('privacy');
    try {
      const funnel: FunnelStepSpec[] = [
        { kind: 'page', value: '/' },
        { kind: 'event', value: 'signup_started' },
      ];
      // The user's session has events on days 0 and 2, none on day 1, which another session has.
      await store.write({
        events: [
          made('o-1', 'other', START + DAY + HOUR, 'page_view', '/'),
          made('u-1', 'secret-session', START + 20 * HOUR, 'page_view', '/', 'user-1'),
          made('u-2', 'secret-session', START + 2 * DAY + HOUR, 'signup_started', null, 'user-1'),
        ],
        chunks: [],
      });
      await settle();
      const q: ReportQuery = { projectId, from: START, to: START + 3 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      expect(await store.reports.funnel(q, funnel)).toEqual([2, 1]);
      await kept(3);
      const named = async () => (await sql("SELECT day FROM rollup_kept_sessions WHERE session_id = 'secret-session' ORDER BY day")).map((row) => Number(row.day) - START / DAY);
      expect(await named()).toEqual([0, 2]);
      // The day between is taken from its kept row: as many sessions lie wholly inside it as then.
      expect(await store.reports.funnel(q, funnel)).toEqual([2, 1]);

      await store.deleteUser(projectId, 'user-1');
      expect(await named()).toEqual([]);
      await settle();
      expect(await store.reports.funnel(q, funnel)).toEqual([1, 0]);
      await kept(3);

      await store.deleteOlderThan(START + 10 * DAY);
      await settle();
      expect(await sql('SELECT 1 FROM rollup_kept_sessions WHERE project_id = ? AND session_id IS NOT NULL', [projectId])).toEqual([]);
      expect(await store.reports.funnel(q, funnel)).toEqual([0, 0]);
    } finally {
      await store.close();
    }
  });
});
