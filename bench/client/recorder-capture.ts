// Recorder scenario of the client benchmark: what the session recorder costs the page's main
// thread with and without console and network capture (README "Session recording": console and
// network), on a scripted page: 1,000 DOM mutations (10 tasks of 100 added nodes), 200 fetch()
// calls issued in one task (then awaited), and a burst of 500 console.log() calls in one task.
// Columns: no recorder (the same page, the same client), the recorder, the recorder with console
// and network capture, and beside them posthog-js's recorder, alone and with its console log
// recording and network timing (bench/client/posthog.ts: bundled into the page, remote config and
// uploads answered by a local stand-in); medians over fresh pages. Rows: the main thread's CPU
// time (CDP TaskDuration in thread ticks) of the task that issues the 200 requests and of the
// console burst's (what the wrappers add inside the page's own calls), their loops' wall time
// beside it, and the main thread's CPU time over the workload and 3 s after it (capture, masking,
// formatting, the hand-over to the worker or the upload), less the same page's idle time over as
// long; then what each recording holds once uploaded, the proof that it ran. A posthog-js column
// whose recording never started or holds nothing is left out with the reason.
// The pages are bench/client/recorder-pages.ts. Printed as a table; aims are not enforced.
import type { BenchServer } from './analytics-server.js';
import type { CdpBrowser, CdpPage } from './cdp.js';
import { type CaptureEndpoint, posthogRecordingOptions } from './posthog.js';
import { type HotSpot, type Resolver, hotSpots, startProfile } from './profile.js';
import { BENCH_API_PATH, CONSOLE_CALLS, MUTATIONS_PER_TASK, MUTATION_TASKS, REQUESTS, type WorkloadWindow, ourPage, posthogPage } from './recorder-pages.js';
import type { StaticServer } from '../../test-support/browser/static-server.js';

/** What the scenario runs on: the benchmark's rig. */
export interface RecorderRig {
  browser: CdpBrowser;
  web: StaticServer;
  server: BenchServer;
  /** Response headers of every page (cross-origin isolation). */
  headers: Record<string, string>;
  /**
   * posthog-js with its recorder bundled (`bundlePosthog(root, { recorder: true })`), served at
   * `scriptUrl`, and the stand-in its pages send to; without it, no posthog-js columns.
   */
  posthog?: { scriptUrl: string; capture: CaptureEndpoint };
}

export type Variant = 'none' | 'recorder' | 'capture' | 'posthog-recorder' | 'posthog-capture';
const OUR_VARIANTS: readonly Variant[] = ['none', 'recorder', 'capture'];
const POSTHOG_VARIANTS: readonly Variant[] = ['posthog-recorder', 'posthog-capture'];
const LABELS: Record<Variant, string> = {
  none: 'no recorder',
  recorder: 'recorder',
  capture: 'recorder + console + network',
  'posthog-recorder': 'posthog-js recorder',
  'posthog-capture': 'posthog-js recorder + console + network',
};
const isPosthog = (variant: Variant) => POSTHOG_VARIANTS.includes(variant);
const RUNS = 3;
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
  /** What the recording held once uploaded (our server's store, or the posthog stand-in's tally). */
  recorded: Recorded;
}

interface Recorded {
  rrwebEvents: number;
  consoleEntries: number;
  /** Network entries of the workload's requests. */
  networkEntries: number;
}

const NOTHING_RECORDED: Recorded = { rrwebEvents: 0, consoleEntries: 0, networkEntries: 0 };

