// The server benchmark's report (bench/server-bench.ts measures, this turns its rounds into the
// tables of bench/RESULTS.md): pooled rates and latencies per target, the aims against the bare
// limit, the stores' own ceilings, and what the CPU figures say about reaching the aims here.
import { cpus } from 'node:os';
import { type ClientKind, type LoadResult, quantile } from './load.js';
import type { StoreAloneResult } from './store-alone.js';

export type TargetName = 'bare' | 'noop' | 'sqlite' | 'sqlite-relaxed' | 'sqlite-late' | 'postgres' | 'postgres-late' | 'postgres2' | 'clickhouse';
export const ALL_TARGETS: readonly TargetName[] = ['bare', 'noop', 'sqlite', 'sqlite-relaxed', 'sqlite-late', 'postgres', 'postgres-late', 'postgres2', 'clickhouse'];
/**
 * Targets measured as a store alone only, never behind a server: ClickHouse runs here on chDB,
 * inside the measuring process (bench/chdb-location.ts), not as a server a target could reach.
 */
export const STORE_ONLY_TARGETS: readonly TargetName[] = ['clickhouse'];
export const LABELS: Record<TargetName, string> = {
  bare: 'bare node:http (parse + answer)',
  noop: 'our server, no-op store (diagnostic)',
  sqlite: 'our server, SQLite (durability full)',
  'sqlite-relaxed': 'our server, SQLite (durability relaxed)',
  'sqlite-late': 'our server, SQLite, events of a day before',
  postgres: 'our server, PostgreSQL',
  'postgres-late': 'our server, PostgreSQL, events of a day before',
  postgres2: 'our server, PostgreSQL, two processes',
  clickhouse: 'ClickHouse (chDB)',
};
/** Aims from the issue: share of the bare limit's events/s. Reported, not enforced. */
const AIMS: Partial<Record<TargetName, number>> = { sqlite: 0.5, postgres: 0.35 };

/** How old the events of a target's load are, ms: the `-late` targets send events of a day before (a backfill, an offline queue). */
export function eventAgeOf(target: TargetName): number {
  return target === 'sqlite-late' || target === 'postgres-late' ? 86_400_000 : 0;
}

/** The targets with a store of their own, which can also be measured alone. */
export type StoreTarget = Extract<TargetName, 'sqlite' | 'sqlite-relaxed' | 'postgres' | 'clickhouse'>;

/** The settings of a run that its report describes. */
export interface RunShape {
  durationSeconds: number;
  warmupSeconds: number;
  concurrency: number;
  batchSize: number;
  rounds: number;
  client: ClientKind;
}

/** What the processes spent over one measured window. */
export interface CpuShares {
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

/** One round of one target. */
export interface RunResult {
  target: TargetName;
  load: LoadResult;
  cpu: CpuShares | null;
  /** Events found in the database after the server closed; null for the bare server. */
  stored: number | null;
  /** Resident memory of the server process(es) at the window's start and end, bytes; null when not read. */
  rss: { start: number; end: number } | null;
}

/** One store measured alone. */
export interface StoreAloneRow {
  target: StoreTarget;
  result: StoreAloneResult;
  /** PostgreSQL's CPU over the window, cores; null for SQLite. */
  db: number | null;
}

/** A target's rounds pooled: one line of the table. */
export interface Row {
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
export function summarise(target: TargetName, runs: RunResult[], batchSize: number): Row {
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

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
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

const MB = 1024 * 1024;

/** The server's resident memory over the window, the highest of the rounds at each edge. */
function rssText(runs: RunResult[]): string {
  const known = runs.map((r) => r.rss).filter((r): r is { start: number; end: number } => r !== null);
  if (known.length === 0) return '—';
  const start = Math.max(...known.map((r) => r.start));
  const end = Math.max(...known.map((r) => r.end));
  return `${Math.round(start / MB)} → ${Math.round(end / MB)}`;
}

export function report(rows: Row[], alone: StoreAloneRow[], settings: RunShape, bodyBytes: number, started: Date, load0: number[]): string {
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
  lines.push('| target | events/s | requests/s | p50 ms | p99 ms | % of bare limit | non-2xx | stored / acknowledged | RSS MB, window start → end |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---|---:|');
  for (const row of rows) {
    const l = row.latenciesMs;
    const share = bare && row !== bare ? row.eventsPerSecond / bare.eventsPerSecond : row === bare ? 1 : null;
    lines.push(
      `| ${LABELS[row.target]} | ${fmtInt(row.eventsPerSecond)} | ${fmtInt(row.requestsPerSecond)} | ${fmtMs(quantile(l, 0.5))} | ` +
        `${fmtMs(quantile(l, 0.99))} | ${fmtPct(share)} | ${failuresText(row.runs)} | ${storedText(row.runs)} | ${rssText(row.runs)} |`,
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
      'between it and a database row is the database write path. SQLite runs in WAL mode on a temp file (disk) with ' +
      'synchronous=FULL (durability full, the default: the WAL is fsynced at every group commit) or, in the relaxed ' +
      'rows, synchronous=NORMAL (fsyncs at checkpoints only), its group commits on a writer thread and its checkpoints on a third thread ' +
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
      'can pass 100% because two groups are in flight at once. "RSS" is the resident memory of the server process ' +
      '(both processes together for the two-process row) when the window opened and closed, the highest of the rounds. ' +
      'The two-process row runs two server processes on one PostgreSQL database, the load shared evenly between them ' +
      '(each request to one process, as a load balancer would); its CPU columns add up both processes. ' +
      'Numbers on a shared 2-core machine are noisy; compare rows ' +
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

export const ALONE_LABELS: Record<StoreTarget, string> = {
  sqlite: 'SQLite, durability full (writer thread + checkpointer)',
  'sqlite-relaxed': 'SQLite, durability relaxed (writer thread + checkpointer)',
  postgres: 'PostgreSQL (pool)',
  clickhouse: 'ClickHouse on chDB (insert-time dedupe check + synchronous INSERT, engine in the process)',
};

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
      `| ${ALONE_LABELS[target]} | ${fmtInt(eps)} | ` +
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
