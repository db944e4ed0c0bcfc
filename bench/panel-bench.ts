// Response time of every report panel over 7, 30 and 90 days on SQLite and PostgreSQL, on a
// generated project of N events over 90 days (bench/generate-project.ts). Run by
// `npm run bench:server -- --panels[=N]` (default 10,000,000 events): it then measures only this,
// not ingest, and writes "## Report panels" of bench/RESULTS.md. Each panel is what its endpoint
// asks of the store (server/routes/reports.ts), timed in this process without HTTP, once after
// one warm-up call of the whole set; the aim (issue 18) is 1 s per panel over 30 days.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStore } from '../server/store/event-store.js';
import { openStore } from '../server/store/open-store.js';
import type { ReportQuery } from '../server/store/report-store.js';
import { type PostgresServer, startPostgres } from '../test-support/postgres-server.js';
import { generateIntoStore } from './generate-project.js';

const DAY_MS = 86_400_000;
const RANGES = [7, 30, 90] as const;

type Panel = [name: string, run: (store: EventStore, q: ReportQuery) => Promise<unknown>];

/** The dashboard's panels, each as its endpoint asks the store. */
const PANELS: Panel[] = [
  ['timeseries (day) + totals', (s, q) => Promise.all([s.reports.totals(q), s.reports.series(q, DAY_MS)])],
  ['top pages', (s, q) => s.reports.top(q, 'page', 10)],
  ['top referrers', (s, q) => s.reports.top(q, 'referrer', 10)],
  ['top channels', (s, q) => s.reports.top(q, 'channel', 10)],
  ['top UTM campaigns', (s, q) => s.reports.top(q, 'utm_campaign', 10)],
  ['top browsers', (s, q) => s.reports.top(q, 'browser', 10)],
  ['top devices', (s, q) => s.reports.top(q, 'device', 10)],
  ['top custom events', (s, q) => s.reports.top(q, 'custom_event', 10)],
  ['sessions', (s, q) => s.reports.sessions(q)],
  ['web vitals', (s, q) => s.reports.vitals(q, 10)],
  ['errors', (s, q) => s.reports.errors(q, 10)],
  [
    'funnel (4 steps)',
    (s, q) =>
      s.reports.funnel(q, [
        { kind: 'page', value: '/' },
        { kind: 'page', value: '/signup' },
        { kind: 'event', value: 'signup_started' },
        { kind: 'event', value: 'signup_completed' },
      ]),
  ],
  ['experiment', (s, q) => s.reports.experiment(q, 'checkout-button', 'purchase')],
  ['live (5 min)', (s, q) => s.reports.totals({ ...q, from: q.to - 300_000 })],
];

/** Milliseconds per panel and range of one store. */
type Timings = Map<string, number[]>;

async function measureStore(location: string, events: number, log: (line: string) => void): Promise<{ timings: Timings; events: number; loadSeconds: number }> {
  const started = performance.now();
  const project = await generateIntoStore({ location, events, onProgress: (n) => n % 1_000_000 < 5_000 && log(`  ${n.toLocaleString('en')} events loaded`) });
  const loadSeconds = (performance.now() - started) / 1000;
  const store = openStore(location);
  await store.init();
  const timings: Timings = new Map();
  try {
    const query = (days: number): ReportQuery => ({
      projectId: project.projectId,
      from: project.end - days * DAY_MS,
      to: project.end,
      filters: {},
      includeBots: false,
      visitorKey: 'anonymous',
    });
    for (const [, run] of PANELS) await run(store, query(7));
    for (const days of RANGES) {
      for (const [name, run] of PANELS) {
        const t0 = performance.now();
        await run(store, query(days));
        const ms = performance.now() - t0;
        timings.set(name, [...(timings.get(name) ?? []), ms]);
        log(`  ${name}, ${days} days: ${ms.toFixed(0)} ms`);
      }
    }
  } finally {
    await store.close();
  }
  return { timings, events: project.events, loadSeconds };
}

const fmt = (ms: number | undefined): string => (ms === undefined ? '—' : ms < 10 ? ms.toFixed(1) : ms.toFixed(0));

/** Runs the panel benchmark on the given stores; returns the RESULTS.md section body. */
export async function runPanelBench(options: { events: number; stores: Array<'sqlite' | 'postgres'>; log: (line: string) => void }): Promise<string> {
  const results = new Map<string, { timings: Timings; events: number; loadSeconds: number }>();
  const dir = mkdtempSync(join(tmpdir(), 'panel-bench-'));
  let pgServer: PostgresServer | null = null;
  try {
    if (options.stores.includes('sqlite')) {
      options.log('panel bench: SQLite');
      results.set('SQLite', await measureStore(join(dir, 'panels.db'), options.events, options.log));
    }
    if (options.stores.includes('postgres')) {
      options.log('panel bench: PostgreSQL');
      pgServer = await startPostgres();
      results.set('PostgreSQL', await measureStore(pgServer.url, options.events, options.log));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await pgServer?.stop().catch(() => {});
  }
  const names = [...results.keys()];
  const header = `| panel | ${names.flatMap((n) => RANGES.map((d) => `${n} ${d} d`)).join(' | ')} |`;
  const rule = `|---|${names.flatMap(() => RANGES.map(() => '---:')).join('|')}|`;
  const rows = PANELS.map(([panel]) => `| ${panel} | ${names.flatMap((n) => RANGES.map((_, i) => fmt(results.get(n)?.timings.get(panel)?.[i]))).join(' | ')} |`);
  const loads = names.map((n) => `${n}: ${results.get(n)?.events.toLocaleString('en')} events loaded in ${results.get(n)?.loadSeconds.toFixed(0)} s`).join('; ');
  return [
    `Milliseconds per panel, one call each after a warm-up, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, on this 2-core machine shared with other work (noisy: compare columns of one run). ${loads} (bench/generate-project.ts: a bulk load straight into the tables). Each panel is what its endpoint asks of the store, without HTTP; every report reads the project's range through the time index (no rollups yet). Aim: each panel ≤ 1,000 ms over 30 days.`,
    '',
    header,
    rule,
    ...rows,
  ].join('\n');
}
