import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEstimate } from '../../../test-support/store/estimates.js';
import { buildOpenStore, openAndKill } from '../../../test-support/upgrades/kill-during-open.js';
import type { ReportQuery } from '../report-store.js';
import { SQLITE_SCHEMA, SQLITE_SCHEMA_VERSION } from './sqlite-schema.js';
import { restoreSqliteDatabase } from './sqlite-backup.js';
import { createSqliteStore } from './sqlite-store.js';

/*
 * Issue 38: an upgrade killed part-way loses nothing. A database of the previous schema version
 * (6) holding enough events that the first open's work takes a while (the migration copy, the
 * `country` column, the rollups' marks and the aggregates built from every event) is opened by the
 * current store in a child process, which is SIGKILLed at a different point each time. What is
 * left must hold every event, be at version 6 or the current one and nothing between, open, and report what the
 * events say.
 */

/** Version 6's schema: the current one without `events.country` (as in sqlite-store.test.ts). */
const SQLITE_V6_SCHEMA = SQLITE_SCHEMA.replace('  country TEXT,\n', '');
const PREVIOUS_VERSION = 6;

const EVENTS = 200_000;
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 5);
const DAYS = 30;
const PROJECTS = ['upgrade-a', 'upgrade-b'] as const;
/** Kill points, ms after the child started `init()`: in the copy, in the schema step, in the aggregates' build. */
const KILL_AFTER_MS = [50, 300, 1000] as const;

const dir = mkdtempSync(join(tmpdir(), 'sqlite-upgrade-killed-'));
const template = join(dir, 'v6.db');
let script = '';
let checksum = '';

/** A hash of every event's project and id, in order: equal only if exactly the same events are there. */
function eventChecksum(db: Database.Database): string {
  const hash = createHash('sha256');
  for (const row of db.prepare('SELECT project_id, event_id FROM events ORDER BY project_id, event_id').iterate() as Iterable<{ project_id: string; event_id: string }>) {
    hash.update(`${row.project_id}\t${row.event_id}\n`);
  }
  return hash.digest('hex');
}

/**
 * Version 6's file, as that release left it: the schema, two projects, and events with their
 * report columns, one insert statement (the store's own write path would take minutes for them).
 * Without derived tables: the release before had rollups of another shape, which the current
 * store drops and builds again just as it builds missing ones.
 */
