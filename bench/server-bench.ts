// Server ingest benchmark (README, "Benchmarks"): events/s and latency of POST /api/v1/events/batch
// for our server on SQLite and on PostgreSQL, side by side with a bare node:http server that only
// reads, parses and answers — the limit on this machine — in the same run.
//
//   npm run bench:server                       # per target: 2 rounds of 2 s warm-up + 5 s window
//   npm run bench:server -- --quick            # 1 round of 1 s + 3 s, for development
//   npm run bench:server -- --duration=20 --rounds=3 --targets=bare,sqlite
//   npm run bench:server -- --cpu-prof         # V8 CPU profiles of each server → bench/.out/profiles
//   npm run bench:server -- --client=http      # load from node:http + keep-alive Agent instead of the raw client
//   npm run bench:server -- --store-alone=false  # skip the stores' own ceilings (bench/store-alone.ts)
//   npm run bench:server -- --quick --no-write   # print only; bench/RESULTS.md is left as it is
//   npm run bench:server -- --panels[=N]         # instead of ingest: every report panel over 7/30/90 days
//   npm run bench:server -- --panels-on=data/big.db  # the same on a database bench/generate-project.ts filled
//   npm run bench:server -- --panels-on=data/big.db --panels-only='experiment;funnel (4 steps)'
//                                                # those panels only, printed, never written (bench/panel-bench.ts)
//   npm run bench:server -- --panels-on=data/big.db --cold-overview
//                                                # and the overview's first view after the OS's page cache was
//                                                # dropped, on two and four reader threads (Linux, root: it empties
//                                                # the page cache of the whole machine)
//   npm run bench:server -- --panels=N --targets=sqlite,postgres,clickhouse [--chdb-dir=DIR]
//                                                # the panels on ClickHouse (chDB) beside SQLite and PostgreSQL on
//                                                # the same generated project, FINAL's cost, and each store's ingest
//                                                # alone (bench/clickhouse-panels.ts); writes "## ClickHouse (chDB)
//                                                # beside SQLite and PostgreSQL", a subsection per event count. The
//                                                # chDB data goes to DIR and stays there (default: a temporary
//                                                # directory, removed); a DIR that holds a project is measured as it is;
//                                                # --repeats=N: calls per ClickHouse panel and column (median; default 3)
//   npm run bench:server -- --reads[=N]          # instead of ingest: /healthz and ingest latency idle, under the
//                                                # heaviest report, under an erasure (bench/reads-beside-writes.ts)
//                                                # on N generated events (default 1,000,000)
//   npm run bench:server -- --reads-on=data/big.db   # the same on a database bench/generate-project.ts filled
//                                                # (its heaviest user is erased: the file changes)
//
// Every setting also reads from the environment: BENCH_DURATION, BENCH_WARMUP, BENCH_CONCURRENCY,
// BENCH_BATCH, BENCH_ROUNDS, BENCH_TARGETS, BENCH_CLIENT, BENCH_CPU_PROF=1, BENCH_WRITE=0 (do not touch
// bench/RESULTS.md), BENCH_STORE_ALONE=0.
//
// Targets: `bare` (the limit), `noop` (our server with a store whose writes go nowhere: a diagnostic
// that separates HTTP + auth + validation from the database), `sqlite` (durability full, the
// default), `clickhouse` (measured as a store alone only: chDB runs inside the measuring process), `sqlite-relaxed` (durability relaxed: no fsync per commit), `sqlite-late` and
// `postgres-late` (the same stores, the load's events stamped a day before: a backfill, an offline
// queue; issue 36 asks that they cost what current ones cost), `postgres`, `postgres2` (two
// server processes on one PostgreSQL database, the load shared between them). Each runs in
// its own process (bench/server-target.ts), fresh database per round; the load generator runs in
// this one (two cores: one each). The load uses a hand-written keep-alive HTTP/1.1 client
// (bench/load.ts) because node:http's client costs about as much CPU per request as the bare
// server and would set the limit itself. Rounds alternate the target order, so that noise from a
// shared machine spreads over all targets. After the rounds, each store of the targets is measured
// alone (no HTTP, bench/store-alone.ts): a ceiling that no server on that store can pass here. The table is printed and written to bench/RESULTS.md
// under "## Server ingest" (other sections are kept). Aims are reported, never enforced.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type PostgresServer, startPostgres } from '../test-support/postgres-server.js';
import { chdbDirectory, chdbTransport } from './chdb-location.js';
import { type LoadResult, runLoad } from './load.js';
import { writeResultsSection } from './results-file.js';
import type { TargetMark, TargetReady } from './server-target.js';
import {
  ALL_TARGETS,
  type CpuShares,
  LABELS,
  eventAgeOf,
  type RunResult,
  type RunShape,
  type StoreAloneRow,
  type StoreTarget,
  type TargetName,
  fmtInt,
  report,
  summarise,
} from './server-report.js';
import { runReadsBesideWritesBench } from './reads-beside-writes.js';
import { measurePanels, runPanelBench } from './panel-bench.js';
import { measureStoreAlone } from './store-alone.js';
import { clickhouseSection, measureClickHouse } from './clickhouse-panels.js';
import { writeResultsSubsection } from './results-file.js';
import { ALONE_LABELS, STORE_ONLY_TARGETS } from './server-report.js';

