// The report panels on ClickHouse (chDB, in this process: bench/chdb-location.ts), on the project
// that bench/generate-project.ts makes for SQLite and PostgreSQL (the same seed, events and end),
// for `npm run bench:server -- --panels=N --targets=…,clickhouse` (bench/server-bench.ts). Besides
// each panel as the store serves it, it measures what `FINAL` costs, since every read says `FINAL`
// to count a copy stored twice once (server/store/clickhouse/clickhouse-schema.ts): each panel over
// 30 and 90 days without it, the table's active parts after the load, then `OPTIMIZE … FINAL`
// (timed) and each panel with `FINAL` again on the merged parts.
import { loadavg } from 'node:os';
import { createClickHouseReports } from '../server/store/clickhouse/clickhouse-reports.js';
import type { ClickHouseTransport } from '../server/store/clickhouse/clickhouse-transport.js';
import type { ReportQuery, ReportStore } from '../server/store/report-store.js';
import { compareAnswers } from '../test-support/store/estimate-bound.js';
import { activeParts, chdbTables, chdbTransport, openBenchStore } from './chdb-location.js';
import { generateIntoStore } from './generate-project.js';
import { PANELS, type StoreResult, answerKey } from './panel-bench.js';
import type { StoreAloneRow } from './server-report.js';

const DAY_MS = 86_400_000;

/**
 * The timing columns of the ClickHouse measurement. Each panel is read with `FINAL` (as the store
 * serves it) and without it in turn, {@link ClickHouseOptions.repeats} times, so that a busy moment
 * of the machine falls on both; the median of each is kept. After `OPTIMIZE … FINAL`, with `FINAL`
 * again.
 */
export const CLICKHOUSE_COLUMNS = [
  '30 d',
  '30 d CPU',
  '90 d',
  'no FINAL 30 d',
  'no FINAL 90 d',
  'OPTIMIZE 30 d',
  'OPTIMIZE 90 d',
] as const;
type Column = (typeof CLICKHOUSE_COLUMNS)[number];

/** Active parts of `events` and its rows at a moment of the run. */
interface PartsCount {
  parts: number;
  rows: number;
  bytes: number;
}

/** Options of {@link measureClickHouse}. */
export interface ClickHouseOptions {
  /** Calls per panel and column, whose median is kept. @default 3 */
  repeats?: number;
}

/** What the ClickHouse measurement found. */
export interface ClickHouseResult {
  /** Calls per panel and column whose median is each figure. */
  repeats: number;
  events: number;
  /** Seconds of the bulk load; NaN for a directory filled before. */
  loadSeconds: number;
  /** Milliseconds per panel and column ({@link CLICKHOUSE_COLUMNS}). */
  timings: Map<string, Partial<Record<Column, number>>>;
  partsAfterLoad: PartsCount;
  partsBeforeOptimize: PartsCount;
  partsAfterOptimize: PartsCount;
  optimizeSeconds: number;
  /** Each panel's answer over 30 and 90 days, by `answerKey`. */
  answers: Map<string, unknown>;
}

/** The project a chDB directory holds already: the one with the most events, and the end of its last day. */
async function existingProject(transport: ClickHouseTransport): Promise<{ projectId: string; events: number; end: number } | null> {
  const [row] = await transport.query(
    `SELECT project_id, count() AS n, max(timestamp) AS last FROM ${chdbTables().events} GROUP BY project_id ORDER BY n DESC LIMIT 1`,
  );
  if (row === undefined) return null;
  return { projectId: String(row.project_id), events: Number(row.n), end: (Math.floor(Number(row.last) / DAY_MS) + 1) * DAY_MS };
}

/** The reports with every `FINAL` of `events` left out: what the reads would cost without read-time dedupe. */
function withoutFinal(transport: ClickHouseTransport): ReportStore {
  const events = chdbTables().events;
  const plain: ClickHouseTransport = { ...transport, query: (sql, params, settings) => transport.query(sql.replaceAll(`${events} FINAL`, events), params, settings) };
  return createClickHouseReports(plain, chdbTables());
}

/**
 * Measures the panels on the chDB directory of `location` (`chdb:DIRECTORY`): generates `events`
 * events into it unless it holds a project already (then measures that one, as `--panels-on` does).
 */
