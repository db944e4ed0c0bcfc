// The two ways of computing a funnel (server/store/reports/report-funnel.ts; docs/decisions.md, "Daily
// rollups"), alternated on a PostgreSQL database that `bench/generate-project.ts` filled and whose
// rollups are built (run the panel bench on it once): the panel bench's 30-day 4-step funnel as
// `sequences` (an ordered aggregate per session) and as `first-matches` (each step's first match per
// session, step by step), each inside the store's report settings, `rounds` times; prints the wall
// and CPU time of each run and their medians, and checks that both answer the same.
//
//   node scripts/run-ts.mjs bench/funnel-walks.ts postgres://… [rounds] [days]
//
// CPU is the backend's, from /proc/<backend pid>/stat (the server must run on this machine), in
// ticks of 10 ms; wall time on a shared machine counts waits for a core.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { READ_SETTINGS } from '../server/store/postgres/postgres-read-run.js';
import type { FunnelWalk } from '../server/store/reports/dialect.js';
import { createReportStore } from '../server/store/reports/report-queries.js';
import { POSTGRES_DIALECT } from '../server/store/reports/dialect.js';
import type { FunnelStepSpec, ReportQuery } from '../server/store/report-store.js';
import { existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;
const WALKS: FunnelWalk[] = ['sequences', 'first-matches'];
/** The panel bench's funnel. */
const STEPS: FunnelStepSpec[] = [
  { kind: 'page', value: '/' },
  { kind: 'page', value: '/signup' },
  { kind: 'event', value: 'signup_started' },
  { kind: 'event', value: 'signup_completed' },
];

// Fields after the command name: [11] utime, [12] stime.
const ticks = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ').map(Number);
  return (fields[11] ?? 0) + (fields[12] ?? 0);
};
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const url = process.argv[2];
if (url === undefined || !url.startsWith('postgres')) throw new Error('usage: funnel-walks.ts postgres://… [rounds] [days]');
const rounds = Number(process.argv[3] ?? 5);
const days = Number(process.argv[4] ?? 30);
const project = await existingProject(url);
const q: ReportQuery = { projectId: project.projectId, from: project.end - days * DAY_MS, to: project.end, filters: {}, includeBots: false, visitorKey: 'anonymous' };
const client = new pg.Client({ connectionString: url });
await client.connect();
const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid as number;
// With `refreshNext` the reports read the rollups, as the store's do.
const stores = WALKS.map((funnelWalk) =>
  createReportStore(
    { ...POSTGRES_DIALECT, funnelWalk },
    async (sql, values) => {
      await client.query(['BEGIN READ ONLY', ...READ_SETTINGS].join('; '));
      try {
        return (await client.query(sql, values)).rows;
      } finally {
        await client.query('COMMIT');
      }
    },
    { refreshNext: async () => null },
  ),
);
const results = WALKS.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
try {
  const answers = await Promise.all(stores.map((store) => store.funnel(q, STEPS)));
  if (!isDeepStrictEqual(answers[0], answers[1])) throw new Error(`the walks differ: ${JSON.stringify(answers)}`);
  console.log(`sessions reaching each step: ${answers[0]?.join(', ')}`);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < WALKS.length; i++) {
      const w = (i + round) % WALKS.length;
      const c0 = ticks(pid);
      const t0 = performance.now();
      await stores[w]?.funnel(q, STEPS);
      results[w]?.wall.push(performance.now() - t0);
      results[w]?.cpu.push((ticks(pid) - c0) * 10);
    }
  }
} finally {
  await client.end();
}
console.log(`${days}-day 4-step funnel on ${project.events.toLocaleString('en')} events, ${rounds} alternated rounds, wall / CPU ms of the backend; load average ${loadavg().map((l) => l.toFixed(1)).join(', ')} at the end`);
WALKS.forEach((walk, w) => {
  const r = results[w] as { wall: number[]; cpu: number[] };
  console.log(`  ${walk}: median ${median(r.wall).toFixed(0)} / ${median(r.cpu).toFixed(0)} (${r.wall.map((ms, i) => `${ms.toFixed(0)} / ${r.cpu[i]}`).join(' · ')})`);
});
