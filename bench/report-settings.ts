// What PostgreSQL settings of the report statements' own transaction do to the report panels
// (docs/decisions.md, "Daily rollups"): each 30-day panel of bench/panel-bench.ts, on a database
// `bench/generate-project.ts` filled and whose rollups are built (run the panel bench on it once),
// alternately as a plain statement and inside `BEGIN; SET LOCAL …` with each set of settings (the
// store's own, server/store/postgres/postgres-read-run.ts, among them), `rounds` times; prints per panel
// the median wall time and the CPU time of the backend and of a parallel plan's workers.
//
//   node scripts/run-ts.mjs bench/report-settings.ts postgres://… [rounds]
//
// `SET LOCAL` lasts until the transaction's end, so it holds behind a pooler in transaction mode
// too, unlike a connection option. CPU is read from /proc/<backend pid>/stat and the postmaster's
// children's times (the server must run on this machine), in ticks of 10 ms; wall time on a shared
// machine counts waits for a core.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import pg from 'pg';
import { READ_SETTINGS } from '../server/store/postgres/postgres-read-run.js';
import { createReportStore } from '../server/store/reports/report-queries.js';
import { POSTGRES_DIALECT } from '../server/store/reports/dialect.js';
import type { ReportQuery } from '../server/store/report-store.js';
import { PANELS, existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;

/** The variants measured: a name and the settings (none: a plain statement, no transaction). */
const VARIANTS: Array<[string, string[]]> = [
  ['plain', []],
  ["the store's (jit off, no parallel plans)", [...READ_SETTINGS]],
  ["the store's, work_mem 32MB", [...READ_SETTINGS, "SET LOCAL work_mem = '32MB'"]],
  ['jit off, parallel plans', ['SET LOCAL jit = off']],
];

// Fields after the command name: [1] the parent pid, [11] utime, [12] stime, [13] cutime, [14] cstime.
const stat = (pid: number): number[] => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ').map(Number);
/** The backend's CPU ticks and those of the postmaster's exited children: a parallel plan's workers. */
const ticks = (pid: number): number => {
  const own = stat(pid);
  const postmaster = stat(own[1] ?? 0);
  return (own[11] ?? 0) + (own[12] ?? 0) + (postmaster[13] ?? 0) + (postmaster[14] ?? 0);
};

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const url = process.argv[2];
if (url === undefined || !url.startsWith('postgres')) throw new Error('usage: report-settings.ts postgres://… [rounds]');
const rounds = Number(process.argv[3] ?? 3);
const project = await existingProject(url);
const q: ReportQuery = { projectId: project.projectId, from: project.end - 30 * DAY_MS, to: project.end, filters: {}, includeBots: false, visitorKey: 'anonymous' };
const client = new pg.Client({ connectionString: url });
await client.connect();
const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
// With `refreshNext` the reports read the rollups, as the store's do (without it, the events alone).
const stores = VARIANTS.map(([, settings]) => ({
  reports: createReportStore(POSTGRES_DIALECT, async (sql, values) => {
    if (settings.length === 0) return (await client.query(sql, values)).rows;
    await client.query(['BEGIN', ...settings].join('; '));
    try {
      return (await client.query(sql, values)).rows;
    } finally {
      await client.query('COMMIT');
    }
  }, { refreshNext: async () => null }),
}));
// wall and CPU ms per panel and variant
const results = new Map<string, Array<{ wall: number[]; cpu: number[] }>>();
try {
  for (const [, run] of PANELS) await run(stores[0] as (typeof stores)[0], q);
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of PANELS) {
      const perVariant = results.get(name) ?? VARIANTS.map(() => ({ wall: [], cpu: [] }));
      results.set(name, perVariant);
      // Alternated, in a rotating order, so drifts of the machine's load spread over all variants.
      for (let i = 0; i < VARIANTS.length; i++) {
        const v = (i + round) % VARIANTS.length;
        const c0 = ticks(pid);
        const t0 = performance.now();
        await run(stores[v] as (typeof stores)[0], q);
        perVariant[v]?.wall.push(performance.now() - t0);
        perVariant[v]?.cpu.push((ticks(pid) - c0) * 10);
      }
    }
  }
} finally {
  await client.end();
}
console.log(`30-day panels on ${project.events.toLocaleString('en')} events, median of ${rounds} rounds, wall / CPU ms (the backend and its parallel workers); load average ${loadavg()[0]?.toFixed(1)} at the end`);
console.log(`| panel | ${VARIANTS.map(([name]) => name).join(' | ')} |`);
console.log(`|---|${VARIANTS.map(() => '---:').join('|')}|`);
for (const [name, perVariant] of results) {
  console.log(`| ${name} | ${perVariant.map((r) => `${median(r.wall).toFixed(0)} / ${median(r.cpu).toFixed(0)}`).join(' | ')} |`);
}
