import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateProject } from '../../../test-support/server/report-fixtures.js';
import { createTestDatabase, type TestDatabase } from '../../../test-support/postgres.js';
import { newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { createPostgresStore } from './postgres-store.js';
import type { ReportQuery } from '../report-store.js';
import { type RollupLocation, describeRollups } from '../../../test-support/store/rollup.contract.js';
import { postgresLocation, postgresSql } from '../../../test-support/store/database-locations.js';
import pg from 'pg';
import { createPostgresDayKeeps, createPostgresFilteredKeep } from '../reports/report-keep.js';
import { ANALYZE_AFTER_DAYS, KEYS_LOCK_SQL, createPostgresRollupRefresh } from '../reports/rollup-refresh.js';
import { refreshAll } from '../reports/rollup-refresher.js';
import { POSTGRES_DIALECT } from '../reports/dialect.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

const directSql = (text: string, values: unknown[] = []) => postgresSql(database.url, text, values);

/**
 * Calls `refresh` until no day of the project is marked, and expects none then: a day another
 * store (or a store's background) is building is passed over by a refresh, so one call may leave it.
 */
async function refreshUntilClean(projectId: string, refresh: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    await refresh();
    if ((await directSql('SELECT 1 FROM rollup_dirty WHERE project_id = ?', [projectId])).length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(await directSql('SELECT day FROM rollup_dirty WHERE project_id = ?', [projectId])).toEqual([]);
}

/** A statement a store ran, and the statement its connection ran just before it. */
interface Ran {
  sql: string;
  values: unknown[];
  before: string | undefined;
}

/** Runs `body`, recording every statement of any connection whose text `matches`. */
async function capturing(matches: (sql: string) => boolean, body: () => Promise<void>): Promise<Ran[]> {
  const query = pg.Client.prototype.query;
  const last = new WeakMap<pg.Client, string>();
  const ran: Ran[] = [];
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (typeof args[0] === 'string') {
      if (matches(args[0])) ran.push({ sql: args[0], values: (args[1] as unknown[] | undefined) ?? [], before: last.get(this) });
      last.set(this, args[0]);
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await body();
  } finally {
    pg.Client.prototype.query = query;
  }
  return ran;
}

/** The plans of statements with sequential scans priced out, as a read hinted `indexesOnly` runs them. */
async function plansOf(statements: ReadonlyArray<Pick<Ran, 'sql' | 'values'>>): Promise<string[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('SET enable_seqscan = off');
    const plans: string[] = [];
    for (const { sql, values } of statements) {
      plans.push((await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values)).rows.map((row) => row['QUERY PLAN']).join('\n'));
    }
    return plans;
  } finally {
    await client.end();
  }
}

const location = async (): Promise<RollupLocation> => postgresLocation(database.url);

describeRollups('postgres', location);
// Where the extension is missing, filtered top lists hash their keys in Node (filtered-tops.ts): the same answers.
describeRollups('postgres without the hll extension', async () => postgresLocation(database.url, { hllExtension: false }));

