// Client main-thread benchmark (README, "Benchmarks"): what tracking costs the page's main thread in
// real Chromium, for our client with its Web Worker, the same client forced in-process (a page whose
// CSP forbids workers), and posthog-js (automatic features off), side by side.
//
//   npm run bench:client                     # 1 round per target
//   npm run bench:client -- --rounds=3       # medians over 3 rounds (targets alternate order)
//   npm run bench:client -- --profile        # also CPU-profile the burst (automatic when an aim is missed)
//   npm run bench:client -- --targets=worker,posthog --no-write
//   npm run bench:client -- --scenarios-only  # only the delivery scenarios (unload, burst with defaults)
//   npm run bench:client -- --no-scenarios    # only the main-thread table
//   npm run bench:client -- --startup-only    # where start-up goes: each page's tasks and hottest functions
//   npm run bench:client -- --startup-table --rounds=9  # only the start-up rows, medians of 9 loads per page
//   npm run bench:client -- --recorder-only  # only the recorder with and without console and network capture
//   npm run bench:client -- --no-recorder    # without the recorder scenario
//   npm run bench:client -- --recorder-profile  # where the task issuing the recorder scenario's requests spends its time, and fetch()'s cost wrapped and not
//
// Per target, on a fresh page (cross-origin isolated, so performance.now() ticks in 5 µs steps):
// 1,000 warm-up calls; per-call cost = median over 20 tasks of 100 track() calls, timed around the
// loop, and to the end of the task's microtasks (where our facade posts the task's events to the
// worker); a 10,000-event burst in one task, then 10 s of settling: main-thread task time from CDP
// Performance.getMetrics (TaskDuration) over burst + 10 s, minus the same page's idle task time
// over 10 s; long tasks (Long Tasks API) from the burst to the end of the 10 s; events stored by our
// server (SQLite) within 10 s, and at all (≤ 60 s); main-thread JavaScript the page loaded,
// minified + gzipped. The table is printed and written to bench/RESULTS.md under
// "## Client main thread" (other sections are kept). Aims are reported, never enforced.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { projectRoot, writeClientBuild } from '../test-support/browser/client-build.js';
import { type StaticServer, startStaticServer } from '../test-support/browser/static-server.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../test-support/chromium.js';
import { type BenchServer, startBenchServer } from './client/analytics-server.js';
import { type CdpBrowser, type CdpPage, launchCdpBrowser } from './client/cdp.js';
import { runDeliveryScenarios, scenarioTable } from './client/delivery-scenarios.js';
import { answerBenchApi, fetchWrapperCost, profileRequestTask, runRecorderCapture } from './client/recorder-capture.js';
import { STARTUP_PAGES, measureStartup, runStartup, startupRows } from './client/startup.js';
import { FLOOR_WORKER, FLOOR_WORKER_SILENT, FLOOR_WORKER_STARTUP, floorPage } from './client/floor.js';
import { type BenchWindow, benchDocument, ourPage, posthogPage } from './client/pages.js';
import { type CaptureEndpoint, bundlePosthog, posthogOptions, posthogRecordingOptions, startCaptureEndpoint } from './client/posthog.js';
import { type HotSpot, hotSpots, sourceMapResolver, startProfile } from './client/profile.js';
import { writeResultsSection } from './results-file.js';

const ROOT = projectRoot();
const RESULTS_PATH = join(ROOT, 'bench', 'RESULTS.md');
const SECTION = '## Client main thread';
const SCENARIO_SECTION = '## Client delivery scenarios';
const RECORDER_SECTION = '## Client recorder capture';

const BURST = 10_000;
const WARMUP_CALLS = 1_000;
const SAMPLES = 20;
const SAMPLE_SIZE = 100;
const SETTLE_MS = 10_000;
const EVENTUALLY_MS = 60_000;
/** Fresh page loads per page kind for the start-up rows (medians). */
const STARTUP_ROUNDS = 5;

/** Aims from the issue: reported, not enforced. */
const AIMS = { perCallMicros: 1, burstMs: 30, longTasks: 0, delivered: BURST };

type TargetName = 'worker' | 'in-process' | 'floor' | 'floor-silent' | 'posthog';
const ALL_TARGETS: readonly TargetName[] = ['worker', 'in-process', 'floor', 'floor-silent', 'posthog'];
const LABELS: Record<TargetName, string> = {
  worker: 'ours, worker (default)',
  'in-process': 'ours, in-process (CSP forbids workers)',
  floor: 'floor: minimal batching worker client',
  'floor-silent': 'floor, its worker sending nothing',
  posthog: 'posthog-js (automatic features off)',
};
/** Requests the worker makes for the burst at batchSize 20: Chromium charges the page for each. */
const BURST_REQUESTS = BURST / 20;
/** Our client: the targets the aims apply to. */
const OURS: readonly TargetName[] = ['worker', 'in-process'];

