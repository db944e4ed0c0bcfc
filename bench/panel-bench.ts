// Response time of every report panel over 7, 30 and 90 days on SQLite and PostgreSQL, on a
// generated project of N events over 90 days (bench/generate-project.ts). Run by
// `npm run bench:server -- --panels[=N]` (default 10,000,000 events): it then measures only this,
// not ingest, and writes "## Report panels" of bench/RESULTS.md. Each panel is what its endpoint
// asks of the store (server/routes/reports.ts), timed in this process without HTTP, once after
// a warm-up call of the whole set over 90 days and of the panels that delete nothing kept over each
// range.
//
// After the load, the daily rollups are built (timed: the refresh of a day of about N / 90
// events), then the panels are read as the store serves them (rollups for whole clean days), and
// over 30 days also from the events alone (the same report SQL without rollups), whose answers
// must be equal.
//
// `--panels-on=PATH_OR_URL[,…]` measures databases that `bench/generate-project.ts` filled before
// (their first `bench…` project, over the 90 days up to its last event's day) instead of
// generating one, so a change to the reports or rollups can be measured without a new load.
// `--panels-only=NAME[;…]` measures those panels only (names as in the table's first column), and
// keeps filtered top lists ahead only when one of them is a "kept ahead" row: a change to one
// report measured at 10M events in minutes rather than the whole table's 40. It prints its table
// and writes nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isPostgresUrl, openStore } from '../server/store/open-store.js';
import { createPostgresStore } from '../server/store/postgres/postgres-store.js';
import { REPORT_THREADS, createSqliteStore } from '../server/store/sqlite/sqlite-store.js';
import { isStoreError } from '../server/store/store-error.js';
import { REPORT_LIMITS } from '../server/routes/report-params.js';
import { createReportStore } from '../server/store/reports/report-queries.js';
import { POSTGRES_DIALECT, SQLITE_DIALECT } from '../server/store/reports/dialect.js';
import type { FunnelStepSpec, ReportQuery, ReportStore } from '../server/store/report-store.js';
import { type PostgresServer, startPostgres } from '../test-support/postgres-server.js';
import { compareAnswers, percentile } from '../test-support/store/estimate-bound.js';
import { SKETCH_EXACT_UP_TO } from '../server/store/aggregates/visitor-sketch.js';
import { generateIntoStore } from './generate-project.js';

const DAY_MS = 86_400_000;
const RANGES = [7, 30, 90] as const;

/**
 * A panel: its name, its call, and what this bench does before timing it: `first` forgets the
 * rows of its kind (`rows`) earlier reports kept (filtered top lists, `reports/filtered-tops.ts`;
 * funnels and filtered sessions, `reports/session-days.ts`), so that the call computes its days
 * again, and the other kinds stay kept for the panels after it; `kept` waits until those a `first`
 * call computed are kept.
 */
export type Panel = [name: string, run: (store: { reports: ReportStore }, q: ReportQuery) => Promise<unknown>, before?: 'first' | 'kept', rows?: KeptRows];

/** Which kept rows a panel's `first` forgets: a filter's top lists, or a report over sessions (by its key's first word). */
type KeptRows = 'filtered' | 'funnel' | 'sessions';

/** The row of the overview page's reads, as a browser sends them. */
const OVERVIEW_PANEL = 'overview, as a browser asks it';

/** The funnel of the panels. */
const FUNNEL: FunnelStepSpec[] = [
  { kind: 'page', value: '/' },
  { kind: 'page', value: '/signup' },
  { kind: 'event', value: 'signup_started' },
  { kind: 'event', value: 'signup_completed' },
];