async function taskDurationMs(p: CdpPage): Promise<number> {
  const { metrics } = await p.send<{ metrics: Array<{ name: string; value: number }> }>('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
}

/** What one session's recording holds in our server's store. */
async function storedRecording(server: BenchServer, projectId: string, sessionId: string): Promise<Recorded> {
  const recording = await server.store.getRecording(projectId, sessionId);
  if (recording === null) return NOTHING_RECORDED;
  const tagged = (tag: string) => recording.events.filter((e) => e.type === 5 && (e.data as { tag?: unknown }).tag === tag);
  return {
    rrwebEvents: recording.events.length,
    consoleEntries: tagged('service-analytics:console').length,
    networkEntries: tagged('service-analytics:network').filter((e) => JSON.stringify(e.data).includes(BENCH_API_PATH)).length,
  };
}

/** Waits until the stand-in has received nothing new for 4 s (at most 40 s); returns what it holds. */
async function uploadedRecording(capture: CaptureEndpoint): Promise<Recorded> {
  let last = -1;
  let quietSince = Date.now();
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline) {
    const events = capture.recording().rrwebEvents;
    if (events !== last) {
      last = events;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= 4_000) break;
    await sleep(250);
  }
  const tally = capture.recording();
  return {
    rrwebEvents: tally.rrwebEvents,
    consoleEntries: tally.consoleEntries,
    networkEntries: tally.networkUrls.filter((url) => url.includes(BENCH_API_PATH)).length,
  };
}

/** Serves `variant`'s page at `path`; returns how to read what its recording held once stopped. */
async function setUpPage(rig: RecorderRig, variant: Variant, path: string): Promise<(sessionId: string) => Promise<Recorded>> {
  if (isPosthog(variant)) {
    const { scriptUrl, capture } = rig.posthog!;
    const withCapture = variant === 'posthog-capture';
    rig.web.setPage(path, { html: posthogPage(scriptUrl, posthogRecordingOptions(capture.url, withCapture), withCapture), headers: rig.headers });
    capture.reset();
    return () => uploadedRecording(capture);
  }
  const project = await rig.server.createProject();
  rig.web.setPage(path, { html: ourPage({ apiKey: project.writeKey, projectId: project.id, endpoint: rig.server.url, enableAutoPageTracking: false }), headers: rig.headers });
  return async (sessionId) => {
    // Once the final chunk is stored.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await rig.server.store.getRecording(project.id, sessionId))?.finished !== true) await sleep(200);
    return storedRecording(rig.server, project.id, sessionId);
  };
}

async function runOnce(rig: RecorderRig, variant: Variant, round: number): Promise<Run> {
  const path = `/recorder-${variant}-${round}.html`;
  const recorded = await setUpPage(rig, variant, path);
  const p = await rig.browser.newPage(`${rig.web.url}${path}`);
  try {
    await p.waitFor(() => 'recorderBench' in window, 30_000);
    // Task time as the main thread's CPU time (thread ticks), as the delivery scenarios measure it:
    // wall time on this shared machine swung by more than the wrappers cost.
    await p.send('Performance.enable', { timeDomain: 'threadTicks' });
    await p.evaluate((v) => (window as unknown as WorkloadWindow).recorderBench.start(v), variant);
    // A visitor's mouse moves and clicks once, on every page alike, before the measured window:
    // posthog-js holds a recording that has seen no interaction and drops it at stop (a tab nobody
    // touched), so without one it would upload nothing.
    for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased']) {
      await p.send('Input.dispatchMouseEvent', { type, x: 20, y: 20, button: type === 'mouseMoved' ? 'none' : 'left', clickCount: type === 'mouseMoved' ? 0 : 1 });
    }
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
    await sleep(SETTLE_MS);
    const taskMs = (await taskDurationMs(p)) - before - idleRate * (Date.now() - windowStart);
    const longTasks = (await p.evaluate(() => (window as unknown as WorkloadWindow).bench.longTasks)).filter((t) => t.start + t.duration >= start).length;
    // What the capture recorded, once uploaded: proof that it ran.
    const sessionId = await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.stop());
    return {
      fetchSyncMs: fetchSync,
      consoleSyncMs: consoleSync,
      fetchCpuMs: fetchCpu,
      consoleCpuMs: consoleCpu,
      taskMs,
      longTasks,
      recorded: variant === 'none' ? NOTHING_RECORDED : await recorded(sessionId),
    };
  } finally {
    await p.close();
  }
}

/**
 * Why a run of `variant` does not show a recording that ran, or undefined when it does: the
 * recorder uploaded rrweb events, and with capture, console entries and entries of the workload's
 * requests.
 */