interface Settings {
  rounds: number;
  targets: TargetName[];
  profile: boolean;
  write: boolean;
  /** Run the delivery scenarios (bench/client/delivery-scenarios.ts), and whether only them. */
  scenarios: boolean;
  scenariosOnly: boolean;
  /** Only the start-up measurement (bench/client/startup.ts), printed with its breakdown. */
  startupOnly: boolean;
  startupTable: boolean;
  /** Run the recorder scenario (bench/client/recorder-capture.ts), and whether only it. */
  recorder: boolean;
  recorderOnly: boolean;
  /** Only CPU profiles of the recorder scenario's request task, recorder alone and with capture. */
  recorderProfile: boolean;
}

function readSettings(argv: string[]): Settings {
  const args = new Map<string, string>();
  for (const arg of argv) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg} (see the header of bench/client-bench.ts)`);
    args.set(m[1]!, m[2] ?? 'true');
  }
  const targets = (args.get('targets') ?? ALL_TARGETS.join(',')).split(',') as TargetName[];
  for (const t of targets) if (!ALL_TARGETS.includes(t)) throw new Error(`unknown target ${t}; targets: ${ALL_TARGETS.join(', ')}`);
  return {
    rounds: Math.max(1, Number(args.get('rounds') ?? process.env.BENCH_ROUNDS ?? 1)),
    targets,
    profile: args.get('profile') === 'true' || process.env.BENCH_CPU_PROF === '1',
    write: args.get('no-write') !== 'true' && process.env.BENCH_WRITE !== '0',
    scenarios: args.get('no-scenarios') !== 'true',
    scenariosOnly: args.get('scenarios-only') === 'true',
    startupOnly: args.get('startup-only') === 'true',
    startupTable: args.get('startup-table') === 'true',
    recorder: args.get('no-recorder') !== 'true',
    recorderOnly: args.get('recorder-only') === 'true',
    recorderProfile: args.get('recorder-profile') === 'true',
  };
}

/** One measured run of one target. */
interface Measurement {
  mode: string;
  perCallSyncMicros: number;
  perCallWithPostMicros: number;
  burstSyncMs: number;
  burstWithPostMs: number;
  /** TaskDuration over burst + 10 s, ms. */
  burstTaskMs: number;
  /** TaskDuration over 10 s of idle on the same page, ms. */
  idleTaskMs: number;
  longTasks: number;
  longestTaskMs: number;
  deliveredIn10s: number;
  deliveredEventually: number;
  /** Main-thread JavaScript the page loaded, gzipped bytes, and the files. */
  jsGzipBytes: number;
  jsFiles: string[];
}

/**
 * Chromium's own switches as playwright launches it (the ones that matter for timing: no timer
 * throttling or backgrounding of a headless page), plus the project's (test-support/chromium.ts).
 */
const BROWSER_ARGS: readonly string[] = [
  ...CHROMIUM_ARGS,
  '--disable-field-trial-config',
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
  '--disable-renderer-backgrounding',
  '--disable-ipc-flooding-protection',
  '--disable-hang-monitor',
  '--disable-breakpad',
  '--disable-dev-shm-usage',
  '--disable-extensions',
  '--disable-back-forward-cache',
  '--hide-scrollbars',
  '--mute-audio',
];

/** What the runs share. */
interface Rig {
  browser: CdpBrowser;
  web: StaticServer;
  server: BenchServer;
  capture: CaptureEndpoint;
  clientDir: string;
  posthogJs: string;
}

const ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

async function taskDurationMs(page: CdpPage): Promise<number> {
  const { metrics } = await page.send<{ metrics: Array<{ name: string; value: number }> }>('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
}

async function countStored(server: BenchServer, projectId: string, eventType: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await server.store.queryEvents({ projectId, eventType, limit: 1000, cursor });
    count += page.events.length;
    if (page.nextCursor === null) return count;
    cursor = page.nextCursor;
  }
}

/** Opens the target's page; returns it with the counter of delivered events. */
async function openTarget(rig: Rig, target: TargetName, path: string, diagnostics = false): Promise<{ page: CdpPage; delivered: (name: string) => Promise<number> }> {
  let delivered: (name: string) => Promise<number>;
  if (target === 'posthog') {
    rig.web.setPage(path, { html: posthogPage('/bench/posthog.js', posthogOptions(rig.capture.url)), headers: ISOLATION });
    rig.capture.reset();
    delivered = async (name) => rig.capture.count(name);
  } else if (target === 'floor' || target === 'floor-silent') {
    const project = await rig.server.createProject();
    const workerUrl = target === 'floor' ? '/bench/floor-worker.js' : '/bench/floor-worker-silent.js';
    rig.web.setPage(path, { html: benchDocument(floorPage({ endpoint: rig.server.url, apiKey: project.writeKey, projectId: project.id }, workerUrl)), headers: ISOLATION });
    delivered = (name) => countStored(rig.server, project.id, name);
  } else {
    const project = await rig.server.createProject();
    const config = {
      apiKey: project.writeKey,
      projectId: project.id,
      endpoint: rig.server.url,
      enableAutoPageTracking: false,
      // The burst must fit in the queue (the default, 1000, drops the oldest by design).
      maxQueueSize: 20_000,
    };
    const headers = target === 'in-process' ? { ...ISOLATION, 'content-security-policy': "worker-src 'none'" } : ISOLATION;
    rig.web.setPage(path, { html: ourPage(config, { countPortMessages: diagnostics }), headers });
    delivered = (name) => countStored(rig.server, project.id, name);
  }
  // A page in its own browser context with no DevTools domain enabled (bench/client/cdp.ts).
  const page = await rig.browser.newPage(`${rig.web.url}${path}`);
  await page.waitFor(() => (window as unknown as Partial<BenchWindow>).bench?.started === true, 30_000);
  const mode = await page.evaluate(() => (window as unknown as BenchWindow).bench.ready());
  const expected = target === 'posthog' ? 'main-thread' : target === 'floor-silent' ? 'floor' : target;
  if (mode !== expected) throw new Error(`${target}: the client runs as "${mode}", expected "${expected}"`);
  const strategy = await page.evaluate(() => (window as unknown as BenchWindow).bench.strategy());
  const expectedStrategy = target === 'worker' ? 'shipped-worker' : target === 'in-process' ? 'in-process' : '-';
  await reportPageErrors(page, target);
  if (strategy !== expectedStrategy) throw new Error(`${target}: the core was started by "${strategy}", expected "${expectedStrategy}"`);
  if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error(`${target}: the page is not cross-origin isolated`);
  return { page, delivered };
}

/** Prints what went wrong on the page (the page collects it, see `BenchApi.errors`). */
async function reportPageErrors(page: CdpPage, target: TargetName): Promise<void> {
  const errors = await page.evaluate(() => (window as unknown as BenchWindow).bench.errors.splice(0));
  for (const error of errors) console.error(`[${target}] page error: ${error}`);
}

async function measure(rig: Rig, target: TargetName, round: number): Promise<Measurement> {
  const servedFrom = rig.web.served.length;
  const { page, delivered } = await openTarget(rig, target, `/${target}-${round}.html`);
  try {
    // The only domain this page ever has enabled: the TaskDuration counter.
    await page.send('Performance.enable');

    // Warm-up: the code paths are compiled and the first requests (and preflight) are done.
    await page.evaluate((n) => (window as unknown as BenchWindow).bench.sample(10, n / 10, 'warmup', 'warmup'), WARMUP_CALLS);
    await sleep(2_000);
    const samples = await page.evaluate(
      ({ s, n }) => (window as unknown as BenchWindow).bench.sample(s, n, 'per_call', 'per-call'),
      { s: SAMPLES, n: SAMPLE_SIZE },
    );
    await sleep(3_000);

    // Idle: what the page's main thread does anyway (timers, status posts, the CDP polling itself).
    const idle0 = await taskDurationMs(page);
    await sleep(SETTLE_MS);
    const idleTaskMs = (await taskDurationMs(page)) - idle0;

    const before = await taskDurationMs(page);
    const running = page.evaluate(({ n }) => (window as unknown as BenchWindow).bench.burst(n, 'burst', 'burst'), { n: BURST });
    // Counted by this process at 10 s after the call (the burst starts a moment after it), even
    // when the page's main thread is still busy with the burst.
    await sleep(SETTLE_MS);
    const deliveredIn10s = await delivered('burst');
    const burst = await running;
    const origin = await page.evaluate(() => performance.timeOrigin);
    await sleep(Math.max(0, origin + burst.start + SETTLE_MS - Date.now()));
    // At 10 s after the burst started, or when the page answers again if its task ran longer.
    const burstTaskMs = (await taskDurationMs(page)) - before;
    const longTasks = (await page.evaluate(() => (window as unknown as BenchWindow).bench.longTasks)).filter(
      (task) => task.start + task.duration >= burst.start,
    );
    let deliveredEventually = deliveredIn10s;
    const deadline = Date.now() + EVENTUALLY_MS;
    while (deliveredEventually < BURST && Date.now() < deadline) {
      await sleep(500);
      deliveredEventually = await delivered('burst');
    }

    await reportPageErrors(page, target);
    const js = await mainThreadScripts(rig, target, servedFrom);
    return {
      mode: await page.evaluate(() => (window as unknown as BenchWindow).bench.ready()),
      perCallSyncMicros: (median(samples.sync) / SAMPLE_SIZE) * 1000,
      perCallWithPostMicros: (median(samples.withPost) / SAMPLE_SIZE) * 1000,
      burstSyncMs: burst.sync,
      burstWithPostMs: burst.withPost,
      burstTaskMs,
      idleTaskMs,
      longTasks: longTasks.length,
      longestTaskMs: Math.max(0, ...longTasks.map((t) => t.duration)),
      deliveredIn10s,
      deliveredEventually,
      jsGzipBytes: js.gzip,
      jsFiles: js.files,
    };
  } finally {
    await page.close();
  }
}

/** The main-thread scripts the page fetched (our worker's script runs elsewhere and is left out), gzipped. */
async function mainThreadScripts(rig: Rig, target: TargetName, servedFrom: number): Promise<{ gzip: number; files: string[] }> {
  if (target === 'posthog') return { gzip: gzipSync(rig.posthogJs, { level: 9 }).length, files: ['posthog.js (esbuild bundle)'] };
  if (target === 'floor' || target === 'floor-silent') return { gzip: gzipSync(floorPage({ endpoint: '', apiKey: '', projectId: '' }), { level: 9 }).length, files: ['inline script'] };
  const files = new Set<string>();
  for (const { path, status } of rig.web.served.slice(servedFrom)) {
    if (status === 200 && path.startsWith('/dist/client/') && path.endsWith('.js') && path !== '/dist/client/worker.js') files.add(path.slice('/dist/client/'.length));
  }
  let gzip = 0;
  for (const file of files) gzip += gzipSync(await readFile(join(rig.clientDir, file)), { level: 9 }).length;
  return { gzip, files: [...files] };
}

/** Profiles of one burst on a fresh page: the burst's task, then the 10 s after it (acks, sending). */
interface BurstProfile {
  task: { spots: HotSpot[]; busyMs: number };
  after: { spots: HotSpot[]; busyMs: number };
  /** Messages the facade received from the core in the 10 s after the burst. */
  messagesAfter: number;
}

/** CPU profiles of the burst task and of the 10 s after it, self time per function (original sources). */
async function profileBurst(rig: Rig, target: TargetName): Promise<BurstProfile> {
  const { page } = await openTarget(rig, target, `/${target}-profile.html`, true);
  try {
    await page.evaluate((n) => (window as unknown as BenchWindow).bench.sample(10, n / 10, 'warmup', 'warmup'), WARMUP_CALLS);
    await sleep(3_000);
    const resolve = sourceMapResolver(rig.clientDir);
    const outDir = join(ROOT, 'bench', '.out');
    mkdirSync(outDir, { recursive: true });

    let stop = await startProfile(page);
    await page.evaluate((n) => (window as unknown as BenchWindow).bench.burst(n, 'burst', 'burst'), BURST);
    const taskProfile = await stop();
    const messages0 = await page.evaluate(() => (window as unknown as BenchWindow).bench.portMessages);
    stop = await startProfile(page);
    await sleep(SETTLE_MS);
    const afterProfile = await stop();
    const messagesAfter = (await page.evaluate(() => (window as unknown as BenchWindow).bench.portMessages)) - messages0;
    writeFileSync(join(outDir, `client-${target}-burst.cpuprofile`), JSON.stringify(taskProfile));
    writeFileSync(join(outDir, `client-${target}-after.cpuprofile`), JSON.stringify(afterProfile));
    return { task: hotSpots(taskProfile, resolve), after: hotSpots(afterProfile, resolve), messagesAfter };
  } finally {
    await page.close();
  }
}

function spotTable(title: string, profile: { spots: HotSpot[]; busyMs: number }, top: number): string[] {
  const lines = [`${title}: ${fmt(profile.busyMs)} ms busy.`, '', '| function (source) | self ms | share |', '|---|---:|---:|'];
  for (const spot of profile.spots.slice(0, top)) {
    lines.push(`| ${spot.where.replace(/\|/g, '\\|')} | ${fmt(spot.selfMs)} | ${fmt((spot.selfMs / profile.busyMs) * 100, 0)}% |`);
  }
  return lines;
}

// ---- report -------------------------------------------------------------------------------------

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`;

