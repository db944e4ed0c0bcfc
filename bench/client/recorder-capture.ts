// Recorder scenario of the client benchmark: what the session recorder costs the page's main
// thread with and without console and network capture (README "Session recording": console and
// network), on a scripted page: 1,000 DOM mutations (10 tasks of 100 added nodes), 200 fetch()
// calls issued in one task (then awaited), and a burst of 500 console.log() calls in one task.
// Columns: no recorder (the same page, the same client), the recorder, the recorder with console
// and network capture; medians over fresh pages. Rows: the main thread's CPU time (CDP
// TaskDuration in thread ticks) of the task that issues the 200 requests and of the console
// burst's (what the wrappers add inside the page's own calls), their loops' wall time beside it,
// and the main thread's CPU time over the workload and 3 s after it (capture, masking,
// formatting, the hand-over to the worker), less the same page's idle time over as long.
// Printed as a table; aims are not enforced.
import type { BenchServer } from './analytics-server.js';
import type { CdpBrowser, CdpPage } from './cdp.js';
import { benchDocument } from './pages.js';
import type { StaticServer } from '../../test-support/browser/static-server.js';

/** What the scenario runs on: the benchmark's rig. */
export interface RecorderRig {
  browser: CdpBrowser;
  web: StaticServer;
  server: BenchServer;
  /** Response headers of every page (cross-origin isolation). */
  headers: Record<string, string>;
}

/** The path the workload's requests go to; the benchmark's static server answers it (`answerBenchApi`). */
export const BENCH_API_PATH = '/bench/api';

type Variant = 'none' | 'recorder' | 'capture';
const VARIANTS: readonly Variant[] = ['none', 'recorder', 'capture'];
const RUNS = 3;
const REQUESTS = 200;
const CONSOLE_CALLS = 500;
const MUTATION_TASKS = 10;
const MUTATIONS_PER_TASK = 100;
const IDLE_MS = 5_000;
const SETTLE_MS = 3_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One page's figures. */
interface Run {
  fetchSyncMs: number;
  consoleSyncMs: number;
  /** Main-thread CPU time of the task that issued the requests (thread ticks), ms. */
  fetchCpuMs: number;
  /** The same for the console burst's task. */
  consoleCpuMs: number;
  taskMs: number;
  longTasks: number;
  recordedEntries: number;
}

interface WorkloadWindow {
  recorderBench: {
    start(variant: Variant): Promise<void>;
    mutate(): Promise<number>;
    /** Issues the requests in this task; returns its wall time (the answers are awaited by `settle`). */
    issueRequests(): number;
    settle(): Promise<void>;
    /** The console burst in this task; returns its wall time. */
    consoleBurst(): number;
    /** Stops recording (the final upload); returns the session id. */
    stop(): string;
  };
  bench: { longTasks: Array<{ start: number; duration: number }> };
}

function page(config: Record<string, unknown>): string {
  return benchDocument(`<div id="box"></div>
<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
const tick = () => new Promise((resolve) => setTimeout(resolve));
window.recorderBench = {
  async start(variant) {
    if (variant === 'none') return;
    analytics.startRecording(variant === 'capture' ? { console: true, network: true } : undefined);
    // Capture has begun once the core holds the full snapshot.
    while ((await analytics.getDeliveryStats()).recordingQueued === 0) await new Promise((r) => setTimeout(r, 50));
  },
  async mutate() {
    const start = performance.now();
    const box = document.getElementById('box');
    for (let k = 0; k < ${MUTATION_TASKS}; k++) {
      await tick();
      for (let i = 0; i < ${MUTATIONS_PER_TASK}; i++) {
        const p = document.createElement('p');
        p.textContent = 'row ' + k + '-' + i;
        box.appendChild(p);
      }
    }
    await tick();
    return start;
  },
  issueRequests() {
    const t = performance.now();
    window.pendingRequests = [];
    for (let i = 0; i < ${REQUESTS}; i++) window.pendingRequests.push(fetch('${BENCH_API_PATH}?i=' + i).then((r) => r.text()));
    return performance.now() - t;
  },
  async settle() {
    await Promise.all(window.pendingRequests);
    await tick();
  },
  consoleBurst() {
    const t = performance.now();
    for (let i = 0; i < ${CONSOLE_CALLS}; i++) console.log('bench line', i, { i });
    return performance.now() - t;
  },
  stop() {
    analytics.stopRecording();
    return analytics.getSessionId();
  },
};
bench.started = true;
</script>`);
}

