// How long the overview's eight top lists with one filter take, asked at once as the dashboard
// asks them when a filter is clicked, on a database bench/generate-project.ts filled whose filters
// are kept (by the panel bench's "kept ahead" rows, or a server's background), through the store
// with no HTTP:
//
//   node scripts/run-ts.mjs bench/filtered-overview-time.ts --on=postgres://…/big [--calls=7]
//
// It prints each call's milliseconds over 90 and over 30 days ending at the project's end, and
// their median: the panel bench times one call per range, too few to tell two versions of the
// kept rows apart on a shared machine. Run it from two checkouts in turn, alternated, on one
// database. It keeps nothing ahead and reads only: a report may hand the store weeks to merge,
// which the first call then does.
import { openStore } from '../server/store/open-store.js';
import type { ReportQuery, TopDimension } from '../server/store/report-store.js';
import { existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;
/** The overview's top lists (bench/panel-bench.ts). */
const DIMENSIONS: readonly TopDimension[] = ['page', 'referrer', 'channel', 'browser', 'os', 'device', 'country', 'custom_event'];

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const location = arg('on');
if (location === undefined) throw new Error('usage: bench/filtered-overview-time.ts --on=PATH_OR_URL [--calls=N]');
const calls = Number(arg('calls') ?? 7);

const project = await existingProject(location);
const store = openStore(location, { keepFiltersAhead: false });
await store.init();
try {
  for (const days of [90, 30]) {
    const q: ReportQuery = { projectId: project.projectId, from: project.end - days * DAY_MS, to: project.end, filters: { device: 'mobile' }, includeBots: false, visitorKey: 'anonymous' };
    const times: number[] = [];
    for (let call = 0; call < calls; call++) {
      const started = performance.now();
      await Promise.all(DIMENSIONS.map((dimension) => store.reports.top(q, dimension, 8)));
      times.push(performance.now() - started);
    }
    const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
    console.log(`${days} days: ${times.map((ms) => ms.toFixed(0)).join(', ')} ms; median ${median.toFixed(0)} ms`);
  }
} finally {
  await store.close();
}