function notRecorded(variant: Variant, run: Run): string | undefined {
  if (variant === 'none') return undefined;
  const { rrwebEvents, consoleEntries, networkEntries } = run.recorded;
  if (rrwebEvents === 0) return 'no recording was uploaded';
  const capture = variant === 'capture' || variant === 'posthog-capture';
  if (capture && consoleEntries === 0) return 'the recording holds no console entry';
  if (capture && networkEntries === 0) return `the recording holds no entry of the ${REQUESTS} requests`;
  return undefined;
}

/** The recorder scenario's table, and a line per column left out (and why). */
export interface RecorderCaptureResult {
  table: string;
  notes: string[];
}

/**
 * Runs every variant on {@link RUNS} fresh pages each (alternating order); returns the table. A
 * posthog-js column whose page fails or whose recording does not show that it ran is left out; one
 * of ours is an error.
 */
export async function runRecorderCapture(rig: RecorderRig): Promise<RecorderCaptureResult> {
  const variants = rig.posthog === undefined ? OUR_VARIANTS : [...OUR_VARIANTS, ...POSTHOG_VARIANTS];
  const runs = new Map<Variant, Run[]>(variants.map((v) => [v, []]));
  const leftOut = new Map<Variant, string>();
  for (let round = 0; round < RUNS; round++) {
    const order = (round % 2 === 0 ? variants : [...variants].reverse()).filter((v) => !leftOut.has(v));
    for (const variant of order) {
      process.stdout.write(`recorder scenario ${round + 1}/${RUNS}: ${LABELS[variant]}… `);
      let run: Run;
      try {
        run = await runOnce(rig, variant, round);
      } catch (error) {
        if (!isPosthog(variant)) throw error;
        leftOut.set(variant, `its page failed: ${error instanceof Error ? error.message : String(error)}`);
        console.log(`left out: ${leftOut.get(variant)}`);
        continue;
      }
      const { rrwebEvents, consoleEntries, networkEntries } = run.recorded;
      console.log(
        `fetch ×${REQUESTS} ${run.fetchCpuMs.toFixed(2)} ms CPU (${run.fetchSyncMs.toFixed(2)} wall), console ×${CONSOLE_CALLS} ${run.consoleCpuMs.toFixed(2)} ms CPU (${run.consoleSyncMs.toFixed(2)} wall), ` +
          `main thread ${run.taskMs.toFixed(1)} ms, ${run.longTasks} long task(s); recorded ${rrwebEvents} rrweb events, ${consoleEntries} console and ${networkEntries} network entries`,
      );
      const why = notRecorded(variant, run);
      if (why !== undefined) {
        if (!isPosthog(variant)) throw new Error(`${LABELS[variant]}: ${why}`);
        leftOut.set(variant, why);
        console.log(`left out: ${why}`);
        continue;
      }
      runs.get(variant)!.push(run);
    }
  }
  const shown = variants.filter((v) => !leftOut.has(v));
  const cell = (variant: Variant, pick: (run: Run) => number, digits: number) => median(runs.get(variant)!.map(pick)).toFixed(digits);
  const row = (label: string, pick: (run: Run) => number, digits: number) => `| ${label} | ${shown.map((v) => cell(v, pick, digits)).join(' | ')} |`;
  const table = [
    `| ${MUTATION_TASKS * MUTATIONS_PER_TASK} DOM mutations, ${REQUESTS} fetch() calls, ${CONSOLE_CALLS} console.log() calls; medians of ${RUNS} fresh pages | ${shown.map((v) => LABELS[v]).join(' | ')} |`,
    `|---|${shown.map(() => '---:').join('|')}|`,
    row(`${REQUESTS} fetch() calls issued in one task: main-thread CPU of that task (ms)`, (r) => r.fetchCpuMs, 2),
    row(`the same, wall time of the loop (ms)`, (r) => r.fetchSyncMs, 2),
    row(`${CONSOLE_CALLS} console.log() calls in one task: main-thread CPU of that task (ms)`, (r) => r.consoleCpuMs, 2),
    row(`the same, wall time of the loop (ms)`, (r) => r.consoleSyncMs, 2),
    row(`main-thread CPU over the workload + ${SETTLE_MS / 1000} s, less idle (ms)`, (r) => r.taskMs, 1),
    row('long tasks (> 50 ms) from the workload on', (r) => r.longTasks, 0),
    row('rrweb events in the uploaded recording', (r) => r.recorded.rrwebEvents, 0),
    row(`console entries recorded (ours: capped at 50/s)`, (r) => r.recorded.consoleEntries, 0),
    row(`network entries recorded of the ${REQUESTS} requests`, (r) => r.recorded.networkEntries, 0),
  ].join('\n');
  return { table, notes: [...leftOut].map(([variant, why]) => `Left out: ${LABELS[variant]}, because ${why}.`) };
}