const execFileAsync = promisify(execFile);

/**
 * The project root: the working directory when it is a checkout (npm scripts run there), else the
 * nearest package.json above this file. This file runs from a bundle in node_modules/.cache, which
 * may be a link into another checkout: the working directory comes first so that the results go to
 * the checkout the bench was started in.
 */
function findRoot(): string {
  if (existsSync(join(process.cwd(), 'bench', 'server-bench.ts'))) return process.cwd();
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (!dir.includes('node_modules') && existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}
const ROOT = findRoot();
const RESULTS_PATH = join(ROOT, 'bench', 'RESULTS.md');
const SECTION = '## Server ingest';
const PANELS_SECTION = '## Report panels';
const READS_SECTION = '## Reads beside writes';
const CLICKHOUSE_SECTION = '## ClickHouse (chDB) beside SQLite and PostgreSQL';

interface Settings extends RunShape {
  targets: TargetName[];
  cpuProf: boolean;
  write: boolean;
  storeAlone: boolean;
  /** Events of the panel benchmark, or null to measure ingest. */
  panels: number | null;
  /** Events of the project of the reads-beside-writes bench, or null for the ingest bench. */
  reads: number | null;
  /** SQLite files for the reads-beside-writes bench instead of (or besides, with `reads`) a generated project. */
  readsOn: string[];
  /** Databases filled before, which the panel benchmark measures instead of generating. */
  panelsOn: string[];
  /** The panels the panel benchmark measures; null for all. */
  panelsOnly: string[] | null;
  /** Drop the OS's page cache to time the overview cold (Linux, root; it empties the cache of the whole machine). */
  coldOverview: boolean;
  /** `clickhouse` was named in `--targets` (or BENCH_TARGETS), not only there by default. */
  clickhouseAsked: boolean;
  /** Where the panel benchmark keeps its chDB data (kept after the run); null for a temporary directory. */
  chdbDir: string | null;
  /** Calls per ClickHouse panel and column, whose median is kept. */
  repeats: number;
}

const KNOWN_ARGS = ['reads', 'reads-on', 'panels', 'panels-on', 'panels-only', 'quick', 'duration', 'warmup', 'concurrency', 'batch', 'rounds', 'targets', 'client', 'cpu-prof', 'write', 'no-write', 'store-alone', 'chdb-dir', 'repeats', 'cold-overview'];

function readSettings(argv: string[]): Settings {
  const args = new Map<string, string>();
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg} (see the header of bench/server-bench.ts)`);
    if (!KNOWN_ARGS.includes(m[1] as string)) throw new Error(`unknown argument --${m[1]} (see the header of bench/server-bench.ts)`);
    args.set(m[1] as string, m[2] ?? 'true');
  }
  // As in bench/client-bench.ts.
  if (args.get('no-write') === 'true') args.set('write', 'false');
  const quick = args.get('quick') === 'true';
  const get = (name: string, env: string, fallback: string): string => args.get(name) ?? process.env[env] ?? fallback;
  const num = (name: string, env: string, fallback: number): number => {
    const value = Number(get(name, env, String(fallback)));
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const targets = get('targets', 'BENCH_TARGETS', ALL_TARGETS.join(','))
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  for (const t of targets) if (!ALL_TARGETS.includes(t as TargetName)) throw new Error(`unknown target ${t}`);
  const client = get('client', 'BENCH_CLIENT', 'raw');
  if (client !== 'raw' && client !== 'http') throw new Error('--client must be raw or http');
  return {
    durationSeconds: num('duration', 'BENCH_DURATION', quick ? 3 : 5),
    warmupSeconds: num('warmup', 'BENCH_WARMUP', quick ? 1 : 2),
    concurrency: Math.round(num('concurrency', 'BENCH_CONCURRENCY', 32)),
    batchSize: Math.round(num('batch', 'BENCH_BATCH', 20)),
    rounds: Math.round(num('rounds', 'BENCH_ROUNDS', quick ? 1 : 2)),
    targets: ALL_TARGETS.filter((t) => targets.includes(t)),
    clickhouseAsked: get('targets', 'BENCH_TARGETS', '').split(',').map((t) => t.trim()).includes('clickhouse'),
    client,
    cpuProf: get('cpu-prof', 'BENCH_CPU_PROF', 'false') === 'true' || process.env.BENCH_CPU_PROF === '1',
    write: get('write', 'BENCH_WRITE', 'true') !== 'false' && process.env.BENCH_WRITE !== '0',
    storeAlone: get('store-alone', 'BENCH_STORE_ALONE', 'true') !== 'false' && process.env.BENCH_STORE_ALONE !== '0',
    panels:
      args.has('panels') || args.has('panels-on') ? (args.get('panels') ?? 'true') === 'true' ? 10_000_000 : num('panels', 'BENCH_PANELS', 10_000_000) : null,
    panelsOn: (args.get('panels-on') ?? '').split(',').filter(Boolean),
    // Names hold commas ("top pages, device filter, kept ahead"): a semicolon separates them.
    panelsOnly: args.has('panels-only') ? (args.get('panels-only') ?? '').split(';').filter(Boolean) : null,
    reads: args.has('reads') ? ((args.get('reads') ?? 'true') === 'true' ? 1_000_000 : num('reads', 'BENCH_READS', 1_000_000)) : null,
    readsOn: (args.get('reads-on') ?? '').split(',').filter(Boolean),
    coldOverview: get('cold-overview', 'BENCH_COLD_OVERVIEW', 'false') === 'true' || process.env.BENCH_COLD_OVERVIEW === '1',
    chdbDir: args.get('chdb-dir') ?? null,
    repeats: Math.round(num('repeats', 'BENCH_REPEATS', 3)),
  };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux): who used the two cores during the window.

const CLOCK_TICKS = 100;

function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After "pid (comm) ": state is field 3, utime 14, stime 15 → indexes 11, 12 here.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Busy and total jiffies of the whole machine. */
function machineTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** The server processes of a PostgreSQL: the postmaster and its children (backends, writers). */
function postgresPids(postmaster: number): number[] {
  const pids = [postmaster];
  try {
    const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim();
    if (children) pids.push(...children.split(/\s+/).map(Number));
  } catch {
    // not Linux, or gone
  }
  return pids;
}

interface CpuSample {
  server: TargetMark;
  db: Map<number, number>;
  load: number;
  machine: { busy: number; total: number } | null;
  at: number;
}

/** CPU seconds so far of each process of a PostgreSQL server; empty without one. */
function postgresCpu(postmaster: number | null): Map<number, number> {
  const db = new Map<number, number>();
  if (postmaster !== null) {
    for (const pid of postgresPids(postmaster)) {
      const s = processCpuSeconds(pid);
      if (s !== null) db.set(pid, s);
    }
  }
  return db;
}

/** PostgreSQL's CPU between two {@link postgresCpu} readings, cores; null without a server. */
function postgresShare(a: Map<number, number>, b: Map<number, number>, seconds: number): number | null {
  if (b.size === 0) return null;
  let db = 0;
  // Backends started inside the window count from zero.
  for (const [pid, s] of b) db += s - (a.get(pid) ?? 0);
  return db / seconds;
}

function sampleCpu(server: TargetMark, postmaster: number | null): CpuSample {
  const usage = process.cpuUsage();
  return {
    server,
    db: postgresCpu(postmaster),
    load: (usage.user + usage.system) / 1e6,
    machine: machineTicks(),
    at: performance.now(),
  };
}

function cpuShares(a: CpuSample, b: CpuSample): CpuShares {
  const seconds = (b.at - a.at) / 1000;
  const db = postgresShare(a.db, b.db, seconds);
  const serverMs = b.server.at - a.server.at;
  const commits = b.server.commits - a.server.commits;
  const commitSeconds = b.server.commitSeconds - a.server.commitSeconds;
  const active = b.server.eluActive - a.server.eluActive;
  const idle = b.server.eluIdle - a.server.eluIdle;
  return {
    server: (b.server.cpuMicros - a.server.cpuMicros) / 1000 / serverMs,
    serverLoop: active / Math.max(1e-9, active + idle),
    serverStarved:
      a.server.runQueueMs !== null && b.server.runQueueMs !== null ? (b.server.runQueueMs - a.server.runQueueMs) / serverMs : null,
    commits,
    itemsPerCommit: commits > 0 ? (b.server.commitItems - a.server.commitItems) / commits : null,
    msPerCommit: commits > 0 ? (commitSeconds * 1000) / commits : null,
    commitShare: (commitSeconds * 1000) / serverMs,
    db,
    load: (b.load - a.load) / seconds,
    machine: a.machine && b.machine ? (b.machine.busy - a.machine.busy) / Math.max(1, b.machine.total - a.machine.total) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// The server child process.

interface Child {
  ready: TargetReady;
  /** Counters of the server process now (CPU, event loop, group commits). */
  mark(): Promise<TargetMark>;
  /** Asks it to stop (our server commits what it acknowledged and closes the store) and waits. */
  stop(): Promise<void>;
  kill(): void;
}

async function buildTargetBundle(): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [join(ROOT, 'scripts/run-ts.mjs'), join(ROOT, 'bench/server-target.ts')], {
    cwd: ROOT,
    env: { ...process.env, RUN_TS_BUILD_ONLY: '1' },
  });
  return stdout.trim().split('\n').pop() as string;
}

const children = new Set<ChildProcess>();

async function startChild(bundle: string, args: string[], cpuProfDir: string | null): Promise<Child> {
  const nodeFlags = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, `--cpu-prof-name=${args[0]}-${Date.now()}.cpuprofile`] : [];
  const proc = spawn(process.execPath, [...nodeFlags, bundle, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(proc);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  void exited.then(() => children.delete(proc));
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const waiters: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiters.shift()?.(line));
  const nextLine = (what: string, ms: number): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server ${args[0]}: no ${what} within ${ms} ms`)), ms);
      waiters.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`server ${args[0]} exited with ${code} before ${what}`));
      });
    });
  const ready = JSON.parse(await nextLine('start-up line', 60_000)) as TargetReady;
  return {
    ready,
    async mark() {
      const line = nextLine('mark line', 30_000);
      proc.stdin?.write('mark\n');
      return (JSON.parse(await line) as { mark: TargetMark }).mark;
    },
    async stop() {
      const stopped = nextLine('stop line', 60_000);
      proc.stdin?.end('stop\n');
      await stopped;
      const code = await exited;
      if (code !== 0) throw new Error(`server ${args[0]} exited with ${code}`);
    },
    kill() {
      proc.kill('SIGKILL');
    },
  };
}