/** The dashboard's panels, each as its endpoint asks the store. */
export const PANELS: Panel[] = [
  ['timeseries (day) + totals', (s, q) => Promise.all([s.reports.totals(q), s.reports.series(q, DAY_MS)])],
  // The API refuses an hourly series over more than 31 days, so the 90-day column times 31 days.
  ['timeseries (hour), at most 31 days', (s, q) => s.reports.series({ ...q, from: Math.max(q.from, q.to - REPORT_LIMITS.maxHourlyRangeMs) }, 3_600_000)],
  ['timeseries (day), page filter', (s, q) => Promise.all([s.reports.totals({ ...q, filters: { page: '/pricing' } }), s.reports.series({ ...q, filters: { page: '/pricing' } }, DAY_MS)])],
  ['top pages', (s, q) => s.reports.top(q, 'page', 10)],
  ['top referrers', (s, q) => s.reports.top(q, 'referrer', 10)],
  ['top channels', (s, q) => s.reports.top(q, 'channel', 10)],
  ['top UTM campaigns', (s, q) => s.reports.top(q, 'utm_campaign', 10)],
  ['top browsers', (s, q) => s.reports.top(q, 'browser', 10)],
  ['top devices', (s, q) => s.reports.top(q, 'device', 10)],
  ['top custom events', (s, q) => s.reports.top(q, 'custom_event', 10)],
  ['sessions', (s, q) => s.reports.sessions(q)],
  ['sessions, device filter', (s, q) => s.reports.sessions({ ...q, filters: { device: 'mobile' } })],
  ['web vitals', (s, q) => s.reports.vitals(q, 10)],
  ['errors', (s, q) => s.reports.errors(q, 10)],
  // Read from the days an earlier read of it kept (the warm-up call's; `reports/session-days.ts`).
  ['funnel (4 steps)', (s, q) => s.reports.funnel(q, FUNNEL)],
  ['experiment', (s, q) => s.reports.experiment(q, 'checkout-button', 'purchase')],
  ['experiments list', (s, q) => s.reports.experiments(q, 10)],
  ['live (5 min)', (s, q) => s.reports.totals({ ...q, from: q.to - 300_000 })],
  [OVERVIEW_PANEL, (s, q) => overview(s, q)],
  // A filter clicked on the dashboard, its value frequent enough to be kept ahead in the background.
  ['top pages, device filter, kept ahead', (s, q) => s.reports.top({ ...q, filters: { device: 'mobile' } }, 'page', 10)],
  ['overview top lists, device filter, kept ahead', (s, q) => overviewTops(s, q)],
  // Last, each range after every other panel's: the same filter with every kept row deleted first
  // (what keeping a value ahead costs, and the first view of a value too rare to be kept ahead,
  // which is bounded by its events). Such a read reads the events and may run past the reader's
  // budget, and the reader thread finishes a read it has answered BUSY for before it takes the
  // next one, which a panel after it would time. Then the same list again, from the days it kept.
  ['top pages, device filter, nothing kept', (s, q) => s.reports.top({ ...q, filters: { device: 'mobile' } }, 'page', 10), 'first', 'filtered'],
  ['top pages, device filter, kept', (s, q) => s.reports.top({ ...q, filters: { device: 'mobile' } }, 'page', 10), 'kept'],
  // What the dashboard asks when a filter is clicked: the overview's eight top lists at once.
  ['overview top lists, device filter, nothing kept', (s, q) => overviewTops(s, q), 'first', 'filtered'],
  ['overview top lists, device filter, kept', (s, q) => overviewTops(s, q), 'kept'],
  // A funnel's first read, which computes its days from the steps' rows and keeps them; then again.
  ['funnel (4 steps), nothing kept', (s, q) => s.reports.funnel(q, FUNNEL), 'first', 'funnel'],
  ['funnel (4 steps), kept', (s, q) => s.reports.funnel(q, FUNNEL), 'kept'],
  // The sessions report with one filter the same way (`reports/session-stats-days.ts`).
  ['sessions, device filter, nothing kept', (s, q) => s.reports.sessions({ ...q, filters: { device: 'mobile' } }), 'first', 'sessions'],
  ['sessions, device filter, kept', (s, q) => s.reports.sessions({ ...q, filters: { device: 'mobile' } }), 'kept'],
];

/** The overview's top lists. */
const OVERVIEW_DIMENSIONS = ['page', 'referrer', 'channel', 'browser', 'os', 'device', 'country', 'custom_event'] as const;

/** Requests a browser keeps in flight to one server (HTTP/1.1, per host). */
const BROWSER_CONNECTIONS = 6;

/**
 * What the overview page (dashboard/src/pages/overview-page.tsx) asks when it opens, as a browser
 * sends it: the traffic series with its totals, the sessions, the eight top lists and the
 * visitors-now badge (the live report), each endpoint's store calls together, at most six requests
 * in flight; the previous period's series and sessions each once its own answered
 * (dashboard/src/lib/use-comparison.ts).
 */
async function overview(s: { reports: ReportStore }, q: ReportQuery): Promise<void> {
  const before = { ...q, from: q.from - (q.to - q.from), to: q.from };
  const live = { ...q, from: q.to - 300_000 };
  const traffic = (r: ReportQuery) => Promise.all([s.reports.totals(r), s.reports.series(r, DAY_MS)]);
  const requests: Array<() => Promise<unknown>> = [
    () => traffic(q).then(() => requests.push(() => traffic(before))),
    () => s.reports.sessions(q).then(() => requests.push(() => s.reports.sessions(before))),
    ...OVERVIEW_DIMENSIONS.map((dimension) => () => s.reports.top(q, dimension, 8)),
    () => Promise.all([s.reports.totals(live), s.reports.series(live, 60_000)]),
  ];
  // A connection that finds nothing left ends; a request it answers may add one, which it then
  // takes. A request that fails leaves nothing for the others to take, and the page fails once
  // every request in flight has ended, so that nothing of it runs on beside what comes next.
  const connection = async () => {
    for (let next = requests.shift(); next !== undefined; next = requests.shift()) {
      await next().catch((error: unknown) => {
        requests.length = 0;
        throw error;
      });
    }
  };
  const ended = await Promise.allSettled(Array.from({ length: BROWSER_CONNECTIONS }, connection));
  for (const result of ended) if (result.status === 'rejected') throw result.reason;
}