function pooled(runs: Measurement[]): Measurement {
  const pick = (f: (m: Measurement) => number) => median(runs.map(f));
  return {
    mode: runs[0]!.mode,
    perCallSyncMicros: pick((m) => m.perCallSyncMicros),
    perCallWithPostMicros: pick((m) => m.perCallWithPostMicros),
    burstSyncMs: pick((m) => m.burstSyncMs),
    burstWithPostMs: pick((m) => m.burstWithPostMs),
    burstTaskMs: pick((m) => m.burstTaskMs),
    idleTaskMs: pick((m) => m.idleTaskMs),
    longTasks: Math.max(...runs.map((m) => m.longTasks)),
    longestTaskMs: Math.max(...runs.map((m) => m.longestTaskMs)),
    deliveredIn10s: Math.min(...runs.map((m) => m.deliveredIn10s)),
    deliveredEventually: Math.min(...runs.map((m) => m.deliveredEventually)),
    jsGzipBytes: runs[0]!.jsGzipBytes,
    jsFiles: runs[0]!.jsFiles,
  };
}

/** Main-thread time over burst + 10 s, idle subtracted, ms. */
const mainThreadMs = (m: Measurement): number => Math.max(0, m.burstTaskMs - m.idleTaskMs);

/**
 * What Chromium charges the page's main thread for the requests a dedicated worker makes during the
 * burst: the floor less the same floor whose worker sends nothing (medians over rounds, ms), or
 * undefined without both. Signed: one measurement varies by ±20 ms between rounds on this machine,
 * so differences are only as good as that.
 */