async function taskDurationMs(p: CdpPage): Promise<number> {
  const { metrics } = await p.send<{ metrics: Array<{ name: string; value: number }> }>('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
}

/** Recorded console and network entries of one session in the server's store. */
async function storedEntries(server: BenchServer, projectId: string, sessionId: string): Promise<number> {
  const recording = await server.store.getRecording(projectId, sessionId);
  if (recording === null) return 0;
  return recording.events.filter((e) => e.type === 5 && /service-analytics:(console|network)/.test(String((e.data as { tag?: unknown }).tag))).length;
}

async function runOnce(rig: RecorderRig, variant: Variant, round: number): Promise<Run> {
  const project = await rig.server.createProject();
  const path = `/recorder-${variant}-${round}.html`;
  rig.web.setPage(path, { html: page({ apiKey: project.writeKey, projectId: project.id, endpoint: rig.server.url, enableAutoPageTracking: false }), headers: rig.headers });
  const p = await rig.browser.newPage(`${rig.web.url}${path}`);
  try {
    await p.waitFor(() => 'recorderBench' in window, 30_000);
    // Task time as the main thread's CPU time (thread ticks), as the delivery scenarios measure it:
    // wall time on this shared machine swung by more than the wrappers cost.
    await p.send('Performance.enable', { timeDomain: 'threadTicks' });
    await p.evaluate((v) => (window as unknown as WorkloadWindow).recorderBench.start(v), variant);
    await sleep(2_000);
    const idle0 = await taskDurationMs(p);
    const idleStart = Date.now();
    await sleep(IDLE_MS);
    const idleRate = ((await taskDurationMs(p)) - idle0) / (Date.now() - idleStart);
    const before = await taskDurationMs(p);
    const windowStart = Date.now();
    const start = await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.mutate());
    // The task that issues the requests, and the console burst's, each alone between two readings.
    let cpu = await taskDurationMs(p);
    const fetchSync = await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.issueRequests());
    const fetchCpu = (await taskDurationMs(p)) - cpu;
    await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.settle());
    cpu = await taskDurationMs(p);
    const consoleSync = await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.consoleBurst());
    const consoleCpu = (await taskDurationMs(p)) - cpu;
    const result = { fetchSync, consoleSync, start };
    await sleep(SETTLE_MS);
    const taskMs = (await taskDurationMs(p)) - before - idleRate * (Date.now() - windowStart);
    const longTasks = (await p.evaluate(() => (window as unknown as WorkloadWindow).bench.longTasks)).filter((t) => t.start + t.duration >= result.start).length;
    // What the capture recorded, once the final chunk is stored: proof that it ran.
    let recordedEntries = 0;
    if (variant !== 'none') {
      const sessionId = await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.stop());
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && (await rig.server.store.getRecording(project.id, sessionId))?.finished !== true) await sleep(200);
      recordedEntries = await storedEntries(rig.server, project.id, sessionId);
    }
    return { fetchSyncMs: result.fetchSync, consoleSyncMs: result.consoleSync, fetchCpuMs: fetchCpu, consoleCpuMs: consoleCpu, taskMs, longTasks, recordedEntries };
  } finally {
    await p.close();
  }
}

/** Runs every variant on {@link RUNS} fresh pages each (alternating order); returns the table. */
export async function runRecorderCapture(rig: RecorderRig): Promise<string> {
  const runs = new Map<Variant, Run[]>(VARIANTS.map((v) => [v, []]));
  for (let round = 0; round < RUNS; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const variant of order) {
      process.stdout.write(`recorder scenario ${round + 1}/${RUNS}: ${variant}… `);
      const run = await runOnce(rig, variant, round);
      runs.get(variant)!.push(run);
      console.log(
        `fetch ×${REQUESTS} ${run.fetchCpuMs.toFixed(2)} ms CPU (${run.fetchSyncMs.toFixed(2)} wall), console ×${CONSOLE_CALLS} ${run.consoleCpuMs.toFixed(2)} ms CPU (${run.consoleSyncMs.toFixed(2)} wall), ` +
          `main thread ${run.taskMs.toFixed(1)} ms, ${run.longTasks} long task(s), ${run.recordedEntries} console/network entries stored`,
      );
    }
  }
  const cell = (variant: Variant, pick: (run: Run) => number, digits: number) => median(runs.get(variant)!.map(pick)).toFixed(digits);
  const row = (label: string, pick: (run: Run) => number, digits: number) => `| ${label} | ${VARIANTS.map((v) => cell(v, pick, digits)).join(' | ')} |`;
  return [
    `| ${MUTATION_TASKS * MUTATIONS_PER_TASK} DOM mutations, ${REQUESTS} fetch() calls, ${CONSOLE_CALLS} console.log() calls; medians of ${RUNS} fresh pages | no recorder | recorder | recorder + console + network |`,
    '|---|---:|---:|---:|',
    row(`${REQUESTS} fetch() calls issued in one task: main-thread CPU of that task (ms)`, (r) => r.fetchCpuMs, 2),
    row(`the same, wall time of the loop (ms)`, (r) => r.fetchSyncMs, 2),
    row(`${CONSOLE_CALLS} console.log() calls in one task: main-thread CPU of that task (ms)`, (r) => r.consoleCpuMs, 2),
    row(`the same, wall time of the loop (ms)`, (r) => r.consoleSyncMs, 2),
    row(`main-thread CPU over the workload + ${SETTLE_MS / 1000} s, less idle (ms)`, (r) => r.taskMs, 1),
    row('long tasks (> 50 ms) from the workload on', (r) => r.longTasks, 0),
    row('console and network entries stored (console capped at 50/s)', (r) => r.recordedEntries, 0),
  ].join('\n');
}

/** Answers the workload's requests on the benchmark's static server; true when it did. */
export function answerBenchApi(path: string, res: import('node:http').ServerResponse, headers: Record<string, string>): boolean {
  if (path !== BENCH_API_PATH) return false;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end('{"ok":true,"items":[1,2,3]}');
  return true;
}