// ---------------------------------------------------------------------------------------------

async function countSqlite(file: string, projectId: string): Promise<number> {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM events WHERE project_id = ?').get(projectId) as { n: number }).n;
  } finally {
    db.close();
  }
}

async function countPostgres(url: string, projectId: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE project_id = $1', [projectId]);
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** Postmaster pid of a server, for CPU accounting: the parent of a backend. */
async function postmasterPid(url: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const stat = readFileSync(`/proc/${rows[0]?.pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  } finally {
    await client.end();
  }
}

let pgServer: PostgresServer | null = null;
let databases = 0;
/** The chDB directory of this process's ClickHouse measurements (removed at the end), or null. */
let chdbScratch: string | null = null;

async function adminQuery(sql: string): Promise<void> {
  pgServer ??= await startPostgres();
  const admin = new pg.Client({ connectionString: pgServer.url });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A new empty database on the benchmark's PostgreSQL server; `drop` removes it again. */
async function freshPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${++databases}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL((pgServer as PostgresServer).url);
  url.pathname = `/${name}`;
  // Dropped after counting, so that no autovacuum of it runs during the next target's window.
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}


/** An empty database for a store: where it is, its postmaster (PostgreSQL, for CPU accounting), and its removal. */
async function freshDatabase(target: StoreTarget): Promise<{ location: string; postmaster: number | null; cleanup(): Promise<void> }> {
  if (target === 'clickhouse') {
    // chDB binds one directory per process: the first ClickHouse measurement's stays for the run.
    chdbScratch ??= await mkdtemp(join(tmpdir(), 'service-analytics-bench-chdb-'));
    return { location: `chdb:${chdbScratch}`, postmaster: null, cleanup: async () => {} };
  }
  if (target !== 'postgres') {
    const dir = await mkdtemp(join(tmpdir(), 'service-analytics-bench-'));
    return { location: join(dir, 'events.db'), postmaster: null, cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const db = await freshPostgresDatabase();
  return { location: db.url, postmaster: await postmasterPid(db.url), cleanup: () => db.drop() };
}

/** Sums the counters of several server processes measured together (the two-process target). */
function sumMarks(marks: readonly TargetMark[]): TargetMark {
  const sum = (f: (m: TargetMark) => number): number => marks.reduce((a, m) => a + f(m), 0);
  const queues = marks.map((m) => m.runQueueMs);
  return {
    // Each process's own clock: the window's length is what matters, and it is the same for all.
    at: (marks[0] as TargetMark).at,
    cpuMicros: sum((m) => m.cpuMicros),
    runQueueMs: queues.every((q): q is number => q !== null) ? queues.reduce((a, q) => a + q, 0) : null,
    eluIdle: sum((m) => m.eluIdle),
    eluActive: sum((m) => m.eluActive),
    commits: sum((m) => m.commits),
    commitSeconds: sum((m) => m.commitSeconds),
    commitItems: sum((m) => m.commitItems),
    rssBytes: sum((m) => m.rssBytes),
  };
}

async function runTarget(target: TargetName, settings: Settings, bundle: string, cpuProfDir: string | null): Promise<RunResult> {
  let args: string[];
  let count: ((projectId: string) => Promise<number>) | null = null;
  let cleanup = async (): Promise<void> => {};
  let postmaster: number | null = null;
  const processes = target === 'postgres2' ? 2 : 1;
  if (target === 'bare' || target === 'noop') args = [target];
  else {
    const store: StoreTarget = target === 'sqlite-late' ? 'sqlite' : target === 'sqlite' || target === 'sqlite-relaxed' ? target : 'postgres';
    const db = await freshDatabase(store);
    args = [store, db.location];
    const countIn = store === 'postgres' ? countPostgres : countSqlite;
    count = (projectId) => countIn(db.location, projectId);
    cleanup = db.cleanup;
    postmaster = db.postmaster;
  }

  try {
    // One after the other: the first creates the schema and the project, the next finds them.
    const started: Child[] = [];
    try {
      for (let i = 0; i < processes; i++) started.push(await startChild(bundle, args, cpuProfDir));
    } catch (error) {
      for (const child of started) child.kill();
      throw error;
    }
    const mark = async (): Promise<TargetMark> => sumMarks(await Promise.all(started.map((child) => child.mark())));
    let opened: Promise<CpuSample> | null = null;
    let closed: Promise<CpuSample> | null = null;
    let load: LoadResult;
    let cpu: CpuShares | null = null;
    let rss: RunResult['rss'] = null;
    try {
      load = await runLoad(
        started.map((child) => child.ready),
        {
          concurrency: settings.concurrency,
          batchSize: settings.batchSize,
          warmupSeconds: settings.warmupSeconds,
          durationSeconds: settings.durationSeconds,
          client: settings.client,
          eventAgeMs: eventAgeOf(target),
          onWindow(edge) {
            // The machine-wide and PostgreSQL counters are read when the server's answer arrives,
            // a fraction of a millisecond later, so all counters cover the same span.
            const sample = mark().then((m) => sampleCpu(m, postmaster));
            if (edge === 'open') opened = sample;
            else closed = sample;
          },
        },
      );
      if (opened && closed) {
        const [a, b] = [await opened, await closed] as [CpuSample, CpuSample];
        cpu = cpuShares(a, b);
        rss = { start: a.server.rssBytes, end: b.server.rssBytes };
      }
      await Promise.all(started.map((child) => child.stop()));
    } catch (error) {
      for (const child of started) child.kill();
      throw error;
    }
    const stored = count ? await count((started[0] as Child).ready.projectId) : null;
    return { target, load, cpu, stored, rss };
  } finally {
    await cleanup();
  }
}

/**
 * Measures a store alone (bench/store-alone.ts) on a fresh database, in this process. ClickHouse
 * writes to a database of its own in `chdbLocation` when given (the process's one chDB directory).
 */
async function runStoreAlone(target: StoreTarget, settings: Settings, chdbLocation?: string, groupSize?: number): Promise<StoreAloneRow> {
  if (target === 'clickhouse' && chdbLocation !== undefined) {
    const database = `bench_store_alone_${Date.now().toString(36)}`;
    try {
      const result = await measureStoreAlone({ location: chdbLocation, database, seconds: settings.durationSeconds, ...(groupSize === undefined ? {} : { groupSize }) });
      return { target, result, db: null };
    } finally {
      await chdbTransport(chdbLocation).command(`DROP DATABASE IF EXISTS ${database} SYNC`);
      rmSync(join(chdbDirectory(chdbLocation), `config-${database}.db`), { force: true });
    }
  }
  const { location, postmaster, cleanup } = await freshDatabase(target);
  try {
    let a = new Map<number, number>();
    let b = new Map<number, number>();
    let opened = 0;
    let closed = 0;
    const result = await measureStoreAlone({
      location,
      durability: target === 'sqlite-relaxed' ? 'relaxed' : undefined,
      seconds: settings.durationSeconds,
      onWindow(edge) {
        if (edge === 'open') [a, opened] = [postgresCpu(postmaster), performance.now()];
        else [b, closed] = [postgresCpu(postmaster), performance.now()];
      },
    });
    return { target, result, db: postgresShare(a, b, (closed - opened) / 1000) };
  } finally {
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  if (settings.reads !== null || settings.readsOn.length > 0) {
    const table = await runReadsBesideWritesBench({ events: settings.reads, existing: settings.readsOn, log: (line) => process.stderr.write(`${line}\n`) });
    console.log(`\n${READS_SECTION}\n\n${table}\n`);
    if (settings.write) {
      writeResultsSection(RESULTS_PATH, READS_SECTION, table);
      console.log(`written to ${RESULTS_PATH}`);
    }
    return;
  }
  // ClickHouse's panels only when asked for by name: every target is the default of an ingest run,
  // and `--panels=N` alone (or `--panels-on`) is the SQLite and PostgreSQL table.
  if (settings.panels !== null && settings.panelsOn.length === 0 && settings.clickhouseAsked) {
    await runClickHousePanels(settings);
    return;
  }
  if (settings.panels !== null) {
    const stores = settings.targets.filter((t): t is 'sqlite' | 'postgres' => t === 'sqlite' || t === 'postgres');
    const table = await runPanelBench({
      events: settings.panels,
      stores,
      existing: settings.panelsOn,
      ...(settings.panelsOnly === null ? {} : { only: settings.panelsOnly }),
      coldOverview: settings.coldOverview,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    console.log(`\n${PANELS_SECTION}\n\n${table}\n`);
    // Some panels are not the section's table: printed only.
    if (settings.write && settings.panelsOnly === null) {
      writeResultsSection(RESULTS_PATH, PANELS_SECTION, table);
      console.log(`written to ${RESULTS_PATH}`);
    }
    return;
  }
  const started = new Date();
  const load0 = loadavg();
  const bundle = await buildTargetBundle();
  const cpuProfDir = settings.cpuProf ? join(ROOT, 'bench/.out/profiles') : null;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });

  const runs = new Map<TargetName, RunResult[]>();
  for (let round = 0; round < settings.rounds; round++) {
    // Alternate the order so that no target always runs first (or last) on a warming machine.
    const order = round % 2 === 0 ? settings.targets : [...settings.targets].reverse();
    for (const target of order) {
      if (STORE_ONLY_TARGETS.includes(target)) continue;
      process.stderr.write(`server bench: ${LABELS[target]} (round ${round + 1}/${settings.rounds})… `);
      const result = await runTarget(target, settings, bundle, cpuProfDir);
      const eps = (result.load.windowOk / result.load.windowSeconds) * settings.batchSize;
      process.stderr.write(`${fmtInt(eps)} events/s\n`);
      runs.set(target, [...(runs.get(target) ?? []), result]);
    }
  }
  const rows = settings.targets.filter((t) => !STORE_ONLY_TARGETS.includes(t)).map((t) => summarise(t, runs.get(t) ?? [], settings.batchSize));
  const alone: StoreAloneRow[] = [];
  if (settings.storeAlone) {
    for (const target of settings.targets) {
      if (target !== 'sqlite' && target !== 'sqlite-relaxed' && target !== 'postgres' && target !== 'clickhouse') continue;
      process.stderr.write(`server bench: ${LABELS[target]}, its store alone… `);
      alone.push(await runStoreAlone(target, settings));
      process.stderr.write(`${fmtInt(alone[alone.length - 1]?.result.eventsPerSecond ?? 0)} events/s\n`);
    }
  }
  const allRuns = [...runs.values()].flat();
  const bodyBytes = allRuns.reduce((a, r) => a + r.load.meanBodyBytes, 0) / Math.max(1, allRuns.length);
  const table = report(rows, alone, settings, bodyBytes, started, load0);
  console.log(`\n${SECTION}\n\n${table}\n`);
  if (settings.write) {
    writeResultsSection(RESULTS_PATH, SECTION, table);
    console.log(`written to ${RESULTS_PATH}`);
  }
  if (cpuProfDir) console.log(`CPU profiles of the servers: ${cpuProfDir}`);
}

/**
 * The panels on ClickHouse beside SQLite and PostgreSQL (bench/clickhouse-panels.ts), each store on
 * the same generated project, then each store's ingest alone; writes the event count's subsection
 * of the ClickHouse section.
 */
async function runClickHousePanels(settings: Settings): Promise<void> {
  const started = new Date();
  const events = settings.panels as number;
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const stores = settings.targets.filter((t): t is 'sqlite' | 'postgres' => t === 'sqlite' || t === 'postgres');
  const storeNames = stores.map((t) => (t === 'sqlite' ? 'SQLite' : 'PostgreSQL'));
  const names = [...storeNames, 'ClickHouse'];
  const heading = `### ${events.toLocaleString('en')} events: ${names.slice(0, -1).join(', ')}${names.length > 1 ? ' and ' : ''}${names[names.length - 1]}`;
  const keep = settings.chdbDir !== null;
  const directory = keep ? (settings.chdbDir as string) : await mkdtemp(join(tmpdir(), 'panel-bench-chdb-'));
  if (!keep) chdbScratch = directory;
  const location = `chdb:${directory}`;
  const write = (table: string): void => {
    console.log(`\n${CLICKHOUSE_SECTION}\n\n${heading}\n\n${table}\n`);
    if (!settings.write) return;
    writeResultsSubsection(RESULTS_PATH, CLICKHOUSE_SECTION, heading, table);
    console.log(`written to ${RESULTS_PATH}`);
  };
  // ClickHouse first, written at once, so that a long run of the other stores loses none of it.
  log('panel bench: ClickHouse (chDB)');
  const clickhouse = await measureClickHouse(location, events, log, { repeats: settings.repeats });
  if (stores.length > 0) write(clickhouseSection({ sql: new Map(), clickhouse, alone: [], aloneLabels: ALONE_LABELS, started, pending: storeNames }));
  const sql = await measurePanels({ events, stores, log });
  const alone: StoreAloneRow[] = [];
  // ClickHouse also with groups ten times larger: its commits are slower, and the server's write
  // queue gathers whatever arrived meanwhile into the next group.
  const runs: Array<[StoreTarget, number | undefined]> = [['sqlite', undefined], ['postgres', undefined], ['clickhouse', undefined], ['clickhouse', 2500]];
  for (const [target, groupSize] of runs) {
    if (!settings.targets.includes(target)) continue;
    log(`store alone: ${ALONE_LABELS[target]}${groupSize === undefined ? '' : `, groups of ${groupSize}`}…`);
    alone.push(await runStoreAlone(target, settings, location, groupSize));
    log(`  ${fmtInt(alone[alone.length - 1]?.result.eventsPerSecond ?? 0)} events/s`);
  }
  write(clickhouseSection({ sql, clickhouse, alone, aloneLabels: ALONE_LABELS, started }));
  if (keep) console.log(`chDB data kept in ${directory}`);
}

async function shutdown(): Promise<void> {
  if (chdbScratch !== null) rmSync(chdbScratch, { recursive: true, force: true });
  for (const child of children) child.kill('SIGKILL');
  if (pgServer) await pgServer.stop().catch(() => {});
}

process.on('SIGINT', () => {
  void shutdown().finally(() => process.exit(130));
});

main().then(
  () => shutdown(),
  async (error: unknown) => {
    console.error(error);
    await shutdown();
    process.exitCode = 1;
  },
);
