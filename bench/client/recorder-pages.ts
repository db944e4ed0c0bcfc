/**
 * The recorder scenario's pages (bench/client/recorder-capture.ts): one workload, the same on every
 * page, and the client part that starts and stops recording, ours or posthog-js's.
 */
import { benchDocument } from './pages.js';
import { POSTHOG_TOKEN } from './posthog.js';

/** The path the workload's requests go to; the benchmark's static server answers it (`answerBenchApi`). */
export const BENCH_API_PATH = '/bench/api';
/** The workload: requests issued in one task, console calls in one task, mutations in tasks of a hundred. */
export const REQUESTS = 200;
export const CONSOLE_CALLS = 500;
export const MUTATION_TASKS = 10;
export const MUTATIONS_PER_TASK = 100;

/** What the pages define. */
export interface WorkloadWindow {
  recorderBench: {
    start(variant: string): Promise<void>;
    mutate(): Promise<number>;
    /** Issues the requests in this task; returns its wall time (the answers are awaited by `settle`). */
    issueRequests(): number;
    settle(): Promise<void>;
    /** The console burst in this task; returns its wall time. */
    consoleBurst(): number;
    /** Stops recording (the final upload); returns the session id. */
    stop(): string;
    /** Wall times (ms) of tasks of the requests through the page's fetch and the one saved before recording, alternating (our pages only). */
    compareFetch(rounds: number): Promise<{ wrapped: number[]; bare: number[] }>;
  };
  bench: { longTasks: Array<{ start: number; duration: number }> };
}

/**
 * The workload, the same on every page; `client` (defined before it) starts and stops recording:
 * `client.start(variant)` resolves once capture has begun, `client.stop()` returns the session id.
 */
const WORKLOAD = `
const tick = () => new Promise((resolve) => setTimeout(resolve));
window.recorderBench = {
  start: (variant) => client.start(variant),
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
  stop: () => client.stop(),
  async compareFetch(rounds) {
    // Tasks of ${REQUESTS} calls through the page's fetch as it is now and through the one saved
    // before recording started, alternating; each task's wall time, answers awaited in between.
    const wrapped = [];
    const bare = [];
    for (let k = 0; k < rounds; k++) {
      for (const [f, times] of k % 2 === 0 ? [[window.fetch, wrapped], [nativeFetch, bare]] : [[nativeFetch, bare], [window.fetch, wrapped]]) {
        await tick();
        const pending = [];
        const t = performance.now();
        for (let i = 0; i < ${REQUESTS}; i++) pending.push(f('${BENCH_API_PATH}?i=' + i));
        times.push(performance.now() - t);
        await Promise.all(pending.map((p) => p.then((r) => r.text())));
      }
    }
    return { wrapped, bare };
  },
};
bench.started = true;
`;

/** Our client's page (`none` does not start the recorder). */
export function ourPage(config: Record<string, unknown>): string {
  return benchDocument(`<div id="box"></div>
<script type="module">
import { createAnalytics } from '/dist/client/index.js';
// The page's own fetch, before the recorder can wrap it (for compareFetch).
const nativeFetch = window.fetch;
const analytics = createAnalytics(${JSON.stringify(config)});
const client = {
  async start(variant) {
    if (variant === 'none') return;
    analytics.startRecording(variant === 'capture' ? { console: true, network: true } : undefined);
    // Capture has begun once the core holds the full snapshot.
    while ((await analytics.getDeliveryStats()).recordingQueued === 0) await new Promise((r) => setTimeout(r, 50));
  },
  stop() {
    analytics.stopRecording();
    return analytics.getSessionId();
  },
};
${WORKLOAD}
</script>`);
}

/**
 * posthog-js's page: recording starts when its remote config arrives from the stand-in. posthog-js
 * leaves network capture off on localhost and 127.0.0.1 unless `_forceAllowLocalhostNetworkCapture`
 * is set on its session recording (its switch for developing on localhost), which the capture
 * column sets: the benchmark's pages are served from 127.0.0.1.
 */
export function posthogPage(scriptUrl: string, options: Record<string, unknown>, capture: boolean): string {
  return benchDocument(`<div id="box"></div>
<script src="${scriptUrl}"></script>
<script>
posthog.init('${POSTHOG_TOKEN}', ${JSON.stringify(options)});
if (${capture}) posthog.sessionRecording._forceAllowLocalhostNetworkCapture = true;
const client = {
  async start() {
    const deadline = performance.now() + 20000;
    while (posthog.sessionRecording?.started !== true) {
      if (performance.now() > deadline) throw new Error('posthog-js did not start recording (status ' + posthog.sessionRecording?.status + ')');
      await new Promise((r) => setTimeout(r, 50));
    }
  },
  stop() {
    posthog.stopSessionRecording();
    return posthog.get_session_id();
  },
};
${WORKLOAD}
</script>`);
}