function writeVersion6(path: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(SQLITE_V6_SCHEMA);
  const project = db.prepare("INSERT INTO projects (id, name, created_at, bots) VALUES (?, ?, ?, 'flag')");
  for (const id of PROJECTS) project.run(id, id, START);
  // Event i: one in ten in the second project; every fifth a custom event, the rest page views; one
  // in fifty a bot; about 28k sessions, 2,000 anonymous ids and 3,000 hashed visitors for the events
  // without an anonymous id (one in four); 23 pages and 3 browsers.
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @count - 1)
     INSERT INTO events (project_id, event_id, event_type, session_id, timestamp, client_timestamp, received_at, properties,
       is_bot, visitor_id, path, browser, anonymous_id)
     SELECT CASE WHEN i % 10 = 0 THEN @b ELSE @a END, printf('e%07d', i), CASE WHEN i % 5 = 0 THEN 'signup' ELSE 'page_view' END,
       's' || (i / 7), @start + i * @step, @start + i * @step, @start + i * @step, '{}',
       CASE WHEN i % 50 = 0 THEN 1 ELSE 0 END, 'v' || (i % 3001), '/page-' || (i % 23),
       CASE i % 3 WHEN 0 THEN 'Firefox' WHEN 1 THEN 'Chrome' ELSE 'Safari' END,
       CASE WHEN i % 4 = 0 THEN NULL ELSE 'a' || (i % 2003) END
     FROM n`,
  ).run({ count: EVENTS, a: PROJECTS[0], b: PROJECTS[1], start: START, step: Math.floor((DAYS * DAY) / EVENTS) });
  db.pragma(`user_version = ${PREVIOUS_VERSION}`);
  db.close();
}

/** What the file holds right after the kill, before anything opens it again. */
function inspectAfterKill(path: string): { version: number; hasCountry: boolean; aggregates: string; events: number; checksum: string; quickCheck: string } {
  const db = new Database(path);
  try {
    const columns = db.prepare('PRAGMA table_info(events)').all() as Array<{ name: string }>;
    const meta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agg_meta'").get() !== undefined;
    return {
      version: db.pragma('user_version', { simple: true }) as number,
      aggregates: meta ? (db.prepare('SELECT shape FROM agg_meta').pluck().all() as number[]).join(', ') || 'none' : 'none',
      hasCountry: columns.some((c) => c.name === 'country'),
      events: db.prepare('SELECT COUNT(*) FROM events').pluck().get() as number,
      checksum: eventChecksum(db),
      quickCheck: db.pragma('quick_check', { simple: true }) as string,
    };
  } finally {
    db.close();
  }
}

type Row = Record<string, number | string | null>;
const n = (v: unknown): number => Number(v ?? 0);
const byteCompare = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** The reports over the whole range against direct SQL over the events. */
async function expectReportsAsEvents(path: string): Promise<void> {
  const store = createSqliteStore({ path });
  await store.init();
  const raw = new Database(path, { readonly: true });
  try {
    for (const projectId of PROJECTS) {
      const query: ReportQuery = { projectId, from: START, to: START + (DAYS + 1) * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      const where = 'project_id = ? AND timestamp >= ? AND timestamp < ? AND is_bot = 0';
      const args = [projectId, query.from, query.to];
      const totals = raw
        .prepare(
          `SELECT COUNT(*) AS events, SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS page_views,
             COUNT(DISTINCT COALESCE(anonymous_id, visitor_id)) AS visitors, COUNT(DISTINCT session_id) AS sessions
           FROM events WHERE ${where}`,
        )
        .get(...args) as Row;
      const got = await store.reports.totals(query);
      expect({ events: got.events, pageViews: got.pageViews }, `${projectId}: totals`).toEqual({ events: n(totals.events), pageViews: n(totals.page_views) });
      expectEstimate(got.visitors, n(totals.visitors), `${projectId}: visitors`);
      expectEstimate(got.sessions, n(totals.sessions), `${projectId}: sessions`);

      const pages = (
        raw
          .prepare(
            `SELECT path AS value, COUNT(*) AS events, COUNT(DISTINCT COALESCE(anonymous_id, visitor_id)) AS visitors
             FROM events WHERE ${where} AND event_type = 'page_view' AND path IS NOT NULL GROUP BY path`,
          )
          .all(...args) as Row[]
      )
        .map((r) => ({ value: String(r.value), events: n(r.events), visitors: n(r.visitors) }))
        .sort((a, b) => b.events - a.events || byteCompare(a.value, b.value))
        .slice(0, 10);
      const top = await store.reports.top(query, 'page', 10);
      expect(top.map(({ value, events }) => ({ value, events })), `${projectId}: top pages`).toEqual(pages.map(({ value, events }) => ({ value, events })));
      top.forEach((row, i) => expectEstimate(row.visitors, pages[i]?.visitors ?? -1, `${projectId}: visitors of ${row.value}`));
    }
  } finally {
    raw.close();
    await store.close();
  }
}

beforeAll(async () => {
  writeVersion6(template);
  script = await buildOpenStore();
  const db = new Database(template, { readonly: true });
  checksum = eventChecksum(db);
  db.close();
}, 60_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  if (script !== '') rmSync(dirname(script), { recursive: true, force: true });
});

describe('upgrading a SQLite database of version 6 in a process killed part-way', () => {
  it.each(KILL_AFTER_MS)(
    'killed %i ms into init(): every event kept, version 6 or the current one, init() completes, reports equal the events',
    async (killAfterMs) => {
      const path = join(dir, `killed-${killAfterMs}.db`);
      copyFileSync(template, path);
      const run = await openAndKill({ script, args: ['sqlite', path], killAfterMs });

      const after = inspectAfterKill(path);
      // Which step the kill met (the copy, the schema step, the build) depends on the machine; the
      // outcome must not. Logged so that a run shows where its kills landed.
      const left = readdirSync(dir).filter((f) => f.startsWith(`killed-${killAfterMs}.db.before-`));
      console.log(`killed after ${killAfterMs} ms: ${run.killed ? 'killed' : 'finished first'}${run.opened ? ' after init()' : ''}, version ${after.version}, aggregates shape ${after.aggregates}, left ${left.join(', ') || 'no migration copy'}`);
      expect(after.quickCheck).toBe('ok');
      expect(after.events).toBe(EVENTS);
      expect(after.checksum).toBe(checksum);
      // Old or new, never between: version 6 has no `country` column, version 7 has it.
      expect([PREVIOUS_VERSION, SQLITE_SCHEMA_VERSION]).toContain(after.version);
      expect(after.hasCountry).toBe(after.version === SQLITE_SCHEMA_VERSION);

      // The migration copy (`before-v8-<time>`) a kill interrupted is not a backup: restore must
      // refuse it rather than put a part of the events back. A finished one holds them all.
      for (const copy of left.filter((f) => !f.endsWith('-journal'))) {
        const restored = join(dir, `restored-${killAfterMs}-${copy}`);
        let result: { events: number } | Error;
        try {
          result = restoreSqliteDatabase(join(dir, copy), restored);
        } catch (error) {
          result = error instanceof Error ? error : new Error(String(error));
        }
        if (result instanceof Error) expect(result.message).toMatch(/not a service-analytics database|is damaged/);
        else expect({ events: result.events, checksum: inspectAfterKill(restored).checksum }).toEqual({ events: EVENTS, checksum });
      }

      await expectReportsAsEvents(path);
      // A copy the kill cut short was written under a name of its own, and the next start removed it.
      expect(readdirSync(dir).filter((f) => f.startsWith(`killed-${killAfterMs}.db.copying-`))).toEqual([]);
      const reopened = inspectAfterKill(path);
      expect({ version: reopened.version, events: reopened.events, checksum: reopened.checksum }).toEqual({ version: SQLITE_SCHEMA_VERSION, events: EVENTS, checksum });
    },
    60_000,
  );
});
