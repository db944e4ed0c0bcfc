// How long the reports that keep what they computed take once kept: the reports kept per day over
// sessions (the panels' funnel, and the sessions report with the device filter:
// server/store/reports/session-days.ts) and the series, which keep their points' estimates
// (server/store/aggregates/kept-estimates.ts), on a database bench/generate-project.ts filled,
// through the store with no HTTP:
//
//   node scripts/run-ts.mjs bench/kept-reports-time.ts --on=PATH_OR_URL [--calls=7] [--only=NAME;…]
//
// For each report and range (7, 30 and 90 days ending at the project's end) it prints the first
// call's milliseconds (which computes and keeps what is missing: after another version kept the
// rows, all of it) and the median of `calls` calls after one more and the keeps they handed on;
// and says so if a later answer differs from the first. Run it from two checkouts in turn,
// alternated, on one database. It writes what the reports keep, and builds marked days first.
import { openStore } from '../server/store/open-store.js';
import type { FunnelStepSpec, ReportQuery } from '../server/store/report-store.js';
import { PANELS, existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;
/** The funnel of the panels (bench/panel-bench.ts). */
const FUNNEL: FunnelStepSpec[] = [
  { kind: 'page', value: '/' },
  { kind: 'page', value: '/signup' },
  { kind: 'event', value: 'signup_started' },
  { kind: 'event', value: 'signup_completed' },
];

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const location = arg('on');
if (location === undefined) throw new Error('usage: bench/kept-reports-time.ts --on=PATH_OR_URL [--calls=N] [--only=NAME;…]');
const calls = Number(arg('calls') ?? 7);
const only = arg('only')?.split(';');

const project = await existingProject(location);
const store = openStore(location, { keepFiltersAhead: false });
await store.init();
try {
  while ((await store.reports.refreshRollups()) > 0);
  const reports: Array<[string, (q: ReportQuery) => Promise<unknown>]> = [
    ['funnel (4 steps)', (q) => store.reports.funnel(q, FUNNEL)],
    ['sessions, device filter', (q) => store.reports.sessions({ ...q, filters: { device: 'mobile' } })],
    // The series as the panels ask them.
    ...PANELS.filter(([name]) => name.startsWith('timeseries')).map(([name, ask]): [string, (q: ReportQuery) => Promise<unknown>] => [name, (q) => ask(store, q)]),
  ];
  for (const [name, ask] of reports.filter(([name]) => only === undefined || only.includes(name))) {
    const cells: string[] = [];
    for (const days of [7, 30, 90]) {
      const q: ReportQuery = { projectId: project.projectId, from: project.end - days * DAY_MS, to: project.end, filters: {}, includeBots: false, visitorKey: 'anonymous' };
      let started = performance.now();
      const first = JSON.stringify(await ask(q));
      const firstMs = performance.now() - started;
      // A second read keeps what the first could not: the spans over the days the first kept.
      await store.reports.keptSettled();
      await ask(q);
      await store.reports.keptSettled();
      const times: number[] = [];
      let same = true;
      for (let call = 0; call < calls; call++) {
        started = performance.now();
        same &&= JSON.stringify(await ask(q)) === first;
        times.push(performance.now() - started);
      }
      const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
      cells.push(`${days} d ${median.toFixed(1)} ms (first ${firstMs.toFixed(0)} ms${same ? '' : ', a later answer differs'})`);
    }
    console.log(`${name}: ${cells.join(' | ')}`);
  }
} finally {
  await store.close();
}
