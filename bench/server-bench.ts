// Server ingest benchmark (DESIGN.md "Bars"): events/s and latency of POST /api/v1/events/batch
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
//
// Every setting also reads from the environment: BENCH_DURATION, BENCH_WARMUP, BENCH_CONCURRENCY,
// BENCH_BATCH, BENCH_ROUNDS, BENCH_TARGETS, BENCH_CLIENT, BENCH_CPU_PROF=1, BENCH_WRITE=0 (do not touch
// bench/RESULTS.md), BENCH_STORE_ALONE=0.
//
// Targets: `bare` (the limit), `noop` (our server with a store whose writes go nowhere: a diagnostic
// that separates HTTP + auth + validation from the database), `sqlite`, `postgres`. Each runs in
// its own process (bench/server-target.ts), fresh database per round; the load generator runs in
// this one (two cores: one each). The load uses a hand-written keep-alive HTTP/1.1 client
// (bench/load.ts) because node:http's client costs about as much CPU per request as the bare
// server and would set the limit itself. Rounds alternate the target order, so that noise from a
// shared machine spreads over all targets. After the rounds, each store of the targets is measured
// alone (no HTTP, bench/store-alone.ts): a ceiling that no server on that store can pass here. The table is printed and written to bench/RESULTS.md
// under "## Server ingest" (other sections are kept). Aims are reported, never enforced.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type PostgresServer, startPostgres } from '../test-support/postgres-server.js';
import { type ClientKind, type LoadResult, quantile, runLoad } from './load.js';
import type { TargetMark, TargetReady } from './server-target.js';
import { type StoreAloneResult, measureStoreAlone } from './store-alone.js';

const execFileAsync = promisify(execFile);

type TargetName = 'bare' | 'noop' | 'sqlite' | 'postgres';
const ALL_TARGETS: readonly TargetName[] = ['bare', 'noop', 'sqlite', 'postgres'];
const LABELS: Record<TargetName, string> = {
  bare: 'bare node:http (parse + answer)',
  noop: 'our server, no-op store (diagnostic)',
  sqlite: 'our server, SQLite',
  postgres: 'our server, PostgreSQL',
};
/** Aims from the issue: share of the bare limit's events/s. Reported, not enforced. */
const AIMS: Partial<Record<TargetName, number>> = { sqlite: 0.5, postgres: 0.35 };

/** The project root: the nearest package.json above this file (which runs from a bundle in node_modules/.cache). */
function findRoot(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (!dir.includes('node_modules') && existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}
const ROOT = findRoot();
const RESULTS_PATH = join(ROOT, 'bench', 'RESULTS.md');
const SECTION = '## Server ingest';

interface Settings {
  durationSeconds: number;
  warmupSeconds: number;
  concurrency: number;
  batchSize: number;
  rounds: number;
  targets: TargetName[];
  client: ClientKind;
  cpuProf: boolean;
  write: boolean;
  storeAlone: boolean;
}

const KNOWN_ARGS = ['quick', 'duration', 'warmup', 'concurrency', 'batch', 'rounds', 'targets', 'client', 'cpu-prof', 'write', 'no-write', 'store-alone'];

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
    client,
    cpuProf: get('cpu-prof', 'BENCH_CPU_PROF', 'false') === 'true' || process.env.BENCH_CPU_PROF === '1',
    write: get('write', 'BENCH_WRITE', 'true') !== 'false' && process.env.BENCH_WRITE !== '0',
    storeAlone: get('store-alone', 'BENCH_STORE_ALONE', 'true') !== 'false' && process.env.BENCH_STORE_ALONE !== '0',
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

interface CpuShares {
  /** Each as a share of one core over the window (1 = one core busy all the time). */
  server: number;
  /** Share of the window the server's event loop was busy (not waiting for I/O). */
  serverLoop: number;
  /** Share of the window the server's main thread was ready to run but had no core (other processes). */
  serverStarved: number | null;
  /** Group commits in the window: how many, events per commit, ms per commit. */
  commits: number;
  itemsPerCommit: number | null;
  msPerCommit: number | null;
  /** Share of the window spent inside commits. */
  commitShare: number;
  db: number | null;
  load: number;
  /** Share of all cores busy, any process (other agents included). */
  machine: number | null;
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

interface RunResult {
  target: TargetName;
  load: LoadResult;
  cpu: CpuShares | null;
  /** Events found in the database after the server closed; null for the bare server. */
  stored: number | null;
}

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

type StoreTarget = 'sqlite' | 'postgres';

/** An empty database for a store: where it is, its postmaster (PostgreSQL, for CPU accounting), and its removal. */
async function freshDatabase(target: StoreTarget): Promise<{ location: string; postmaster: number | null; cleanup(): Promise<void> }> {
  if (target === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), 'service-analytics-bench-'));
    return { location: join(dir, 'events.db'), postmaster: null, cleanup: () => rm(dir, { recursive: true, force: true }) };
  }
  const db = await freshPostgresDatabase();
  return { location: db.url, postmaster: await postmasterPid(db.url), cleanup: () => db.drop() };
}