describe('postgres: daily rollups with two processes', () => {
  it('two stores on one database refresh at once, while both write late events, and end exact', async () => {
    const DAY = 86_400_000;
    const start = Date.UTC(2026, 0, 5);
    const projectId = newProjectId();
    const [a, b] = [createPostgresStore({ url: database.url, poolSize: 4 }), createPostgresStore({ url: database.url, poolSize: 4 })];
    await Promise.all([a.init(), b.init()]);
    try {
      const events = [...generateProject({ projectId, start, days: 6, sessions: 300, seed: 21 })];
      const late = [...generateProject({ projectId, start, days: 6, sessions: 200, seed: 22, idPrefix: 'late' })];
      await a.write({ events, chunks: [] });
      // Both refresh while both write: the second generation lands in days being refreshed.
      await Promise.all([
        a.reports.refreshRollups(),
        b.reports.refreshRollups(),
        (async () => {
          for (let i = 0; i < late.length; i += 150) await (i % 300 === 0 ? a : b).write({ events: late.slice(i, i + 150), chunks: [] });
        })(),
        b.reports.refreshRollups(),
      ]);
      await refreshUntilClean(projectId, () => Promise.all([a.reports.refreshRollups(), b.reports.refreshRollups()]));
      const q: ReportQuery = { projectId, from: start, to: start + 6 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      const rolled = [await a.reports.totals(q), await a.reports.series(q, DAY), await b.reports.top(q, 'page', 10), await b.reports.sessions(q)];
      for (let day = start / DAY; day < start / DAY + 6; day++) await directSql('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING', [projectId, day]);
      const raw = [await a.reports.totals(q), await a.reports.series(q, DAY), await b.reports.top(q, 'page', 10), await b.reports.sessions(q)];
      expect(rolled).toEqual(raw);
      expect((raw[0] as { events: number }).events).toBe([...events, ...late].filter((e) => !e.isBot).length);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('postgres: an erasure beside a day being built', () => {
  it('drops the refresh holding the dictionary lock rather than wait for its build, and every report ends exact', async () => {
    const DAY = 86_400_000;
    const start = Date.UTC(2026, 0, 5);
    const projectId = newProjectId();
    const store = createPostgresStore({ url: database.url, poolSize: 4, keepFiltersAhead: false });
    await store.init();
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      const events = [...generateProject({ projectId, start, days: 3, sessions: 200, seed: 31 })];
      await store.write({ events, chunks: [] });
      await refreshUntilClean(projectId, () => store.reports.refreshRollups());
      const lastDay = start / DAY + 2;
      const userId = events.find((e) => e.userId !== null && Math.floor(e.timestamp / DAY) === lastDay)?.userId as string;
      const userKeys = [...new Set(events.filter((e) => e.userId === userId).flatMap((e) => [e.sessionId, e.visitorId]))];
      // A day being built again: its refresh holds the dictionary lock and waits, inside its
      // build, on a row another transaction locked, for as long as that one lasts. The row is
      // locked before the day is marked, else the store's background refresher may build it first.
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM rollup_values WHERE project_id = $1 AND day = $2 AND dim = '' LIMIT 1 FOR UPDATE", [projectId, lastDay]);
      await directSql('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?)', [projectId, lastDay]);
      const refreshing = store.reports.refreshRollups();
      const waiting = async () =>
        (await directSql("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'DELETE FROM rollup_values%'")).length > 0;
      for (let waited = 0; waited < 10_000 && !(await waiting()); waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await waiting()).toBe(true);
      // Waiting for the lock would wait for the holder, which ends only after the erasure.
      const erased = await store.deleteUser(projectId, userId);
      expect(erased.events).toBe(events.filter((e) => e.userId === userId).length);
      await refreshing;
      await holder.query('COMMIT');
      // The store's background refresher builds days too: done once none is marked.
      await refreshUntilClean(projectId, () => store.reports.refreshRollups());
      expect(await directSql('SELECT key FROM rollup_keys WHERE project_id = ? AND key = ANY(?::text[])', [projectId, userKeys])).toEqual([]);
      const q: ReportQuery = { projectId, from: start, to: start + 3 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      const rolled = [await store.reports.totals(q), await store.reports.series(q, DAY), await store.reports.top(q, 'page', 10), await store.reports.sessions(q)];
      for (let day = start / DAY; day < start / DAY + 3; day++) await directSql('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT DO NOTHING', [projectId, day]);
      const raw = [await store.reports.totals(q), await store.reports.series(q, DAY), await store.reports.top(q, 'page', 10), await store.reports.sessions(q)];
      expect(rolled).toEqual(raw);
      expect((raw[0] as { events: number }).events).toBe(events.filter((e) => !e.isBot && e.userId !== userId).length);
    } finally {
      await holder.end();
      await store.close();
    }
  });
});

describe('postgres: rollup indexes added after a rollup shape', () => {
  it('builds the sessions index of a database that lacks it at the next open, with no rollup rebuilt', async () => {
    const DAY = 86_400_000;
    const start = Date.UTC(2026, 0, 5);
    const projectId = newProjectId();
    const q: ReportQuery = { projectId, from: start, to: start + 3 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
    const first = createPostgresStore({ url: database.url, poolSize: 2 });
    await first.init();
    let before: unknown;
    try {
      await first.write({ events: [...generateProject({ projectId, start, days: 3, sessions: 80, seed: 23 })], chunks: [] });
      while ((await first.reports.refreshRollups()) > 0);
      before = await first.reports.sessions(q);
    } finally {
      await first.close();
    }
    const rows = async () => (await directSql('SELECT COUNT(*) AS n FROM rollup_values WHERE project_id = ?', [projectId]))[0]?.n;
    const rolled = await rows();
    // A database of the version before: the same rollup shape, without the index.
    await directSql('DROP INDEX rollup_values_sessions');
    const second = createPostgresStore({ url: database.url, poolSize: 2 });
    await second.init();
    try {
      expect(await directSql("SELECT indexname FROM pg_indexes WHERE indexname = 'rollup_values_sessions'")).toHaveLength(1);
      expect(await directSql('SELECT day FROM rollup_dirty WHERE project_id = ?', [projectId])).toEqual([]);
      expect(await rows()).toBe(rolled);
      expect(await second.reports.sessions(q)).toEqual(before);
    } finally {
      await second.close();
    }
  });
});

describe('postgres: statistics after a run of refreshes', () => {
  it('analyzes the rollup tables when a run of at least a week of days leaves none marked, not after one day, and at most once an hour', async () => {
    const DAY = 86_400_000;
    const start = Date.UTC(2026, 0, 12);
    const projectId = newProjectId();
    const store = createPostgresStore({ url: database.url, poolSize: 2 });
    await store.init();
    try {
      await store.write({ events: [...generateProject({ projectId, start, days: ANALYZE_AFTER_DAYS, sessions: 60, seed: 25 })], chunks: [] });
    } finally {
      await store.close();
    }
    // Refreshed here alone, with no store's background beside it: the days its background
    // refreshed before the close are marked again.
    const mark = (days: number) =>
      directSql('INSERT INTO rollup_dirty (project_id, day) SELECT ?, d FROM generate_series(?::int, ?::int) AS d ON CONFLICT DO NOTHING', [projectId, start / DAY, start / DAY + days - 1]);
    // Manual ANALYZEs of each rollup table a refresh writes (autovacuum's are counted apart); the
    // statistics reach other connections within about a second.
    const analyzed = async () => {
      const rows = await directSql(
        "SELECT relname, analyze_count FROM pg_stat_user_tables WHERE relname IN ('rollup_keys', 'rollup_values', 'rollup_exposures', 'rollup_steps', 'rollup_vitals', 'rollup_errors') ORDER BY relname",
      );
      return rows.map((row) => Number(row.analyze_count));
    };
    const settled = async (expected: (counts: number[]) => boolean) => {
      for (let i = 0; i < 50 && !expected(await analyzed()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      return analyzed();
    };
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const refresh = createPostgresRollupRefresh(pool, POSTGRES_DIALECT);
      const before = await analyzed();
      expect(before).toHaveLength(6);
      await mark(ANALYZE_AFTER_DAYS);
      expect(await refreshAll(refresh)).toBe(ANALYZE_AFTER_DAYS);
      const after = await settled((counts) => counts.every((count, i) => count > (before[i] as number)));
      expect(after).toEqual(before.map((count) => count + 1));
      // One day marked: its refresh alone analyzes nothing.
      await mark(1);
      expect(await refreshAll(refresh)).toBe(1);
      // A week of days again, within the hour: nothing either.
      await mark(ANALYZE_AFTER_DAYS);
      expect(await refreshAll(refresh)).toBe(ANALYZE_AFTER_DAYS);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await analyzed()).toEqual(after);
    } finally {
      await pool.end();
    }
  });
});

describe('postgres: keeping filtered rows', () => {
  it('keeps one at a time, so that keeps waiting for the project lock hold one pooled connection, not one each', async () => {
    const schema = createPostgresStore({ url: database.url, poolSize: 2 });
    await schema.init();
    await schema.close();
    const pool = new pg.Pool({ connectionString: database.url, max: 4 });
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      const projectId = newProjectId();
      // A refresh or an erasure of the project in flight: it holds the dictionary lock.
      await holder.query('BEGIN');
      await holder.query(KEYS_LOCK_SQL, [projectId]);
      const keep = createPostgresFilteredKeep(createPostgresDayKeeps(pool));
      const day = (n: number) => ({ projectId, filterDim: 'device' as const, filterValue: 'mobile', days: [{ day: n, version: 0, dims: [{ dim: 'page' as const, rows: [] }] }] });
      const keeps = [keep(day(1)), keep(day(2)), keep(day(3))];
      for (let waited = 0; waited < 2000 && pool.totalCount === 0; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(pool.totalCount).toBe(1);
      await holder.query('COMMIT');
      expect(await Promise.all(keeps)).toEqual([1, 1, 1]);
      expect((await directSql('SELECT day FROM rollup_filtered WHERE project_id = ? AND value IS NULL ORDER BY day', [projectId])).map((r) => Number(r.day))).toEqual([1, 2, 3]);
    } finally {
      await holder.end();
      await pool.end();
    }
  });
});

describe('postgres: events read beside the rollups', () => {
  const DAY = 86_400_000;
  const start = Date.UTC(2026, 0, 5);
  /** A store with a new project of generated days (three unless told), their rollups built. */
  const threeDays = async (seed: number, days = 3) => {
    const projectId = newProjectId();
    const store = createPostgresStore({ url: database.url, poolSize: 2 });
    await store.init();
    await store.write({ events: [...generateProject({ projectId, start, days, sessions: 60, seed })], chunks: [] });
    while ((await store.reports.refreshRollups()) > 0);
    return { store, projectId };
  };

  it("finds an event's session and visitor in the key dictionary through its index, not by reading the whole dictionary per event", async () => {
    const { store, projectId } = await threeDays(31);
    let lookups: Ran[] = [];
    try {
      // A range that starts in the middle of a day: that day's events are read beside the rollups' days.
      const q: ReportQuery = { projectId, from: start + DAY / 2, to: start + 3 * DAY, filters: { device: 'mobile' }, includeBots: false, visitorKey: 'anonymous' };
      lookups = await capturing(
        (sql) => sql.includes('FROM rollup_keys k WHERE'),
        async () => void expect((await store.reports.sessions(q)).sessions).toBeGreaterThan(0),
      );
    } finally {
      await store.close();
    }
    expect(lookups.length).toBeGreaterThan(0);
    // With sequential scans priced out, a dictionary its index cannot serve is still read whole.
    for (const plan of await plansOf(lookups)) {
      expect(plan).toContain('rollup_keys_by_key');
      expect(plan).not.toMatch(/Seq Scan on rollup_keys/);
    }
  });

  it('a funnel finds the sessions that span days through the index by their end, told to read indexes', async () => {
    // Ten days read over the last two and a half, with fresh statistics: the index by end then
    // passes over most of the project's sessions, the primary key over none (on a table of a few
    // hundred rows whose statistics predate the project, either is as cheap and the planner's pick
    // was a coin's: this test once failed on the primary key).
    const { store, projectId } = await threeDays(33, 10);
    await directSql('ANALYZE agg_session_state');
    let spans: Ran[] = [];
    try {
      const q: ReportQuery = { projectId, from: start + 7 * DAY + DAY / 2, to: start + 10 * DAY, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      const funnel = [
        { kind: 'page', value: '/' },
        { kind: 'page', value: '/pricing' },
      ] as const;
      // The first read computes and keeps its days; the second reads them.
      spans = await capturing(
        (sql) => sql.includes('FROM agg_session_state'),
        async () => {
          await store.reports.funnel(q, [...funnel]);
          await store.reports.funnel(q, [...funnel]);
        },
      );
    } finally {
      await store.close();
    }
    expect(spans.length).toBeGreaterThanOrEqual(3);
    for (const ran of spans) expect(ran.before).toContain('SET LOCAL enable_seqscan = off');
    for (const plan of await plansOf(spans)) {
      // An index scan, or a bitmap scan of the index (the planner's choice by the table's statistics).
      expect(plan).toMatch(/(Scan using agg_session_spans_by_end on agg_session_state|Bitmap Index Scan on agg_session_spans_by_end)[^\n]*\n\s*Index Cond: \(\(project_id = [^\n]*AND \(last_ts >= /);
      expect(plan).not.toMatch(/Seq Scan on agg_session_state/);
    }
  });

  it("a day's refresh looks its keys up in the dictionary through its index, and compiles nothing", async () => {
    const projectId = newProjectId();
    const store = createPostgresStore({ url: database.url, poolSize: 2 });
    await store.init();
    const query = pg.Client.prototype.query;
    const builds: Array<[string, unknown[]]> = [];
    const jitAtBuild: Array<Promise<pg.QueryResult<{ jit: string }>>> = [];
    try {
      await store.write({ events: [...generateProject({ projectId, start, days: 2, sessions: 40, seed: 32 })], chunks: [] });
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        if (typeof args[0] === 'string' && args[0].startsWith('WITH seen AS')) {
          builds.push([args[0], args[1] as unknown[]]);
          // Queued on the build's connection, in its transaction, just before it.
          jitAtBuild.push((query as (...a: unknown[]) => unknown).call(this, 'SHOW jit') as Promise<pg.QueryResult<{ jit: string }>>);
        }
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      while ((await store.reports.refreshRollups()) > 0);
    } finally {
      pg.Client.prototype.query = query;
      await store.close();
    }
    expect(builds.length).toBeGreaterThan(0);
    // The build's row estimates are guesses in the billions: JIT would compile for seconds.
    expect((await Promise.all(jitAtBuild)).map((result) => result.rows[0]?.jit)).toEqual(builds.map(() => 'off'));
    // Hashing the whole project's dictionary to find a day's keys reads it by project alone.
    for (const plan of await plansOf(builds.map(([sql, values]) => ({ sql, values })))) {
      expect(plan).toMatch(/Scan using rollup_keys_by_key on rollup_keys[^\n]*\n\s*Index Cond: \(\(project_id = [^\n]*AND \(key = /);
      expect(plan).not.toMatch(/Seq Scan on rollup_keys/);
    }
  });
});