export async function measureClickHouse(location: string, events: number, log: (line: string) => void, options: ClickHouseOptions = {}): Promise<ClickHouseResult> {
  const repeats = Math.max(1, Math.round(options.repeats ?? 3));
  const transport = chdbTransport(location);
  const started = performance.now();
  let project = await existingProject(transport).catch(() => null);
  let loadSeconds = Number.NaN;
  if (project === null) {
    const made = await generateIntoStore({ location, events, onProgress: (n) => n % 1_000_000 < 100_000 && log(`  ${n.toLocaleString('en')} events loaded`) });
    project = { projectId: made.projectId, events: made.events, end: made.end };
    loadSeconds = (performance.now() - started) / 1000;
    log(`  loaded in ${loadSeconds.toFixed(0)} s`);
  } else {
    log(`  ${project.events.toLocaleString('en')} events of ${project.projectId} there already`);
  }
  const partsAfterLoad = await activeParts(location, 'events');
  log(`  ${partsAfterLoad.parts} active parts after the load`);
  const store = openBenchStore(location);
  await store.init();
  const timings = new Map<string, Partial<Record<Column, number>>>();
  const answers = new Map<string, unknown>();
  const cpuMs = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const query = (days: number): ReportQuery => ({
    projectId: (project as { projectId: string }).projectId,
    from: (project as { end: number }).end - days * DAY_MS,
    to: (project as { end: number }).end,
    filters: {},
    includeBots: false,
    visitorKey: 'anonymous',
  });
  /**
   * Each panel over `days` on each of `variants` in turn, `repeats` times; the median of each into
   * its column. The first variant's answer is kept, and with `cpuColumn` the median CPU of its calls.
   */
  const compare = async (days: number, variants: ReadonlyArray<readonly [Column, ReportStore]>, cpuColumn?: Column): Promise<void> => {
    for (const [name, run] of PANELS) {
      const samples = variants.map(() => [] as number[]);
      const cpu: number[] = [];
      for (let i = 0; i < repeats; i++) {
        for (const [v, [, reports]] of variants.entries()) {
          const c0 = cpuMs();
          const t0 = performance.now();
          const answer = await run({ reports }, query(days));
          samples[v]?.push(performance.now() - t0);
          if (v === 0) {
            cpu.push(cpuMs() - c0);
            answers.set(answerKey(name, days), answer);
          }
        }
      }
      const row = timings.get(name) ?? {};
      variants.forEach(([column], v) => {
        row[column] = median(samples[v] ?? []);
      });
      if (cpuColumn !== undefined) row[cpuColumn] = median(cpu);
      timings.set(name, row);
      log(`  ${name}, ${days} d: ${variants.map(([column]) => `${column} ${row[column]?.toFixed(0)} ms`).join(', ')}`);
    }
  };
  try {
    // A warm-up of the whole set, as for the other stores.
    for (const [, run] of PANELS) await run(store, query(7));
    const plain = withoutFinal(transport);
    await compare(30, [['30 d', store.reports], ['no FINAL 30 d', plain]], '30 d CPU');
    await compare(90, [['90 d', store.reports], ['no FINAL 90 d', plain]]);
    const partsBeforeOptimize = await activeParts(location, 'events');
    const o0 = performance.now();
    await transport.command(`OPTIMIZE TABLE ${chdbTables().events} FINAL`);
    const optimizeSeconds = (performance.now() - o0) / 1000;
    const partsAfterOptimize = await activeParts(location, 'events');
    log(`  OPTIMIZE FINAL in ${optimizeSeconds.toFixed(1)} s: ${partsBeforeOptimize.parts} → ${partsAfterOptimize.parts} active parts`);
    await compare(30, [['OPTIMIZE 30 d', store.reports]]);
    await compare(90, [['OPTIMIZE 90 d', store.reports]]);
    return { repeats, events: project.events, loadSeconds, timings, partsAfterLoad, partsBeforeOptimize, partsAfterOptimize, optimizeSeconds, answers };
  } finally {
    await store.close();
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const fmt = (ms: number | undefined): string => (ms === undefined ? '—' : ms === Infinity ? 'over budget' : ms < 10 ? ms.toFixed(1) : ms.toFixed(0));
const calls = (repeats: number): string => (repeats === 1 ? 'one call' : `the median of ${repeats} calls`);
const fmtInt = (n: number): string => Math.round(n).toLocaleString('en');
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(0)} MB`;

/**
 * The subsection of "## ClickHouse (chDB) beside SQLite and PostgreSQL" for one run: the panels of
 * each store over 30 and 90 days, the cost of `FINAL`, and the stores' ingest alone.
 */
export function clickhouseSection(options: {
  sql: ReadonlyMap<string, StoreResult>;
  clickhouse: ClickHouseResult;
  alone: readonly StoreAloneRow[];
  aloneLabels: Readonly<Record<string, string>>;
  started: Date;
  /** Stores still to be measured in this run (an interim write, kept should the run not finish). */
  pending?: readonly string[];
}): string {
  const { sql, clickhouse: ch } = options;
  const names = [...sql.keys()];
  // Answers against the first SQL store's (SQLite when it ran): exact numbers equal, unique counts within the bounds.
  const reference = sql.get(names[0] ?? '');
  const differing: string[] = [];
  let worst = 0;
  if (reference !== undefined) {
    for (const [key, answer] of ch.answers) {
      const compared = compareAnswers(answer, reference.answers.get(key));
      if (!compared.exactEqual) differing.push(key);
      worst = Math.max(worst, compared.worstEstimateError);
    }
  }
  const sqlCell = (name: string, panel: string, index: number): string => fmt(sql.get(name)?.timings.get(panel)?.[index]);
  // StoreResult timings: [7 d, 30 d, 30 d CPU, 90 d, 30 d from the events alone].
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const header = line(['panel', ...names.map((n) => `${n} 30 d`), 'ClickHouse 30 d', 'ClickHouse 30 d CPU', ...names.map((n) => `${n} 90 d`), 'ClickHouse 90 d']);
  const rule = `|---|${[...names, 'c', 'c', ...names, 'c'].map(() => '---:').join('|')}|`;
  const rows = PANELS.map(([panel]) => {
    const t = ch.timings.get(panel) ?? {};
    return line([panel, ...names.map((n) => sqlCell(n, panel, 1)), fmt(t['30 d']), fmt(t['30 d CPU']), ...names.map((n) => sqlCell(n, panel, 3)), fmt(t['90 d'])]);
  });
  const finalRows = PANELS.map(([panel]) => {
    const t = ch.timings.get(panel) ?? {};
    return `| ${panel} | ${fmt(t['30 d'])} | ${fmt(t['no FINAL 30 d'])} | ${fmt(t['OPTIMIZE 30 d'])} | ${fmt(t['90 d'])} | ${fmt(t['no FINAL 90 d'])} | ${fmt(t['OPTIMIZE 90 d'])} |`;
  });
  const loads = names.map((n) => {
    const r = sql.get(n) as StoreResult;
    return `${n} ${r.events.toLocaleString('en')} events loaded in ${r.loadSeconds.toFixed(0)} s, aggregates built at the first open in ${r.aggregateSeconds.toFixed(0)} s, rollups of ${r.refreshedDays} days in ${r.refreshSeconds.toFixed(0)} s`;
  });
  const chLoad = Number.isNaN(ch.loadSeconds) ? 'a directory filled before' : `loaded in ${ch.loadSeconds.toFixed(0)} s`;
  const aloneRows = options.alone.map(({ target, result, db }) => {
    const eps = result.eventsPerSecond;
    const perEvent = eps > 0 ? (((result.processCpu + (db ?? 0)) * 1e6) / eps).toFixed(1) : '—';
    return `| ${options.aloneLabels[target] ?? target} | ${fmtInt(result.groupSize)} | ${fmtInt(eps)} | ${fmtInt(result.commits)} | ${result.processCpu.toFixed(2)} | ${db === null ? '—' : db.toFixed(2)} | ${perEvent} |`;
  });
  return [
    ...(options.pending === undefined || options.pending.length === 0 ? [] : [`(Interim: ${options.pending.join(' and ')} still being measured when this was written.)`, '']),
    `${options.started.toISOString().slice(0, 16).replace('T', ' ')} UTC, on this 2-core machine shared with other work at the time (noisy: compare columns of one run; load average ${loadavg()[0]?.toFixed(1)} at the end). One project of ${ch.events.toLocaleString('en')} events over 90 days, generated by bench/generate-project.ts with the same seed and end into each store: ${[...loads, `ClickHouse (chDB, in this process) ${ch.events.toLocaleString('en')} events ${chLoad}`].join('; ')}. Each panel is what its endpoint asks of the store, without HTTP; SQLite and PostgreSQL read their aggregates and rollups, ClickHouse reads the events (docs/decisions.md, "ClickHouse"). ${reference === undefined ? '' : differing.length === 0 ? `Every exact number of every 30- and 90-day answer on ClickHouse equalled ${names[0]}'s` : `Answers whose exact numbers differed from ${names[0]}'s: ${differing.join(', ')}`}${reference === undefined ? '' : `; the largest relative difference of a unique count was ${(worst * 100).toFixed(2)}%.`}`,
    '',
    `Milliseconds per panel (wall time; CPU of this process, where chDB runs). SQLite and PostgreSQL: one call after a warm-up; ClickHouse: ${calls(ch.repeats)}, each beside the same read without \`FINAL\` (below):`,
    '',
    header,
    rule,
    ...rows,
    '',
    `What \`FINAL\` costs on ClickHouse (milliseconds, ${calls(ch.repeats)}, with and without \`FINAL\` in turn): every read says \`FINAL\` so that a copy two processes stored at once counts once before its merge. ${ch.partsAfterLoad.parts} active parts of \`events\` after the load, ${ch.partsBeforeOptimize.parts} when the panels had run (background merges meanwhile), ${ch.partsAfterOptimize.parts} after \`OPTIMIZE TABLE events FINAL\` (${ch.optimizeSeconds.toFixed(0)} s; ${fmtInt(ch.partsAfterOptimize.rows)} rows, ${mb(ch.partsAfterOptimize.bytes)} on disk), after which each panel was read with \`FINAL\` again.`,
    '',
    '| panel | 30 d, FINAL | 30 d, no FINAL | 30 d, FINAL after OPTIMIZE | 90 d, FINAL | 90 d, no FINAL | 90 d, FINAL after OPTIMIZE |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...finalRows,
    '',
    `Ingest through each store alone, no HTTP (bench/store-alone.ts: groups of realistic events written back to back through the store's write path, 2 in flight, ${options.alone[0]?.result === undefined ? '' : 'a fresh database each, '}in the same run, with the panels' database idle beside it):`,
    '',
    '| store alone | events / group | events/s | commits | CPU of the writing process | PostgreSQL CPU | CPU µs per event |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...aloneRows,
  ].join('\n');
}