function requestCharge(results: ReadonlyMap<TargetName, Measurement>): number | undefined {
  const floor = results.get('floor');
  const silent = results.get('floor-silent');
  return floor === undefined || silent === undefined ? undefined : mainThreadMs(floor) - mainThreadMs(silent);
}

/** Main-thread time less Chromium's charge, for a target whose worker sends; signed. */
function netOfCharge(results: ReadonlyMap<TargetName, Measurement>, target: TargetName): number | undefined {
  const charge = requestCharge(results);
  const mine = results.get(target);
  if (charge === undefined || mine === undefined || !WORKER_SENDS.includes(target)) return undefined;
  return mainThreadMs(mine) - charge;
}

/** Targets whose requests a dedicated worker makes (the charge applies to them). */
const WORKER_SENDS: readonly TargetName[] = ['worker', 'floor'];

function table(results: Map<TargetName, Measurement>): string {
  const rows: string[][] = [
    ['measure', ...[...results.keys()].map((t) => LABELS[t])],
    ['track(): µs per call, median (loop only)', ...[...results.values()].map((m) => fmt(m.perCallSyncMicros, 2))],
    ['track(): µs per call, median (incl. posting to the worker)', ...[...results.values()].map((m) => fmt(m.perCallWithPostMicros, 2))],
    ['10k burst: the loop, ms', ...[...results.values()].map((m) => fmt(m.burstSyncMs))],
    ['10k burst: the whole task, ms (loop + posting)', ...[...results.values()].map((m) => fmt(m.burstWithPostMs))],
    [
      '10k burst: main-thread task time over burst + 10 s, ms (idle subtracted)',
      ...[...results.values()].map((m) => fmt(mainThreadMs(m))),
    ],
    [
      "10k burst: the same, less Chromium's charge for the worker's 500 requests (floor − floor sending nothing), ms",
      ...[...results.keys()].map((t) => {
        const net = netOfCharge(results, t);
        return net === undefined ? '–' : fmt(net);
      }),
    ],
    ['long tasks (> 50 ms), burst + 10 s', ...[...results.values()].map((m) => (m.longTasks === 0 ? '0' : `${m.longTasks} (longest ${fmt(m.longestTaskMs, 0)} ms)`))],
    ['events delivered within 10 s', ...[...results.values()].map((m) => `${m.deliveredIn10s.toLocaleString('en-US')} / ${BURST.toLocaleString('en-US')}`)],
    ['events delivered at all (≤ 70 s)', ...[...results.values()].map((m) => `${m.deliveredEventually.toLocaleString('en-US')} / ${BURST.toLocaleString('en-US')}`)],
    ['main-thread JS loaded, min + gzip', ...[...results.values()].map((m) => kb(m.jsGzipBytes))],
  ];
  const lines = [`| ${rows[0]!.join(' | ')} |`, `|---|${rows[0]!.slice(1).map(() => '---:').join('|')}|`];
  for (const row of rows.slice(1)) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/**
 * @param net - main-thread time less Chromium's charge for a worker's requests (ms), for a client
 *   whose worker sends: no worker-based client can avoid that charge (see the notes), the aim is
 *   about what ours adds
 * @param charge - that charge, for the text
 */
function aimsLine(m: Measurement, net: number | undefined, charge: number | undefined): { text: string; met: boolean } {
  const total = mainThreadMs(m);
  const burstMs = net ?? total;
  const what =
    net === undefined || charge === undefined
      ? `${fmt(burstMs)} ms of main-thread time for the burst incl. posting and acks`
      : `${fmt(burstMs)} ms of main-thread time for the burst incl. posting and acks (${fmt(total)} ms less Chromium's ≈ ${fmt(charge)} ms for the worker's requests)`;
  const checks = [
    [`${fmt(m.perCallSyncMicros, 2)} µs per track() call (aim ≤ ${AIMS.perCallMicros})`, m.perCallSyncMicros <= AIMS.perCallMicros],
    [`${what} (aim ≤ ${AIMS.burstMs})`, burstMs <= AIMS.burstMs],
    [`${m.longTasks} long task(s) (aim ${AIMS.longTasks})`, m.longTasks <= AIMS.longTasks],
    [`${m.deliveredIn10s.toLocaleString('en-US')} delivered within 10 s (aim ${AIMS.delivered.toLocaleString('en-US')})`, m.deliveredIn10s >= AIMS.delivered],
  ] as const;
  return {
    text: checks.map(([label, ok]) => `${label} ${ok ? '✓' : '✗'}`).join('; '),
    met: checks.every(([, ok]) => ok),
  };
}

// ---- main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const startedAt = new Date();
  const load = loadavg().map((n) => n.toFixed(2)).join(' ');
  const clientDir = await mkdtemp(join(tmpdir(), 'sa-client-bench-build-'));
  const rows = await writeClientBuild(clientDir);
  const posthogJs = await bundlePosthog(ROOT);
  // posthog-js with its recorder bundled in, for the recorder scenario's columns.
  const posthogRecorderJs = settings.recorder || settings.recorderOnly ? await bundlePosthog(ROOT, { recorder: true }) : undefined;
  const server = await startBenchServer();
  const capture = await startCaptureEndpoint();
  const web = await startStaticServer({
    clientDir,
    // Every response: a worker started by a cross-origin isolated page must be isolated too.
    headers: { ...ISOLATION, 'cross-origin-resource-policy': 'same-origin' },
    handle(req, res) {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (answerBenchApi(path, res, ISOLATION)) return true;
      const script =
        path === '/bench/posthog.js'
          ? posthogJs
          : path === POSTHOG_RECORDER_PATH
            ? posthogRecorderJs
            : path === '/bench/floor-worker.js'
            ? FLOOR_WORKER
            : path === '/bench/floor-worker-silent.js'
              ? FLOOR_WORKER_SILENT
              : path === '/bench/floor-worker-startup.js'
                ? FLOOR_WORKER_STARTUP
                : undefined;
      if (script === undefined) return false;
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store', ...ISOLATION, 'cross-origin-resource-policy': 'same-origin' });
      res.end(script);
      return true;
    },
  });
  const browser = await launchCdpBrowser({ executablePath: CHROMIUM_PATH, args: BROWSER_ARGS });
  const rig: Rig = { browser, web, server, capture, clientDir, posthogJs };
  try {
    const startupRig = { browser, web, server, clientDir, captureUrl: capture.url, headers: ISOLATION };
    if (settings.startupTable) {
      const rounds = Math.max(STARTUP_ROUNDS, settings.rounds);
      console.log(scenarioTable(startupRows(await runStartup(startupRig, rounds), rounds)));
      return;
    }
    if (settings.startupOnly) {
      // Where the start-up goes: every task of the window and the hottest functions (the tracing
      // this needs costs the page time of its own: compare pages within this output only).
      for (let round = 0; round < settings.rounds; round++) {
        for (const kind of STARTUP_PAGES) {
          const result = await measureStartup(startupRig, kind, round, true);
          console.log(`\n${kind}: taking events after ${fmt(result.createdCpuMs)} ms CPU (${fmt(result.createdBusyMs)} ms wall); ready after ${fmt(result.cpuMs)} ms CPU, ${fmt(result.busyMs)} ms wall, in a window of ${fmt(result.windowMs)} ms`);
          for (const line of result.tasks) console.log(`  task ${line}`);
          console.log('  hottest functions to the client taking events:');
          for (const line of result.hotFunctionsCreated) console.log(`  fn ${line}`);
          console.log('  hottest functions to the client ready:');
          for (const line of result.hotFunctions) console.log(`  fn ${line}`);
        }
      }
      return;
    }
    if (settings.recorderProfile) {
      const resolve = sourceMapResolver(clientDir);
      for (const variant of ['recorder', 'capture'] as const) {
        const profile = await profileRequestTask({ browser, web, server, headers: ISOLATION }, variant, resolve);
        console.log(`\n${spotTable(`the task issuing 200 fetch() calls, ${variant === 'capture' ? 'recorder + console + network' : 'recorder'}, summed over 10 profiles`, profile, 20).join('\n')}`);
      }
      for (const variant of ['recorder', 'capture'] as const) {
        const cost = await fetchWrapperCost({ browser, web, server, headers: ISOLATION }, variant);
        console.log(
          `fetch() on a page with the ${variant === 'capture' ? 'recorder + console + network' : 'recorder'}: ${fmt(cost.wrappedMicros, 2)} µs per call; ` +
            `the fetch saved before recording started, same page: ${fmt(cost.bareMicros, 2)} µs (median task of 200 calls, 41 tasks each way, alternating)`,
        );
      }
      return;
    }
    if (settings.recorder || settings.recorderOnly) {
      const posthog = posthogRecorderJs === undefined ? undefined : { scriptUrl: POSTHOG_RECORDER_PATH, capture };
      const { table, notes } = await runRecorderCapture({ browser, web, server, headers: ISOLATION, posthog });
      const body = [
        `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, ${browser.version} (headless), ` +
          `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC; load average at start ${load}.`,
        'Settings: our client with default settings, automatic page views off; the recorder with its defaults, capture with `{ console: true, network: true }` (defaults: no headers or bodies). ' +
          `posthog-js ${posthogVersion()} with \`posthog-js/dist/posthog-recorder\` bundled into the page (no script loaded from elsewhere), the options of the main-thread table but session recording on: ` +
          `${recordingOptionsText(capture.url)}; its remote config, answered by a local stand-in that also takes its uploads, turns on session replay with console logs and network timing, ` +
          'no sampling, minimum duration or triggers (bench/client/posthog.ts REMOTE_CONFIG); on its capture column, `posthog.sessionRecording._forceAllowLocalhostNetworkCapture = true` ' +
          '(posthog-js records no network on 127.0.0.1 without it). Without headers or bodies, posthog-js records network from resource timing entries (a PerformanceObserver) and does not wrap fetch; ' +
          'ours wraps fetch and XHR (method and status). posthog-js compresses and uploads on the main thread; ours hands its recording to the worker. One run of three pages each: compare columns, not runs.',
        ...notes,
        '',
        table,
      ].join('\n');
      console.log(`\n${RECORDER_SECTION}\n\n${body}\n`);
      if (settings.write) writeResultsSection(RESULTS_PATH, RECORDER_SECTION, body);
      if (settings.recorderOnly) return;
    }
    if (settings.scenarios) {
      const rows = await runDeliveryScenarios({ browser, web, server, capture, headers: ISOLATION });
      process.stdout.write(`start-up, ${STARTUP_ROUNDS} loads of each page… `);
      rows.push(...startupRows(await runStartup(startupRig, STARTUP_ROUNDS), STARTUP_ROUNDS));
      console.log('done');
      const body = [
        `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, ${browser.version} (headless), ` +
          `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC; load average at start ${load}.`,
        `Settings: both clients with their default settings (ours: batchSize 20, flushInterval 10 s, maxQueueSize 1000, retryAttempts 3; ` +
          `automatic page views off on both, so that one event kind is counted); events with realistic properties (bench/client/pages.ts trackRich, ` +
          `about 200 bytes of JSON each before the page, screen and ids each client adds); our server on SQLite, posthog-js ${posthogVersion()} to a ` +
          `local endpoint that answers 200; counted until all arrived or nothing moved for 3 s. One run each: compare columns, not runs.`,
        '',
        scenarioTable(rows),
      ].join('\n');
      console.log(`\n${SCENARIO_SECTION}\n\n${body}\n`);
      if (settings.write) writeResultsSection(RESULTS_PATH, SCENARIO_SECTION, body);
    }
    if (settings.scenariosOnly) return;
    const runs = new Map<TargetName, Measurement[]>(settings.targets.map((t) => [t, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? settings.targets : [...settings.targets].reverse();
      for (const target of order) {
        process.stdout.write(`round ${round + 1}/${settings.rounds}: ${LABELS[target]}… `);
        const m = await measure(rig, target, round);
        runs.get(target)!.push(m);
        console.log(
          `${fmt(m.perCallWithPostMicros, 2)} µs/call, burst task ${fmt(m.burstWithPostMs)} ms, ` +
            `main thread ${fmt(m.burstTaskMs)} ms (idle ${fmt(m.idleTaskMs)} ms), ${m.longTasks} long task(s), ` +
            `${m.deliveredIn10s}/${BURST} in 10 s, ${m.deliveredEventually}/${BURST} at all`,
        );
      }
    }
    const results = new Map<TargetName, Measurement>([...runs].map(([t, list]) => [t, pooled(list)]));

    const facadeRow = rows.find((r) => r.name.startsWith('main-thread entry'));
    const lines: string[] = [];
    lines.push(
      `Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), Node ${process.version}, ${browser.version} (headless, ${CHROMIUM_PATH}), ` +
        `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC; load average at start ${load}.`,
    );
    lines.push(
      `Settings: ${settings.rounds} round(s) per target${settings.rounds > 1 ? ' (medians; long tasks: the most, delivered: the fewest)' : ''}; ` +
        `${WARMUP_CALLS.toLocaleString('en-US')} warm-up calls; per-call = median of ${SAMPLES} tasks × ${SAMPLE_SIZE} calls; burst = ${BURST.toLocaleString('en-US')} calls in one task; ` +
        `each event \`track('burst', { run, i })\`; our client with \`maxQueueSize: 20000\` (so the burst fits), \`enableAutoPageTracking: false\`, other options default (batchSize 20), our server on SQLite on this machine; posthog-js ${posthogVersion()} to a local endpoint that answers 200.`,
    );
    lines.push('');
    lines.push(table(results));
    lines.push('');
    const ours = settings.targets.filter((t) => OURS.includes(t));
    const missed: TargetName[] = [];
    for (const t of ours) {
      const { text, met } = aimsLine(results.get(t)!, netOfCharge(results, t), requestCharge(results));
      lines.push(`Aims (reported, not enforced), ${LABELS[t]}: ${text}.`);
      if (!met) missed.push(t);
    }
    const floor = results.get('floor');
    const charge = requestCharge(results);
    if (floor !== undefined) {
      lines.push(
        `For scale, the floor in the same run: ${fmt(floor.perCallSyncMicros, 2)} µs per call, ${fmt(floor.burstWithPostMs)} ms for the burst's task, ` +
          `${fmt(mainThreadMs(floor))} ms of main-thread time over burst + 10 s without any message back to the page` +
          (charge === undefined
            ? '.'
            : `, of which ${fmt(charge)} ms (≈ ${fmt((charge * 1000) / BURST_REQUESTS, 0)} µs per request) is Chromium's charge for the ` +
              `${BURST_REQUESTS} requests its worker makes: the same floor with a worker that sends nothing costs ${fmt(mainThreadMs(results.get('floor-silent')!))} ms.`),
      );
      const worker = results.get('worker');
      if (worker !== undefined) {
        const perRound = (t: TargetName) => runs.get(t)!.map((m) => fmt(mainThreadMs(m))).join(', ');
        lines.push(
          `What ours, worker, adds over the floor: ${fmt(mainThreadMs(worker) - mainThreadMs(floor))} ms of main-thread time over burst + 10 s ` +
            `(per round, ours: ${perRound('worker')} ms; floor: ${perRound('floor')} ms; one measurement varies by about ±20 ms here, so ` +
            `differences smaller than that are noise).`,
        );
      }
    }
    lines.push('');
    lines.push(
      `Notes: "main-thread task time" is CDP Performance.getMetrics TaskDuration on the page (main thread only; the worker's time is not in it) ` +
        `from just before the burst to 10 s after it, minus the same page's TaskDuration over 10 s of idle just before ` +
        `(${[...results].map(([t, m]) => `${LABELS[t]}: ${fmt(m.idleTaskMs)} ms`).join(', ')}); it includes the burst's task, posting, ` +
        `the worker's status posts (acks) handled on the main thread, and for the in-process and posthog rows, the sending itself. ` +
        `The per-call "loop only" figure times the track() calls; "incl. posting" adds the end-of-task microtask in which our facade ` +
        `posts the task's events to the worker in one message. Main-thread JS: files the page loaded, min + gzip -9 ` +
        `(ours: ${[...results].filter(([t]) => OURS.includes(t)).map(([t, m]) => `${t}: ${m.jsFiles.join(', ')}`).join('; ')}); ` +
        `the build's budgeted main-thread entry is ${facadeRow === undefined ? '?' : kb(facadeRow.gzip)} gzipped. ` +
        `The floor column (bench/client/floor.ts) is the reference point our client is measured against: per call a small object and a push, per task one postMessage, ` +
        `a worker that sends batches of 20 to the same server, and nothing sent back to the page (no ids beyond a counter, no session, no acks, no beacon). ` +
        `All pages are cross-origin isolated (COOP + COEP) for the 5 µs clock. ` +
        `Every page is opened over a bare DevTools pipe (bench/client/cdp.ts) with no DevTools domain enabled but Performance (and Profiler for the profiles): ` +
        `no playwright, whose Network instrumentation of the page and of its auto-attached workers made every worker request cost the page's main thread ` +
        `more (an A/B run of the floor on this machine, 2026-11-23: 143 ms of main-thread time under playwright, 91–97 ms over the bare pipe; ` +
        `the previous table, taken under playwright, had 162 ms for the floor and 234 ms for ours, worker). ` +
        `Chromium's charge for a worker's requests: a dedicated worker's fetch context reports every load to its parent frame, so each request the worker makes ` +
        `arrives as two to three blink.mojom.ResourceLoadInfoNotifier messages (response received, transfer size, load completed) handled on the page's main thread ` +
        `(a Chromium trace of the floor's burst + 10 s: 1,500 such messages for 500 requests and next to nothing else); ` +
        `neither CORS preflights nor COEP show on the main thread. No worker-based client avoids that charge while it sends batches of 20 (the default batchSize), ` +
        `so the aim for ours, worker, is checked on the time less the charge measured by the two floor columns in the same run; the total is in the table. ` +
        `"Delivered within 10 s" is counted 10 s after the burst was started, by the benchmark process; where the burst's task itself runs longer than 10 s, ` +
        `the main-thread window ends when the page answers again. ` +
        `Numbers on a shared 2-core machine are noisy; compare columns of one run.`,
    );

    const profileTargets = settings.profile ? settings.targets.filter((t) => t !== 'posthog') : missed;
    if (profileTargets.length > 0) {
      lines.push('');
      lines.push('### Where the main-thread time goes (CPU profile of the burst + 10 s)');
      lines.push('');
      lines.push(
        `CDP Profiler on the page, 50 µs sampling, a fresh page per target after warm-up: one profile of the burst's task, one of the 10 s after it; ` +
          `self time per function, mapped to the sources through the build's source maps; "(program)" is native work outside JavaScript ` +
          `(task and message dispatch, deserialising messages); the profiler's own overhead inflates small functions ` +
          `(profiles in bench/.out/). ${settings.profile ? 'Run with --profile.' : 'Run because an aim was missed.'}`,
      );
      for (const t of profileTargets) {
        const profile = await profileBurst(rig, t);
        lines.push('');
        lines.push(...spotTable(`${LABELS[t]}, the burst's task (10,000 track() calls and the post)`, profile.task, 12));
        lines.push('');
        lines.push(
          ...spotTable(
            `${LABELS[t]}, the 10 s after the burst` +
              (profile.messagesAfter === 0
                ? ''
                : ` (${profile.messagesAfter.toLocaleString('en-US')} messages from the worker reached the facade; ` +
                  `the worker's fetches also cost this thread time, see the floor)`),
            profile.after,
            8,
          ),
        );
      }
    }

    const body = lines.join('\n');
    console.log(`\n${SECTION}\n\n${body}\n`);
    if (settings.write) {
      writeResultsSection(RESULTS_PATH, SECTION, body);
      console.log(`written to ${RESULTS_PATH} (${SECTION})`);
    }
  } finally {
    await browser.close().catch(() => undefined);
    await Promise.allSettled([web.close(), capture.close(), server.close()]);
    await rm(clientDir, { recursive: true, force: true });
  }
}

/** Where the benchmark's static server serves posthog-js with its recorder. */
const POSTHOG_RECORDER_PATH = '/bench/posthog-recorder.js';

/** posthog-js's options of the recorder columns that differ from the main-thread table's, as text. */
function recordingOptionsText(apiHost: string): string {
  const base = posthogOptions(apiHost);
  const differing = (capture: boolean) => {
    const options = posthogRecordingOptions(apiHost, capture);
    const keys = Object.keys(options).filter((key) => JSON.stringify(options[key]) !== JSON.stringify(base[key]));
    const removed = Object.keys(base).filter((key) => !(key in options));
    return [...keys.map((key) => `${key}: ${JSON.stringify(options[key])}`), ...removed.map((key) => `${key} unset`)].join(', ');
  };
  return `recorder \`{ ${differing(false)} }\`, + console + network \`{ ${differing(true)} }\``;
}

function posthogVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', 'posthog-js', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