/** The overview's top lists with a device filter, asked at once as the dashboard does. */
function overviewTops(s: { reports: ReportStore }, q: ReportQuery): Promise<unknown> {
  return Promise.all(OVERVIEW_DIMENSIONS.map((dimension) => s.reports.top({ ...q, filters: { device: 'mobile' } }, dimension, 8)));
}

/** The reader threads the cold overview is measured with: the store's count before 51adca8, and its count now. */
const COLD_OVERVIEW_THREADS = [2, REPORT_THREADS] as const;

/** Rounds of the cold overview, each on every count of threads in turn: a cold read is noisy, so the median counts. */
const COLD_OVERVIEW_ROUNDS = 5;

/** Drops the OS's page cache (Linux, as root; the whole machine's); false where that cannot be done. */
function dropPageCache(): boolean {
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '1');
    return true;
  } catch {
    return false;
  }
}

/**
 * {@link StoreResult.coldOverview} of a SQLite file no other store has open, or undefined where the
 * page cache cannot be dropped. Each store is opened with its background keeping no filters ahead,
 * whose reads would fill the cache beside the overview's.
 */
async function measureColdOverview(path: string, q: ReportQuery, log: (line: string) => void): Promise<StoreResult['coldOverview']> {
  const times = new Map<number, { cold: number[]; warm: number[] }>(COLD_OVERVIEW_THREADS.map((threads) => [threads, { cold: [], warm: [] }]));
  for (let round = 0; round < COLD_OVERVIEW_ROUNDS; round++) {
    // Alternated, so that neither count always comes first.
    const order = round % 2 === 0 ? COLD_OVERVIEW_THREADS : [...COLD_OVERVIEW_THREADS].reverse();
    for (const threads of order) {
      const store = createSqliteStore({ path, readThreads: threads, keepFiltersAhead: false });
      try {
        await store.init();
        if (!dropPageCache()) {
          log('  overview after the page cache was dropped: not measured (it needs root on Linux)');
          return undefined;
        }
        let t0 = performance.now();
        await overview(store, q);
        const coldMs = performance.now() - t0;
        t0 = performance.now();
        await overview(store, q);
        const warmMs = performance.now() - t0;
        times.get(threads)?.cold.push(coldMs);
        times.get(threads)?.warm.push(warmMs);
        log(`  overview, 90 days, ${threads} reader threads: ${coldMs.toFixed(0)} ms after the page cache was dropped, ${warmMs.toFixed(0)} ms again`);
      } finally {
        await store.close();
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  return [...times].map(([threads, { cold, warm }]) => ({ threads, coldMs: median(cold), warmMs: median(warm) }));
}

/**
 * Waits until the store's reader has finished what it was reading: a five-minute total, retried
 * while it is itself past the budget, then until this process (its reader threads included) is
 * idle. The total alone was enough with one reader thread, where it queued behind the read given
 * up on; with several it is answered at once by another thread while that read still runs, and
 * the next panel would be timed beside it.
 */
async function settle(store: { reports: ReportStore }, q: ReportQuery): Promise<void> {
  for (;;) {
    const done = await store.reports.totals({ ...q, from: q.to - 300_000 }).then(
      () => true,
      (error: unknown) => {
        if (isStoreError(error) && error.code === 'BUSY') return false;
        throw error;
      },
    );
    if (done) break;
  }
  // Idle: under a twentieth of a core over a quarter of a second (a runaway read keeps one busy).
  for (let waited = 0; waited < 600_000; waited += 250) {
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 250));
    const used = process.cpuUsage(before);
    if ((used.user + used.system) / 1000 < 250 / 20) return;
  }
}

/** Milliseconds per panel of one store: 7 days, 30 days, its CPU, 90 days, 30 days from the events alone. */
type Timings = Map<string, number[]>;

/** The measurements of one store. */
export interface StoreResult {
  timings: Timings;
  events: number;
  loadSeconds: number;
  /** The first open, which built the aggregates from the events. */
  aggregateSeconds: number;
  /** Days the refresh built, and how long it took. */
  refreshedDays: number;
  refreshSeconds: number;
  /** How long keeping the frequent filters' top lists ahead took, after the rollups. */
  aheadSeconds: number;
  /** Panels whose 30-day answer differed from the events' in an exact number (none expected). */
  mismatches: string[];
  /** The largest relative error of a unique count against the events' exact one, over the 30-day answers. */
  worstEstimateError: number;
  /** The relative errors of the unique counts past the sketch's exact range, over the 30-day answers. */
  estimateErrors: number[];
  /** Each panel's answer over 30 and 90 days, by `answerKey`, for a comparison with another store's. */
  answers: Map<string, unknown>;
  /**
   * PostgreSQL with the `hll` extension: the panels over 90 days again, with Node merging the
   * sketches (as without the extension), each panel's time and whether every answer was equal.
   */
  nodeMerged?: { timings: Map<string, number>; sameAnswers: boolean };
  /**
   * SQLite, when asked (`--cold-overview`) and where the OS's page cache can be dropped (Linux,
   * root): the overview's reads over 90 days on a store opened with each count of reader threads,
   * the first time just after the page cache was dropped (a dashboard's first view after a
   * restart, or after the file left memory), then again; medians.
   */
  coldOverview?: Array<{ threads: number; coldMs: number; warmMs: number }>;
}

/** The key of a panel's answer over `days` in {@link StoreResult.answers}. */
export const answerKey = (name: string, days: number): string => `${days} ${name}`;

/**
 * The report SQL without rollups, on a connection of its own: what every panel cost before them;
 * and the count of marked days, which the refresh must bring to zero.
 */
interface RawReports {
  reports: ReportStore;
  markedDays(): Promise<number>;
  /** Deletes the rows reports of one kind kept. */
  forgetRows(rows: KeptRows): Promise<void>;
  /** How many (day or week, filter, dimension) and (day, report over sessions) are kept. */
  keptRows(): Promise<number>;
  close(): Promise<void>;
}

function rawReports(location: string): RawReports {
  const marked = 'SELECT COUNT(*) AS n FROM rollup_dirty';
  const forget = (rows: KeptRows) =>
    rows === 'filtered' ? 'DELETE FROM rollup_filtered; DELETE FROM rollup_filtered_weeks' : `DELETE FROM rollup_kept_sessions WHERE report LIKE '${rows} %'`;
  const kept = `SELECT (SELECT COUNT(*) FROM rollup_filtered WHERE value IS NULL) + (SELECT COUNT(*) FROM rollup_filtered_weeks WHERE value IS NULL)
    + (SELECT COUNT(*) FROM rollup_kept_sessions WHERE session_id IS NULL) AS n`;
  if (isPostgresUrl(location)) {
    const pool = new pg.Pool({ connectionString: location, max: 2 });
    const count = async (sql: string) => Number((await pool.query<{ n: string }>(sql)).rows[0]?.n);
    return {
      reports: createReportStore(POSTGRES_DIALECT, async (sql, values) => (await pool.query(sql, values)).rows),
      markedDays: () => count(marked),
      forgetRows: async (rows) => void (await pool.query(forget(rows))),
      keptRows: () => count(kept),
      close: () => pool.end(),
    };
  }
  const db = new Database(location, { readonly: true });
  return {
    reports: createReportStore(SQLITE_DIALECT, async (sql, values) => db.prepare(sql).all(...values) as Array<Record<string, unknown>>),
    markedDays: async () => (db.prepare(marked).get() as { n: number }).n,
    async forgetRows(rows) {
      const writer = new Database(location);
      try {
        writer.pragma('busy_timeout = 30000');
        writer.exec(forget(rows));
      } finally {
        writer.close();
      }
    },
    keptRows: async () => (db.prepare(kept).get() as { n: number }).n,
    close: async () => void db.close(),
  };
}

/** The panels whose reads keep rows (a funnel's days, a filter's days): after them the bench waits for some. */
const KEEPING = /funnel|device filter/;

/** The panels whose unique counts are exact by construction (docs/protocol.md, "Which numbers are estimates"): kept out of the error's percentile. */
const EXACT_UNIQUE_PANELS = /^(sessions|funnel|experiment)/;

/**
 * Waits (up to a minute) until keeps in flight have landed: none more for a second, and some kept
 * unless `some` is false (no panel read keeps any: nothing would come).
 */
async function awaitKept(raw: RawReports, some = true): Promise<void> {
  let last = -1;
  for (let waited = 0; waited < 60_000; waited += 1000) {
    const now = await raw.keptRows();
    if ((now > 0 || !some) && now === last) return;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Forgets the kept rows of one kind once the keeps of earlier calls have landed. */
async function forgetKept(raw: RawReports, rows: KeptRows): Promise<void> {
  await awaitKept(raw);
  await raw.forgetRows(rows);
}

/** The generated project of a database that `bench/generate-project.ts` filled: its id, events and end (also bench/report-settings.ts). */
export async function existingProject(location: string): Promise<{ projectId: string; events: number; end: number }> {
  const projectSql = "SELECT id FROM projects WHERE id LIKE 'bench%' ORDER BY created_at, id LIMIT 1";
  const spanSql = (ph: (n: number) => string) => `SELECT COUNT(*) AS n, MAX(timestamp) AS last FROM events WHERE project_id = ${ph(1)}`;
  let found: { id: string; n: number; last: number } | undefined;
  if (isPostgresUrl(location)) {
    const pool = new pg.Pool({ connectionString: location, max: 1 });
    try {
      const id = (await pool.query<{ id: string }>(projectSql)).rows[0]?.id;
      const span = id === undefined ? undefined : (await pool.query<{ n: string; last: string }>(spanSql((n) => `$${n}`), [id])).rows[0];
      if (id !== undefined && span !== undefined) found = { id, n: Number(span.n), last: Number(span.last) };
    } finally {
      await pool.end();
    }
  } else {
    const db = new Database(location, { readonly: true });
    try {
      const id = (db.prepare(projectSql).get() as { id: string } | undefined)?.id;
      const span = id === undefined ? undefined : (db.prepare(spanSql(() => '?')).get(id) as { n: number; last: number });
      if (id !== undefined && span !== undefined) found = { id, n: span.n, last: span.last };
    } finally {
      db.close();
    }
  }
  if (found === undefined || found.n === 0) throw new Error(`no generated project with events in ${location}`);
  return { projectId: found.id, events: found.n, end: (Math.floor(found.last / DAY_MS) + 1) * DAY_MS };
}

/**
 * CPU milliseconds the database has spent so far: this process's for SQLite (which runs in it); on
 * PostgreSQL the sum over the server's client backends (/proc/<pid>/stat, in ticks of 10 ms), plus
 * what its exited children had spent (the postmaster's cutime and cstime): a parallel plan's
 * workers are children that exit with their statement (so are autovacuum's workers, which the
 * bench's read-only runs seldom wake). NaN when the server is not on this machine. Wall time on a
 * shared machine counts the waits for a core; CPU time does not.
 */
function cpuMeter(location: string): { read(): Promise<number>; close(): Promise<void> } {
  if (!isPostgresUrl(location)) return { read: async () => (process.cpuUsage().user + process.cpuUsage().system) / 1000, close: async () => {} };
  const pool = new pg.Pool({ connectionString: location, max: 1 });
  // Fields after the command name: [1] the parent pid, [11] utime, [12] stime, [13] cutime, [14] cstime.
  const stat = (pid: number): number[] | null => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ').map(Number);
    } catch {
      return null;
    }
  };
  const ticks = (pid: number): number => {
    const fields = stat(pid);
    return fields === null ? Number.NaN : (fields[11] ?? Number.NaN) + (fields[12] ?? Number.NaN);
  };
  const seen = new Map<number, number>();
  let total = 0;
  let children: number | undefined;
  return {
    async read() {
      const pids = (await pool.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")).rows;
      // Backends that went away keep what they had counted; new ones count from 0.
      for (const { pid } of pids) {
        const now = ticks(pid);
        total += now - (seen.get(pid) ?? 0);
        seen.set(pid, now);
      }
      const own = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const postmaster = own === undefined ? undefined : stat(own)?.[1];
      const exited = postmaster === undefined ? null : stat(postmaster);
      const now = exited === null ? Number.NaN : (exited[13] ?? Number.NaN) + (exited[14] ?? Number.NaN);
      if (children !== undefined) total += now - children;
      children = now;
      return total * 10;
    },
    close: () => pool.end(),
  };
}

/** Measures a store: on a project generated now into `location`, or on the one it holds (`existing`). */
async function measureStore(location: string, events: number, log: (line: string) => void, existing = false, panels: Panel[] = PANELS, cold = false): Promise<StoreResult> {
  const started = performance.now();
  const project = existing
    ? await existingProject(location)
    : await generateIntoStore({ location, events, onProgress: (n) => n % 1_000_000 < 5_000 && log(`  ${n.toLocaleString('en')} events loaded`) });
  const loadSeconds = existing ? Number.NaN : (performance.now() - started) / 1000;
  // The bench keeps filters ahead itself, before the panels: the store's background keeping them
  // (again, after a row that deleted them) would read beside the panels it times.
  // Each panel is timed as computed: no answer of a read past its budget is kept for a later call.
  const store = openStore(location, { keepFiltersAhead: false, keptAnswerMs: 0 });
  // The first open builds the report aggregates from the events (generate-project.ts drops them).
  const openStarted = performance.now();
  await store.init();
  const aggregateSeconds = (performance.now() - openStarted) / 1000;
  log(`  opened in ${aggregateSeconds.toFixed(1)} s (the aggregates built from the events)`);
  const timings: Timings = new Map();
  const mismatches: string[] = [];
  let worstEstimateError = 0;
  const estimateErrors: number[] = [];
  let refreshedDays = 0;
  let refreshSeconds = 0;
  let aheadSeconds = 0;
  const kept = new Map<string, unknown>();
  let nodeMerged: StoreResult['nodeMerged'];
  let coldOverview: StoreResult['coldOverview'];
  const raw = rawReports(location);
  const cpu = cpuMeter(location);
  const query = (days: number): ReportQuery => ({
    projectId: project.projectId,
    from: project.end - days * DAY_MS,
    to: project.end,
    filters: {},
    includeBots: false,
    visitorKey: 'anonymous',
  });
  try {
    const refreshStarted = performance.now();
    refreshedDays = await raw.markedDays();
    // The store's background refresher takes days too (on PostgreSQL they are skipped here while
    // it holds them): done when no day is marked.
    while ((await store.reports.refreshRollups()) > 0 || (await raw.markedDays()) > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    refreshSeconds = (performance.now() - refreshStarted) / 1000;
    log(`  rollups of ${refreshedDays} days built in ${refreshSeconds.toFixed(1)} s`);
    const aheadStarted = performance.now();
    let turns = 0;
    if (panels.some(([name]) => name.includes('kept ahead'))) while (await store.reports.keepFilteredAhead()) turns++;
    aheadSeconds = (performance.now() - aheadStarted) / 1000;
    log(`  filtered top lists kept ahead in ${aheadSeconds.toFixed(1)} s (${turns} turns)`);
    // A warm-up read past the budget (a cold cache) is no result either: the measured calls follow.
    // Over the longest range, which holds the others: what a report keeps at its first read (a
    // funnel's days, reports/session-days.ts) is then kept for every range, as for a dashboard
    // opened before. The panels that read the events (`first`, `kept`) warm up first: on a file
    // larger than memory their reads push the others' pages out of the OS's cache, which the
    // others' warm-up then brings back, as a dashboard read before has them.
    // Then the others over the shorter ranges too: the longest holds their days but not their
    // rows (over 90 days top lists read whole weeks, over 7 and 30 days mostly days), and after a
    // long keep-ahead those rows were cold: the 7- and 30-day top lists at 10M events timed the
    // disk, three to five times their 90 days.
    const longest = query(RANGES[RANGES.length - 1] as number);
    const warmUp = [
      ...panels.filter(([, , before]) => before !== undefined).map((panel) => [panel, longest] as const),
      ...[...RANGES].reverse().flatMap((days) => panels.filter(([, , before]) => before === undefined).map((panel) => [panel, query(days)] as const)),
    ];
    for (const [[name, run], q] of warmUp) {
      await run(store, q).catch(async (error: unknown) => {
        if (!(isStoreError(error) && error.code === 'BUSY')) throw error;
        log(`  ${name}: its warm-up read was past the read budget (${error.message})`);
        await settle(store, q);
      });
    }
    // What the warm-up started keeping in memory (the experiment report's cells) is kept before any timing.
    const cellsStarted = performance.now();
    await store.reports.keptSettled();
    log(`  kept in memory in ${((performance.now() - cellsStarted) / 1000).toFixed(1)} s after the warm-up (the experiment report's cells)`);
    await awaitKept(raw, panels.some(([name]) => KEEPING.test(name)));
    const answers = new Map<string, unknown>();
    // The panels that delete kept rows last, each range after every other panel's ranges: the rows
    // kept ahead are read by the others.
    const phases = [panels.filter(([, , before]) => before === undefined), panels.filter(([, , before]) => before !== undefined)];
    for (const [phase, days] of phases.flatMap((panels) => RANGES.map((days) => [panels, days] as const))) {
      for (const [name, run, before, rows] of phase) {
        if (before === 'first') await forgetKept(raw, rows ?? 'filtered');
        if (before === 'kept') await awaitKept(raw);
        const c0 = await cpu.read();
        const t0 = performance.now();
        // Past the read budget (SQLite's reader answers BUSY, as the API answers 503): a result, not an end.
        const answer = await run(store, query(days)).catch((error: unknown) => {
          if (isStoreError(error) && error.code === 'BUSY') return OVER_BUDGET;
          throw error;
        });
        const ms = answer === OVER_BUDGET ? Infinity : performance.now() - t0;
        // The reader finishes a read it answered BUSY for before it takes the next: a cheap read
        // queued behind it waits for that, so that the next panel times itself, not the backlog.
        if (answer === OVER_BUDGET) await settle(store, query(days));
        const cpuMs = (await cpu.read()) - c0;
        if (days === 30) answers.set(name, answer);
        if (days !== 7) kept.set(answerKey(name, days), answer);
        timings.set(name, [...(timings.get(name) ?? []), ms, ...(days === 30 ? [cpuMs] : [])]);
        log(`  ${name}, ${days} days: ${ms.toFixed(0)} ms (CPU ${cpuMs.toFixed(0)} ms)`);
      }
    }
    for (const [name, run, before] of panels) {
      // Its reads are other rows' own, compared with the events there.
      if (name === OVERVIEW_PANEL) continue;
      const t0 = performance.now();
      const answer = await run(raw, query(30));
      const ms = performance.now() - t0;
      timings.set(name, [...(timings.get(name) ?? []), ms]);
      // The live panel's range ends at the end of the data: nothing in it, the same either way.
      const served = answers.get(name);
      const compared = served === OVER_BUDGET ? { exactEqual: true, worstEstimateError: 0, estimateErrors: [] } : compareAnswers(served, answer);
      if (!compared.exactEqual) mismatches.push(name);
      worstEstimateError = Math.max(worstEstimateError, compared.worstEstimateError);
      // The percentile's sample: each estimate once (the rows that delete what is kept answer as
      // their "kept ahead" row does), and no count that is exact by construction.
      if (before === undefined && !EXACT_UNIQUE_PANELS.test(name)) estimateErrors.push(...compared.estimateErrors);
      log(`  ${name}, 30 days from the events: ${ms.toFixed(0)} ms`);
    }
    if ('sketchMerge' in store && store.sketchMerge === 'hll') nodeMerged = await measureNodeMerged(location, query(90), kept, log, panels);
  } finally {
    await cpu.close();
    await raw.close();
    await store.close();
  }
  if (cold && !isPostgresUrl(location)) coldOverview = await measureColdOverview(location, query(90), log);
  return { timings, events: project.events, loadSeconds, aggregateSeconds, refreshedDays, refreshSeconds, aheadSeconds, mismatches, worstEstimateError, estimateErrors, answers: kept, ...(nodeMerged === undefined ? {} : { nodeMerged }), ...(coldOverview === undefined ? {} : { coldOverview }) };
}

/** The 90-day panels of a PostgreSQL database read again by a store that merges the sketches in Node, beside the extension's answers (`kept`). */
async function measureNodeMerged(
  url: string,
  q: ReportQuery,
  kept: ReadonlyMap<string, unknown>,
  log: (line: string) => void,
  panels: Panel[],
): Promise<NonNullable<StoreResult['nodeMerged']>> {
  const store = createPostgresStore({ url, poolSize: 4, hllExtension: false , keepFiltersAhead: false });
  await store.init();
  const timings = new Map<string, number>();
  let sameAnswers = true;
  try {
    // What a panel keeps in this process's memory (the experiment report's cells) is kept first,
    // as in the store measured before: its first read alone reads the rollups.
    for (const [name, run] of panels) if (name.startsWith('experiment')) await run(store, q);
    await store.reports.keptSettled();
    for (const [name, run] of panels) {
      const t0 = performance.now();
      const answer = await run(store, q);
      timings.set(name, performance.now() - t0);
      sameAnswers &&= JSON.stringify(answer) === JSON.stringify(kept.get(answerKey(name, 90)));
      log(`  ${name}, 90 days, sketches merged in Node: ${(timings.get(name) as number).toFixed(0)} ms`);
    }
  } finally {
    await store.close();
  }
  return { timings, sameAnswers };
}

/** A panel's answer when the store refused the read past its time budget. */
const OVER_BUDGET = Symbol('over budget');

const fmt = (ms: number | undefined): string => (ms === undefined ? '—' : ms === Infinity ? 'over budget' : ms < 10 ? ms.toFixed(1) : ms.toFixed(0));

/** Options of {@link measurePanels}. */
export interface PanelBenchOptions {
  events: number;
  stores: Array<'sqlite' | 'postgres'>;
  /** Databases already filled by bench/generate-project.ts (SQLite paths, postgres:// URLs), measured instead of generating. */
  existing?: string[];
  /** Names of the panels to measure (all when absent). */
  only?: string[];
  /** Also time the overview after dropping the OS's page cache, on SQLite ({@link StoreResult.coldOverview}). */
  coldOverview?: boolean;
  log: (line: string) => void;
}

/** Runs the panel benchmark on the given stores; returns the RESULTS.md section body. */
export async function runPanelBench(options: PanelBenchOptions): Promise<string> {
  return panelTable(await measurePanels(options));
}

/** Measures every panel on the given stores (each generated, measured, then removed, one after the other); results by store name. */
export async function measurePanels(options: PanelBenchOptions): Promise<Map<string, StoreResult>> {
  const results = new Map<string, StoreResult>();
  const unknown = (options.only ?? []).filter((name) => !PANELS.some(([panel]) => panel === name));
  if (unknown.length > 0) throw new Error(`no panel named ${unknown.join(', ')} (the names of the table's first column)`);
  const panels = options.only === undefined ? PANELS : PANELS.filter(([name]) => (options.only as string[]).includes(name));
  const dir = mkdtempSync(join(tmpdir(), 'panel-bench-'));
  let pgServer: PostgresServer | null = null;
  try {
    for (const location of options.existing ?? []) {
      const name = isPostgresUrl(location) ? 'PostgreSQL' : 'SQLite';
      options.log(`panel bench: ${name}, ${location}`);
      results.set(name, await measureStore(location, 0, options.log, true, panels, options.coldOverview));
    }
    if (options.existing !== undefined && options.existing.length > 0) {
      // Measured on the given databases only.
    } else if (options.stores.includes('sqlite')) {
      options.log('panel bench: SQLite');
      results.set('SQLite', await measureStore(join(dir, 'panels.db'), options.events, options.log, false, panels, options.coldOverview));
      // A 10M-event file is about 12 GB: gone before the next store fills the disk.
      for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `panels.db${suffix}`), { force: true });
    }
    if (options.stores.includes('postgres') && (options.existing ?? []).length === 0) {
      options.log('panel bench: PostgreSQL');
      pgServer = await startPostgres();
      results.set('PostgreSQL', await measureStore(pgServer.url, options.events, options.log, false, panels));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await pgServer?.stop().catch(() => {});
  }
  return results;
}

/** The "## Report panels" section body of measured stores. */
export function panelTable(results: ReadonlyMap<string, StoreResult>): string {
  const names = [...results.keys()];
  const columns = ['7 d', '30 d', '30 d CPU', '90 d', '30 d, events alone'];
  // A store whose extension merged the sketches gets the 90 days merged in Node beside them.
  const nodeColumn = '90 d, sketches merged in Node';
  const columnsOf = (n: string) => (results.get(n)?.nodeMerged === undefined ? columns : [...columns, nodeColumn]);
  const header = `| panel | ${names.flatMap((n) => columnsOf(n).map((c) => `${n} ${c}`)).join(' | ')} |`;
  const rule = `|---|${names.flatMap((n) => columnsOf(n).map(() => '---:')).join('|')}|`;
  const cell = (n: string, panel: string, i: number) => fmt(i < columns.length ? results.get(n)?.timings.get(panel)?.[i] : results.get(n)?.nodeMerged?.timings.get(panel));
  const measured = PANELS.filter(([panel]) => names.some((n) => results.get(n)?.timings.has(panel)));
  const rows = measured.map(([panel]) => `| ${panel} | ${names.flatMap((n) => columnsOf(n).map((_, i) => cell(n, panel, i))).join(' | ')} |`);
  const merged = names
    .filter((n) => results.get(n)?.nodeMerged !== undefined)
    .map(
      (n) =>
        ` ${n} had the \`hll\` extension, which merged the totals' and top lists' sketches in the database; its last column is the same 90 days read by a store that merges them in Node, as without it (${results.get(n)?.nodeMerged?.sameAnswers === true ? 'every answer equal' : 'SOME ANSWERS DIFFERED'}).`,
    )
    .join('');
  const loads = names
    .map((n) => {
      const r = results.get(n) as StoreResult;
      const perDay = r.refreshedDays === 0 ? '—' : ((r.refreshSeconds * 1000) / r.refreshedDays).toFixed(0);
      const loaded = Number.isNaN(r.loadSeconds) ? 'a database generated before' : `loaded in ${r.loadSeconds.toFixed(0)} s`;
      return `${n}: ${r.events.toLocaleString('en')} events ${loaded}, aggregates built at the first open in ${r.aggregateSeconds.toFixed(0)} s, rollups of ${r.refreshedDays} days built in ${r.refreshSeconds.toFixed(0)} s (${perDay} ms a day of about ${Math.round(r.events / 90).toLocaleString('en')} events), filtered top lists kept ahead in ${r.aheadSeconds.toFixed(0)} s`;
    })
    .join('; ');
  const mismatches = names.flatMap((n) => (results.get(n) as StoreResult).mismatches.map((panel) => `${n} ${panel}`));
  const cold = names
    .filter((n) => results.get(n)?.coldOverview !== undefined)
    .map(
      (n) =>
        `${n}, the overview's reads over 90 days (as a browser sends them: six at a time, each previous period after its own) on a store opened for it, the OS's page cache dropped just before (a dashboard's first view after a restart, or once the file has left memory), then again, the median of ${COLD_OVERVIEW_ROUNDS} rounds alternating the count of reader threads: ${(results.get(n)?.coldOverview ?? [])
          .map(({ threads, coldMs, warmMs }) => `${threads} reader threads ${fmt(coldMs)} ms, then ${fmt(warmMs)} ms`)
          .join('; ')} (the store reads on ${REPORT_THREADS}).`,
    );
  return [
    `Milliseconds per panel (wall time, and the database's CPU time over 30 days), one call each after a warm-up of every panel over 90 days and of those that delete nothing kept over each range, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, on this 2-core machine shared with other work (noisy: compare columns of one run; load average ${loadavg()[0]?.toFixed(1)} at the end). ${loads} (bench/generate-project.ts: a bulk load straight into the tables, then \`refreshRollups()\`). Each panel is what its endpoint asks of the store, without HTTP: timeseries, top lists, errors and sessions from the aggregates kept at ingest (docs/decisions.md, "Aggregates at ingest", "Session summaries"), the other panels from the daily rollups (whole clean days) and the events (the rest), a top list with one filter from the rows kept per day (ahead, for every value with at least 1,000 events a day: in a server by its background, here by the bench before the panels, the store's background keeping none while it times them; or by the top lists of that filter before it) and the events for the rest (docs/decisions.md, "Filtered top lists"; the rows "nothing kept" delete every kept row first and compute them from the events; the overview rows are the dashboard's eight top lists asked at once with that filter), a funnel and the sessions report with one filter from what their first read kept per day and the sessions that span days (docs/decisions.md, "Kept funnels and sessions"; their rows "nothing kept" delete the kept rows first); the last column of each store is the same 30 days read from the events alone, by the report SQL without aggregates or rollups. ${mismatches.length === 0 ? 'Every exact number of every 30-day answer was equal both ways' : `Answers whose exact numbers differed between the store and the events: ${mismatches.join(', ')}`}; the relative error of a unique count (visitors, and sessions outside the sessions report: sketch estimates, docs/protocol.md) was at most ${names
      .map((n) => {
        const r = results.get(n) as StoreResult;
        const p99 = r.estimateErrors.length === 0 ? `no estimate past ${SKETCH_EXACT_UP_TO}` : `99th percentile ${(percentile(r.estimateErrors, 99) * 100).toFixed(2)}% of the ${r.estimateErrors.length} estimates past ${SKETCH_EXACT_UP_TO}, each answer once`;
        return `${(r.worstEstimateError * 100).toFixed(2)}% on ${n} (${p99})`;
      })
      .join(', ')}. Aim: each panel ≤ 100 ms over 90 days (issue aim).${merged}`,
    '',
    header,
    rule,
    ...rows,
    ...(cold.length === 0 ? [] : ['', ...cold]),
  ].join('\n');
}
