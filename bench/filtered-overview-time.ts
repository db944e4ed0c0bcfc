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
//
//   node scripts/run-ts.mjs bench/filtered-overview-time.ts --on=postgres://…/big --pause=11000 [--calls=5]
//
// waits that long before each call, as a dashboard's user between two clicks, and times two
// PostgreSQL stores side by side, call by call in turn (which goes first alternates): one that
// keeps its idle connections (the default) and one that closes them after 10 s, as `pg`'s pool
// does by default (this store before `idleConnectionMs`). The first call of each is the
// process's first on that store.
import { isPostgresUrl, openStore } from '../server/store/open-store.js';
import { createPostgresStore } from '../server/store/postgres/postgres-store.js';
import type { EventStore } from '../server/store/event-store.js';
import type { ReportQuery, TopDimension } from '../server/store/report-store.js';
import { existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;
/** The overview's top lists (bench/panel-bench.ts). */
const DIMENSIONS: readonly TopDimension[] = ['page', 'referrer', 'channel', 'browser', 'os', 'device', 'country', 'custom_event'];

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const location = arg('on');
if (location === undefined) throw new Error('usage: bench/filtered-overview-time.ts --on=PATH_OR_URL [--calls=N] [--pause=MS]');
const pause = arg('pause') === undefined ? null : Number(arg('pause'));
if (pause !== null && !(Number.isFinite(pause) && pause >= 0)) throw new Error('--pause takes milliseconds');
const calls = Number(arg('calls') ?? (pause === null ? 7 : 5));
if (pause !== null && !isPostgresUrl(location)) throw new Error('--pause compares PostgreSQL connection pools: give a postgres:// URL');

const project = await existingProject(location);
const stores: Array<{ name: string; store: EventStore }> =
  pause === null
    ? [{ name: '', store: openStore(location, { keepFiltersAhead: false }) }]
    : [
        { name: 'idle connections kept', store: createPostgresStore({ url: location, keepFiltersAhead: false, backgroundRollups: false }) },
        {
          name: 'idle connections closed after 10 s',
          store: createPostgresStore({ url: location, keepFiltersAhead: false, backgroundRollups: false, idleConnectionMs: 10_000 }),
        },
      ];
for (const { store } of stores) await store.init();
const median = (times: readonly number[]) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] as number;
try {
  for (const days of [90, 30]) {
    const q: ReportQuery = { projectId: project.projectId, from: project.end - days * DAY_MS, to: project.end, filters: { device: 'mobile' }, includeBots: false, visitorKey: 'anonymous' };
    const runs = stores.map(({ name, store }) => ({ name, store, times: [] as number[] }));
    for (let call = 0; call < calls; call++) {
      // In turn, the order alternated from call to call.
      for (const { store, times } of call % 2 === 0 ? runs : [...runs].reverse()) {
        if (pause !== null) await new Promise((resolve) => setTimeout(resolve, pause));
        const started = performance.now();
        await Promise.all(DIMENSIONS.map((dimension) => store.reports.top(q, dimension, 8)));
        times.push(performance.now() - started);
      }
    }
    for (const { name, times } of runs) {
      console.log(`${days} days${name === '' ? '' : `, ${name}`}: ${times.map((ms) => ms.toFixed(0)).join(', ')} ms; median ${median(times).toFixed(0)} ms`);
    }
  }
} finally {
  for (const { store } of stores) await store.close();
}