async function runTarget(target: TargetName, settings: Settings, bundle: string, cpuProfDir: string | null): Promise<RunResult> {
  let args: string[];
  let count: ((projectId: string) => Promise<number>) | null = null;
  let cleanup = async (): Promise<void> => {};
  let postmaster: number | null = null;
  if (target === 'bare' || target === 'noop') args = [target];
  else {
    const db = await freshDatabase(target);
    args = [target, db.location];
    const countIn = target === 'sqlite' ? countSqlite : countPostgres;
    count = (projectId) => countIn(db.location, projectId);
    cleanup = db.cleanup;
    postmaster = db.postmaster;
  }

  try {
    const child = await startChild(bundle, args, cpuProfDir);
    let opened: Promise<CpuSample> | null = null;
    let closed: Promise<CpuSample> | null = null;
    let load: LoadResult;
    let cpu: CpuShares | null = null;
    try {
      load = await runLoad(child.ready, {
        concurrency: settings.concurrency,
        batchSize: settings.batchSize,
        warmupSeconds: settings.warmupSeconds,
        durationSeconds: settings.durationSeconds,
        client: settings.client,
        onWindow(edge) {
          // The machine-wide and PostgreSQL counters are read when the server's answer arrives,
          // a fraction of a millisecond later, so all counters cover the same span.
          const sample = child.mark().then((mark) => sampleCpu(mark, postmaster));
          if (edge === 'open') opened = sample;
          else closed = sample;
        },
      });
      if (opened && closed) cpu = cpuShares(await opened, await closed);
      await child.stop();
    } catch (error) {
      child.kill();
      throw error;
    }
    const stored = count ? await count(child.ready.projectId) : null;
    return { target, load, cpu, stored };
  } finally {
    await cleanup();
  }
}

interface StoreAloneRow {
  target: StoreTarget;
  result: StoreAloneResult;
  /** PostgreSQL's CPU over the window, cores; null for SQLite. */
  db: number | null;
}