/**
 * Where the main thread's time goes in the task that issues the {@link REQUESTS} requests, on a page
 * of `variant`: CPU profiles (50 µs sampling) of that task on one fresh page, `rounds` times after
 * one unprofiled round (compiled code paths), self time per function summed over the rounds.
 */
export async function profileRequestTask(rig: RecorderRig, variant: Variant, resolve: Resolver, rounds = 10): Promise<{ spots: HotSpot[]; busyMs: number }> {
  const path = `/recorder-${variant}-profile.html`;
  await setUpPage(rig, variant, path);
  const p = await rig.browser.newPage(`${rig.web.url}${path}`);
  try {
    await p.waitFor(() => 'recorderBench' in window, 30_000);
    await p.evaluate((v) => (window as unknown as WorkloadWindow).recorderBench.start(v), variant);
    const self = new Map<string, number>();
    for (let round = 0; round <= rounds; round++) {
      const stop = round === 0 ? undefined : await startProfile(p);
      await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.issueRequests());
      const profile = await stop?.();
      await p.evaluate(() => (window as unknown as WorkloadWindow).recorderBench.settle());
      // The capture's queue is drained when the page is idle: before the next round.
      await sleep(1_500);
      if (profile === undefined) continue;
      for (const spot of hotSpots(profile, resolve).spots) self.set(spot.where, (self.get(spot.where) ?? 0) + spot.selfMs);
    }
    const spots = [...self].map(([where, selfMs]) => ({ where, selfMs })).sort((a, b) => b.selfMs - a.selfMs);
    return { spots, busyMs: spots.reduce((sum, spot) => sum + spot.selfMs, 0) };
  } finally {
    await p.close();
  }
}

/**
 * What the page's fetch costs per call on a page of our `variant` over the fetch saved before
 * recording started: the median of `rounds` tasks of {@link REQUESTS} calls each way, alternating,
 * on one page (the machine's noise falls on both alike), µs per call.
 */
export async function fetchWrapperCost(rig: RecorderRig, variant: 'recorder' | 'capture', rounds = 41): Promise<{ wrappedMicros: number; bareMicros: number }> {
  const path = `/recorder-${variant}-compare.html`;
  await setUpPage(rig, variant, path);
  const p = await rig.browser.newPage(`${rig.web.url}${path}`);
  try {
    await p.waitFor(() => 'recorderBench' in window, 30_000);
    await p.evaluate((v) => (window as unknown as WorkloadWindow).recorderBench.start(v), variant);
    await sleep(1_000);
    const { wrapped, bare } = await p.evaluate((n) => (window as unknown as WorkloadWindow).recorderBench.compareFetch(n), rounds);
    return { wrappedMicros: (median(wrapped) / REQUESTS) * 1000, bareMicros: (median(bare) / REQUESTS) * 1000 };
  } finally {
    await p.close();
  }
}

/** Answers the workload's requests on the benchmark's static server; true when it did. */
export function answerBenchApi(path: string, res: import('node:http').ServerResponse, headers: Record<string, string>): boolean {
  if (path !== BENCH_API_PATH) return false;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end('{"ok":true,"items":[1,2,3]}');
  return true;
}