/** Measures a store alone (bench/store-alone.ts) on a fresh database, in this process. */
async function runStoreAlone(target: StoreTarget, settings: Settings): Promise<StoreAloneRow> {
  const { location, postmaster, cleanup } = await freshDatabase(target);
  try {
    let a = new Map<number, number>();
    let b = new Map<number, number>();
    let opened = 0;
    let closed = 0;
    const result = await measureStoreAlone({
      location,
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
// Report.

interface Row {
  target: TargetName;
  runs: RunResult[];
  /** Latencies of all rounds' windows, sorted. */
  latenciesMs: Float64Array;
  /** CPU and commit figures, the mean over rounds. */
  cpu: CpuShares | null;
  eventsPerSecond: number;
  requestsPerSecond: number;
}

/** Pools the rounds of a target: rates over the sum of its windows, quantiles over all latencies. */
function summarise(target: TargetName, runs: RunResult[], batchSize: number): Row {
  const ok = runs.reduce((a, r) => a + r.load.windowOk, 0);
  const seconds = runs.reduce((a, r) => a + r.load.windowSeconds, 0);
  const latenciesMs = new Float64Array(runs.reduce((a, r) => a + r.load.latenciesMs.length, 0));
  let at = 0;
  for (const r of runs) {
    latenciesMs.set(r.load.latenciesMs, at);
    at += r.load.latenciesMs.length;
  }
  latenciesMs.sort();
  const cpus = runs.map((r) => r.cpu).filter((c): c is CpuShares => c !== null);
  let cpu: CpuShares | null = null;
  if (cpus.length > 0) {
    const mean = (f: (c: CpuShares) => number | null): number | null => {
      const values = cpus.map(f).filter((v): v is number => v !== null);
      return values.length > 0 ? values.reduce((a, b) => a + b, 0) / values.length : null;
    };
    cpu = {
      server: mean((c) => c.server) ?? 0,
      serverLoop: mean((c) => c.serverLoop) ?? 0,
      serverStarved: mean((c) => c.serverStarved),
      commits: mean((c) => c.commits) ?? 0,
      itemsPerCommit: mean((c) => c.itemsPerCommit),
      msPerCommit: mean((c) => c.msPerCommit),
      commitShare: mean((c) => c.commitShare) ?? 0,
      db: mean((c) => c.db),
      load: mean((c) => c.load) ?? 0,
      machine: mean((c) => c.machine),
    };
  }
  const requestsPerSecond = seconds > 0 ? ok / seconds : 0;
  return { target, runs, latenciesMs, cpu, requestsPerSecond, eventsPerSecond: requestsPerSecond * batchSize };
}

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number): string => (Number.isNaN(n) ? '—' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fmtPct = (n: number | null): string => (n === null ? '—' : `${Math.round(n * 100)}%`);

function failuresText(runs: RunResult[]): string {
  const all = new Map<string, number>();
  let short = 0;
  for (const r of runs) {
    for (const [k, v] of r.load.failures) all.set(k, (all.get(k) ?? 0) + v);
    short += r.load.shortAnswers;
  }
  const total = [...all.values()].reduce((a, b) => a + b, 0);
  const parts = [...all].map(([k, v]) => `${k}×${v}`);
  if (short > 0) parts.push(`short answers×${short}`);
  return parts.length === 0 ? '0' : `${total} (${parts.join(', ')})`;
}

function storedText(runs: RunResult[]): string {
  if (runs.some((r) => r.target === 'noop')) return '— (writes discarded)';
  if (runs.some((r) => r.stored === null)) return '— (no store)';
  const stored = runs.reduce((a, r) => a + (r.stored ?? 0), 0);
  const acked = runs.reduce((a, r) => a + r.load.acknowledgedEvents, 0);
  return `${fmtInt(stored)} / ${fmtInt(acked)} ${stored === acked ? '✓' : '✗ MISMATCH'}`;
}

function report(rows: Row[], alone: StoreAloneRow[], settings: Settings, bodyBytes: number, started: Date, load0: number[]): string {
  const bare = rows.find((r) => r.target === 'bare');
  const lines: string[] = [];
  lines.push(
    `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}, ` +
      `${started.toISOString().slice(0, 16).replace('T', ' ')} UTC; load average at start ${load0.map((l) => l.toFixed(2)).join(' ')}.`,
  );
  lines.push(
    `Settings: ${settings.concurrency} requests in flight over keep-alive connections, batches of ${settings.batchSize} events ` +
      `(${(bodyBytes / 1024).toFixed(1)} KB JSON on average, 8–9 properties per event), ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s measured per target` +
      `${settings.rounds > 1 ? `, ${settings.rounds} rounds (pooled: rates over all windows, quantiles over all requests)` : ''}; each server in its own process, load from one process ` +
      `(${settings.client === 'raw' ? 'hand-written keep-alive HTTP/1.1 client' : 'node:http with a keep-alive Agent'}), 127.0.0.1.`,
  );
  lines.push('');
  lines.push('| target | events/s | requests/s | p50 ms | p99 ms | % of bare limit | non-2xx | stored / acknowledged |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const row of rows) {
    const l = row.latenciesMs;
    const share = bare && row !== bare ? row.eventsPerSecond / bare.eventsPerSecond : row === bare ? 1 : null;
    lines.push(
      `| ${LABELS[row.target]} | ${fmtInt(row.eventsPerSecond)} | ${fmtInt(row.requestsPerSecond)} | ${fmtMs(quantile(l, 0.5))} | ` +
        `${fmtMs(quantile(l, 0.99))} | ${fmtPct(share)} | ${failuresText(row.runs)} | ${storedText(row.runs)} |`,
    );
  }
  lines.push('');
  const aims: string[] = [];
  for (const row of rows) {
    const aim = AIMS[row.target];
    if (aim === undefined) continue;
    if (!bare) {
      aims.push(`${LABELS[row.target]} ≥ ${aim * 100}% of the limit: not judged (bare target not run)`);
      continue;
    }
    const share = row.eventsPerSecond / bare.eventsPerSecond;
    const ceiling = alone.find((a) => a.target === row.target);
    aims.push(
      `${LABELS[row.target]} ≥ ${aim * 100}% of the limit: ${Math.round(share * 100)}% — ${share >= aim ? 'met' : 'NOT met'}` +
        (ceiling ? ` (its store alone, with no HTTP at all, takes ${Math.round((ceiling.result.eventsPerSecond / bare.eventsPerSecond) * 100)}%)` : ''),
    );
  }
  if (aims.length > 0) lines.push(`Aims (reported, not enforced): ${aims.join('; ')}.`, '');
  if (alone.length > 0) lines.push(...storeAloneTable(alone, bare), ...partsBounds(rows, alone, bare), '');
  const budgets = cpuBudgets(rows, bare);
  if (budgets.length > 0) lines.push(...budgets, '');

  lines.push(`Where the time went during the measured window${settings.rounds > 1 ? ' (mean of rounds)' : ''} (CPU: 1.00 = one core busy all the time):`, '');
  lines.push(
    '| target | server CPU | server event loop busy | server waiting for a core | commits | events / commit | ms / commit | time in commits | PostgreSQL CPU | CPU µs per event (server + PostgreSQL) | load generator CPU | whole machine busy |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const c = row.cpu;
    const f = (n: number | null | undefined, digits = 2): string => (n === null || n === undefined ? '—' : n.toFixed(digits));
    const ours = row.target !== 'bare';
    lines.push(
      `| ${LABELS[row.target]} | ${f(c?.server)} | ${fmtPct(c?.serverLoop ?? null)} | ${fmtPct(c?.serverStarved ?? null)} | ${ours && c ? fmtInt(c.commits) : '—'} | ` +
        `${ours ? f(c?.itemsPerCommit, 0) : '—'} | ${ours ? f(c?.msPerCommit, 1) : '—'} | ${ours ? fmtPct(c?.commitShare ?? null) : '—'} | ` +
        `${f(c?.db)} | ${c && row.eventsPerSecond > 0 ? f(((c.server + (c.db ?? 0)) * 1e6) / row.eventsPerSecond, 1) : '—'} | ` +
        `${f(c?.load)} | ${fmtPct(c?.machine ?? null)} |`,
    );
  }
  if (settings.rounds > 1) {
    lines.push('', 'Events/s per round:', '');
    for (const row of rows) {
      const rates = row.runs.map((r) => fmtInt((r.load.windowOk / r.load.windowSeconds) * settings.batchSize));
      lines.push(`- ${LABELS[row.target]}: ${rates.join(', ')}`);
    }
  }
  lines.push(
    '',
    'Notes: "% of bare limit" is events/s against the bare node:http row of the same run. The no-op row is our ' +
      'whole server (Koa, auth, body reading, validation, group commit) with a store whose writes go nowhere: the gap ' +
      'between it and a database row is the database write path. SQLite runs in WAL mode with synchronous=NORMAL ' +
      'on a temp file (disk), its group commits on a writer thread and its checkpoints on a third thread ' +
      '("server CPU" counts every thread of the process, "event loop busy" only the request thread); ' +
      'PostgreSQL 15 is the test server (test-support/postgres-server.ts: fsync=off, ' +
      'synchronous_commit=off) on the same machine, so its processes share the two cores with the server and the ' +
      'load generator. "stored / acknowledged" counts the events in the database after the server closed against ' +
      'the events its 2xx answers acknowledged over the whole run (warm-up included); ids are fresh UUIDv7, so ' +
      'nothing is deduplicated. "Event loop busy" counts synchronous work, including SQLite\'s blocking I/O; ' +
      '"waiting for a core" is time the server was ready to run while other processes (PostgreSQL, the load, ' +
      'anything else on the machine) held both cores. "CPU µs per event" is the CPU the server (and PostgreSQL) ' +
      'spent per event acknowledged, steadier than events/s when other processes take cores. "ms / commit" runs ' +
      'from handing a group to the store until its answer is back on the request thread, and "time in commits" ' +
      'can pass 100% because two groups are in flight at once. Numbers on a shared 2-core machine are noisy; compare rows ' +
      'of one run, not runs.',
  );
  return lines.join('\n');
}

/**
 * What an aim asks of the CPU: at the aimed rate, the machine's cores divided by the events per
 * second, less what the load generator spends per event, is all the server (and PostgreSQL) may
 * spend per event. Set beside what they spent, it tells whether the aim is reachable on this machine
 * with any amount of overlap, or only by doing less work per event.
 */
function cpuBudgets(rows: readonly Row[], bare: Row | undefined): string[] {
  if (!bare) return [];
  const cores = cpus().length;
  const out: string[] = [];
  for (const row of rows) {
    const aim = AIMS[row.target];
    const perEvent = cpuPerEvent(row);
    if (aim === undefined || !perEvent) continue;
    const rate = aim * bare.eventsPerSecond;
    const { server: spent, load: loadPerEvent } = perEvent;
    const budget = (cores * 1e6) / rate - loadPerEvent;
    const bareServer = cpuPerEvent(bare)?.server;
    out.push(
      `CPU budget of the aim, ${LABELS[row.target]}: ${fmtInt(rate)} events/s on ${cores} cores leaves at most ` +
        `${budget.toFixed(1)} µs of CPU per event for the server${row.cpu?.db == null ? '' : ' and PostgreSQL together'} ` +
        `(after the load generator's ${loadPerEvent.toFixed(1)} µs, and only if every core were busy all the time); ` +
        `they spent ${spent.toFixed(1)} µs (the bare server ${bareServer?.toFixed(1) ?? '—'} µs, with no store).`,
    );
  }
  return out;
}

/**
 * The stores' own ceilings beside the limit. The server does everything the store-alone writer
 * does (and HTTP, Koa, auth and validation besides) on the same cores, so its events/s stay below.
 */
function storeAloneTable(alone: readonly StoreAloneRow[], bare: Row | undefined): string[] {
  const lines = [
    `What each store takes alone, with no HTTP (bench/store-alone.ts: groups of ${alone[0]?.result.groupSize ?? 250} of the same events written back to ` +
      'back through the store\'s write path, 2 in flight, from the benchmark\'s process while nothing else runs; the ceiling ' +
      'of any server on that store on this machine):',
    '',
    '| store alone | events/s | % of bare limit | commits | CPU of the writing process | PostgreSQL CPU | CPU µs per event |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { target, result, db } of alone) {
    const eps = result.eventsPerSecond;
    lines.push(
      `| ${target === 'sqlite' ? 'SQLite (writer thread + checkpointer)' : 'PostgreSQL (pool)'} | ${fmtInt(eps)} | ` +
        `${bare ? fmtPct(eps / bare.eventsPerSecond) : '—'} | ${fmtInt(result.commits)} | ${result.processCpu.toFixed(2)} | ` +
        `${db === null ? '—' : db.toFixed(2)} | ${eps > 0 ? (((result.processCpu + (db ?? 0)) * 1e6) / eps).toFixed(1) : '—'} |`,
    );
  }
  return lines;
}

/** CPU µs per event a row's server (and PostgreSQL) spent, and its load generator; null without CPU figures. */
function cpuPerEvent(row: Row | undefined): { server: number; load: number } | null {
  const c = row?.cpu;
  if (!row || !c || row.eventsPerSecond <= 0) return null;
  return { server: ((c.server + (c.db ?? 0)) * 1e6) / row.eventsPerSecond, load: (c.load * 1e6) / row.eventsPerSecond };
}

/**
 * The most a server on each store could ingest on this machine, from the CPU its parts cost per
 * event in the same run: everything but the write (the no-op row), the write (the store alone) and
 * the load generator, added up and divided into the cores. It assumes perfect overlap and no
 * contention, so the real server stays below it; an aim above it cannot be met here by overlapping
 * work better, only by doing less work per event.
 */
function partsBounds(rows: readonly Row[], alone: readonly StoreAloneRow[], bare: Row | undefined): string[] {
  const noop = cpuPerEvent(rows.find((r) => r.target === 'noop'));
  if (!noop || !bare) return [];
  const cores = cpus().length;
  const out: string[] = [];
  for (const { target, result, db } of alone) {
    const row = rows.find((r) => r.target === target);
    const served = cpuPerEvent(row);
    if (!row || !served || result.eventsPerSecond <= 0) continue;
    const store = ((result.processCpu + (db ?? 0)) * 1e6) / result.eventsPerSecond;
    const total = noop.server + store + served.load;
    const bound = (cores * 1e6) / total;
    out.push(
      `Bound from the parts, ${LABELS[target]}: the no-op server's ${noop.server.toFixed(1)} µs + the store alone's ${store.toFixed(1)} µs + ` +
        `the load generator's ${served.load.toFixed(1)} µs of CPU per event = ${total.toFixed(1)} µs; ${cores} cores allow at most ` +
        `${fmtInt(bound)} events/s, ${fmtPct(bound / bare.eventsPerSecond)} of the limit (the server reached ` +
        `${fmtPct(row.eventsPerSecond / bare.eventsPerSecond)}${AIMS[target] === undefined ? '' : `; the aim is ${(AIMS[target] as number) * 100}%`}).`,
    );
  }
  return out.length > 0 ? ['', ...out] : [];
}

function writeResults(section: string): void {
  let text: string;
  try {
    text = readFileSync(RESULTS_PATH, 'utf8');
  } catch {
    text = '# Benchmark results\n\nWritten by `npm run bench`.\n';
  }
  const block = `${SECTION}\n\n${section}\n`;
  const start = text.indexOf(`${SECTION}\n`);
  if (start >= 0) {
    const rest = text.slice(start + SECTION.length);
    const nextHeading = rest.search(/\n## /);
    const end = nextHeading >= 0 ? start + SECTION.length + nextHeading + 1 : text.length;
    text = `${text.slice(0, start)}${block}${end < text.length ? `\n${text.slice(end)}` : ''}`;
  } else {
    text = `${text.trimEnd()}\n\n${block}`;
  }
  mkdirSync(dirname(RESULTS_PATH), { recursive: true });
  writeFileSync(RESULTS_PATH, text);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
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
      process.stderr.write(`server bench: ${LABELS[target]} (round ${round + 1}/${settings.rounds})… `);
      const result = await runTarget(target, settings, bundle, cpuProfDir);
      const eps = (result.load.windowOk / result.load.windowSeconds) * settings.batchSize;
      process.stderr.write(`${fmtInt(eps)} events/s\n`);
      runs.set(target, [...(runs.get(target) ?? []), result]);
    }
  }
  const rows = settings.targets.map((t) => summarise(t, runs.get(t) ?? [], settings.batchSize));
  const alone: StoreAloneRow[] = [];
  if (settings.storeAlone) {
    for (const target of settings.targets) {
      if (target !== 'sqlite' && target !== 'postgres') continue;
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
    writeResults(table);
    console.log(`written to ${RESULTS_PATH}`);
  }
  if (cpuProfDir) console.log(`CPU profiles of the servers: ${cpuProfDir}`);
}

async function shutdown(): Promise<void> {
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
