// Start-up cost of the client benchmark: the main thread's work from the client's script start to
// the client taking events (ours: `createAnalytics()` returned; posthog-js: `init()` returned), and
// to the client being ready (ours: its delivery core answered; posthog-js: its `loaded` callback),
// read from a Chromium trace: every top-level task of the page's main thread, clipped to the
// window between two `performance.mark`s the page sets. No DevTools command reaches the page while
// it starts, so no polling or instrumentation lands in the window. Each task's CPU time is read
// too: on a machine with 2 cores, the worker starting beside the page, and the browser's own
// processes, stretch the wall time of the page's tasks.
//
// Pages: one without any client (what the page costs anyway), the floor (floor.ts: a visitor id
// from localStorage and a worker that answers, the least a worker-based client does), ours served
// from its build (worker.js beside the facade), ours bundled by esbuild into one file as an app may
// do (the worker file is then not deployed and the inline worker starts), and posthog-js.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { BenchServer } from './analytics-server.js';
import type { CdpBrowser } from './cdp.js';
import { floorStartupScript } from './floor.js';
import { benchDocument } from './pages.js';
import { posthogOptions } from './posthog.js';
import { type Resolver, sourceMapResolver } from './profile.js';
import type { ScenarioRow } from './delivery-scenarios.js';
import type { StaticServer } from '../../test-support/browser/static-server.js';

/** What the start-up measurement runs on. */
export interface StartupRig {
  browser: CdpBrowser;
  web: StaticServer;
  server: BenchServer;
  /** Directory served at `/dist/client/` (the client build). */
  clientDir: string;
  /** posthog-js capture endpoint. */
  captureUrl: string;
  headers: Record<string, string>;
}

/** One page of the measurement. */
export type StartupPage = 'empty' | 'floor' | 'ours-build' | 'ours-esbuild' | 'posthog';
export const STARTUP_PAGES: readonly StartupPage[] = ['empty', 'floor', 'ours-build', 'ours-esbuild', 'posthog'];

/** The main thread's work in the window. */
export interface StartupResult {
  /** CPU time of the main thread's tasks from the script's start to the client taking events, ms. */
  createdCpuMs: number;
  /** Their wall time, ms. */
  createdBusyMs: number;
  /** Wall time of the main thread's tasks in the window, ms. */
  busyMs: number;
  /** CPU time of those tasks (their share in the window), ms. */
  cpuMs: number;
  /** The window's length, ms (script start to ready). */
  windowMs: number;
  /** With `detail`: each task of the window (≥ 0.5 ms), with the trace events that filled it. */
  tasks: string[];
  /** With `detail`: the functions that took most of the main thread's samples in the window, ms each. */
  hotFunctions: string[];
  /** With `detail`: the same, up to the client taking events. */
  hotFunctionsCreated: string[];
}

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  /** Thread (CPU) time of a complete event, µs. */
  tdur?: number;
  pid: number;
  tid: number;
  id?: string;
  args?: { data?: Record<string, unknown> };
}

const START_MARK = 'sa-bench-script-start';
const READY_MARK = 'sa-bench-ready';
const CREATED_MARK = 'sa-bench-created';
const TASK_NAMES = new Set(['ThreadControllerImpl::RunTask', 'RunTask']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const urlPath = (url: unknown): string => (typeof url === 'string' ? url.replace(/^https?:\/\/[^/]+/, '') : '');

/** The app bundle's path per client build: made once, then every load of the page reuses it. */
const appBundles = new Map<string, Promise<string>>();

/** The esbuild bundle of `import { createAnalytics } from 'service-analytics'`, one file, as an app may build it. */
function appBundle(clientDir: string): Promise<string> {
  let bundle = appBundles.get(clientDir);
  if (bundle === undefined) appBundles.set(clientDir, (bundle = writeAppBundle(clientDir)));
  return bundle;
}

async function writeAppBundle(clientDir: string): Promise<string> {
  const result = await build({
    stdin: { contents: `import { createAnalytics } from './index.js';\nwindow.createAnalytics = createAnalytics;\n`, resolveDir: clientDir, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    write: false,
    logLevel: 'error',
  });
  await mkdir(join(clientDir, 'app'), { recursive: true });
  await writeFile(join(clientDir, 'app', 'app.js'), result.outputFiles[0]!.text);
  return '/dist/client/app/app.js';
}

function html(kind: StartupPage, config: Record<string, unknown>, appBundle: string, captureUrl: string): string {
  const start = `<script>performance.mark('${START_MARK}');</script>`;
  const ready = `performance.mark('${READY_MARK}')`;
  const created = `performance.mark('${CREATED_MARK}')`;
  switch (kind) {
    case 'empty':
      return benchDocument(`${start}<script>addEventListener('load', () => { ${created}; ${ready}; });</script>`);
    case 'floor':
      return benchDocument(`${start}${floorStartupScript(config as { endpoint: string; apiKey: string; projectId: string }, created, ready)}`);
    case 'ours-build':
      return benchDocument(`${start}<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
${created};
analytics.getDeliveryStats().then(() => ${ready});
</script>`);
    case 'ours-esbuild':
      return benchDocument(`${start}<script type="module">
import '${appBundle}';
const analytics = window.createAnalytics(${JSON.stringify(config)});
${created};
analytics.getDeliveryStats().then(() => ${ready});
</script>`);
    case 'posthog':
      return benchDocument(`${start}<script src="/bench/posthog.js"></script>
<script>posthog.init('phc_client_benchmark', { ...${JSON.stringify(posthogOptions(captureUrl))}, loaded: () => ${ready} }); ${created};</script>`);
  }
}

/** Loads `url` in a fresh page with tracing on; returns the trace. */
async function traceLoad(browser: CdpBrowser, url: string, detail: boolean, waitMs: number): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  const offData = browser.on('Tracing.dataCollected', (params) => void events.push(...(params.value as TraceEvent[])));
  let offComplete = (): void => undefined;
  const complete = new Promise<void>((resolve) => {
    offComplete = browser.on('Tracing.tracingComplete', () => resolve());
  });
  const page = await browser.newPage('about:blank');
  try {
    await browser.send('Tracing.start', {
      transferMode: 'ReportEvents',
      traceConfig: {
        recordMode: 'recordAsMuchAsPossible',
        // The figures need the top-level tasks only; more categories cost the page time of their own.
        includedCategories: ['__metadata', 'toplevel', 'blink.user_timing', ...(detail ? ['devtools.timeline', 'disabled-by-default-v8.cpu_profiler'] : [])],
      },
    });
    await page.send('Page.navigate', { url });
    await sleep(waitMs);
    await browser.send('Tracing.end');
    await complete;
    return events;
  } finally {
    offData();
    offComplete();
    await page.close();
  }
}

/** The main thread's tasks in the window between the page's two marks. */
export function startupWork(events: readonly TraceEvent[], detail = false, resolve: Resolver = () => undefined): StartupResult {
  const start = events.find((e) => e.name === START_MARK);
  const ready = events.find((e) => e.name === READY_MARK && e.pid === start?.pid);
  const created = events.find((e) => e.name === CREATED_MARK && e.pid === start?.pid);
  if (start === undefined || ready === undefined || created === undefined) {
    throw new Error(`the trace has no ${start === undefined ? START_MARK : ready === undefined ? READY_MARK : CREATED_MARK} mark`);
  }
  const from = start.ts;
  const to = ready.ts;
  const onThread = events.filter((e) => e.pid === start.pid && e.tid === start.tid && e.ph === 'X' && e.dur !== undefined);
  const tasks = onThread.filter((e) => TASK_NAMES.has(e.name)).sort((a, b) => a.ts - b.ts);
  let busy = 0;
  let cpu = 0;
  let createdBusy = 0;
  let createdCpu = 0;
  // A task nested in another (the scheduler's and Blink's name for one task) is counted once.
  let coveredUntil = -Infinity;
  const lines: string[] = [];
  for (const task of tasks) {
    const s = Math.max(task.ts, from, coveredUntil);
    const e = Math.min(task.ts + task.dur!, to);
    coveredUntil = Math.max(coveredUntil, task.ts + task.dur!);
    if (e <= s) continue;
    busy += e - s;
    const taskCpu = (task.tdur ?? task.dur!) * ((e - s) / Math.max(1, task.dur!));
    cpu += taskCpu;
    // The part before the client took events (the task that returned from createAnalytics ends
    // after the mark: it is counted up to the mark).
    const ce = Math.min(e, created.ts);
    if (ce > s) {
      createdBusy += ce - s;
      createdCpu += (task.tdur ?? task.dur!) * ((ce - s) / Math.max(1, task.dur!));
    }
    if (detail && e - s >= 500) {
      const inside = onThread
        .filter((c) => !TASK_NAMES.has(c.name) && c.ts >= task.ts && c.ts + c.dur! <= task.ts + task.dur!)
        .filter((c) => urlPath(c.args?.data?.url) !== '' || /compile|evaluate|FunctionCall|ParseHTML|Layout|GC/i.test(c.name))
        .sort((a, b) => b.dur! - a.dur!)
        .slice(0, 3)
        .map((c) => `${c.name} ${urlPath(c.args?.data?.url)} ${(c.dur! / 1000).toFixed(1)}`.replace(/ {2,}/g, ' '));
      lines.push(`+${((s - from) / 1000).toFixed(1)} ms: ${((e - s) / 1000).toFixed(1)} ms wall, ${(taskCpu / 1000).toFixed(1)} ms CPU  ${inside.join(' | ')}`);
    }
  }
  return { createdCpuMs: createdCpu / 1000, createdBusyMs: createdBusy / 1000, busyMs: busy / 1000, cpuMs: cpu / 1000, windowMs: (to - from) / 1000, tasks: lines,
    hotFunctions: detail ? hotFunctions(events, start, resolve, from, to) : [],
    hotFunctionsCreated: detail ? hotFunctions(events, start, resolve, from, created.ts) : [],
  };
}

/**
 * Self time per function from V8's sampling profiler in the trace, main thread only, samples from
 * `from` to `to` (trace clock, µs), top 15; the client build's functions named through its source maps.
 */
function hotFunctions(events: readonly TraceEvent[], main: TraceEvent, resolve: Resolver, from: number, to: number): string[] {
  const profileEvents = events.filter((e) => e.name === 'Profile' && e.pid === main.pid && e.tid === main.tid);
  const profiles = new Set(profileEvents.map((e) => e.id));
  // A sample's time: the profile's start plus the deltas so far, chunk after chunk.
  const clock = new Map(profileEvents.map((e) => [e.id, Number((e.args?.data as { startTime?: number } | undefined)?.startTime ?? e.ts)]));
  const names = new Map<number, string>();
  const selfUs = new Map<string, number>();
  for (const event of events) {
    // Profile ids are per process: the browser's other renderers have the same ones.
    if (event.name !== 'ProfileChunk' || event.pid !== main.pid || !profiles.has(event.id)) continue;
    const data = (event.args?.data ?? {}) as {
      cpuProfile?: { nodes?: Array<{ id: number; callFrame: { functionName: string; url?: string; lineNumber?: number; columnNumber?: number } }>; samples?: number[] };
      timeDeltas?: number[];
    };
    for (const { id, callFrame: f } of data.cpuProfile?.nodes ?? []) {
      const original = f.url === undefined ? undefined : resolve(f.url, f.lineNumber ?? 0, f.columnNumber ?? 0);
      names.set(id, original ?? `${f.functionName || '(anonymous)'} ${urlPath(f.url)}:${f.lineNumber ?? ''}:${f.columnNumber ?? ''}`);
    }
    const samples = data.cpuProfile?.samples ?? [];
    let at = clock.get(event.id) ?? 0;
    for (let i = 0; i < samples.length; i++) {
      const delta = data.timeDeltas?.[i] ?? 0;
      at += delta;
      if (at < from || at > to) continue;
      const name = names.get(samples[i]!) ?? String(samples[i]);
      selfUs.set(name, (selfUs.get(name) ?? 0) + delta);
    }
    clock.set(event.id, at);
  }
  return [...selfUs]
    .filter(([name]) => !name.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([name, us]) => `${(us / 1000).toFixed(1)} ms  ${name}`);
}

/** Loads one page kind once and measures its start-up; `detail` adds the task list and hot functions. */
export async function measureStartup(rig: StartupRig, kind: StartupPage, round: number, detail = false): Promise<StartupResult> {
  const project = await rig.server.createProject();
  const config = { apiKey: project.writeKey, projectId: project.id, endpoint: rig.server.url };
  const path = `/startup-${kind}-${round}.html`;
  rig.web.setPage(path, { html: html(kind, config, await appBundle(rig.clientDir), rig.captureUrl), headers: rig.headers });
  // On a busy machine a page may not be ready within the first trace's window: load it again with a
  // longer one rather than lose the run.
  for (let attempt = 1; ; attempt++) {
    try {
      return startupWork(await traceLoad(rig.browser, `${rig.web.url}${path}`, detail, 4_000 * attempt), detail, sourceMapResolver(rig.clientDir));
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

/** Medians over `rounds` loads of each page kind, kinds alternating. */
export async function runStartup(rig: StartupRig, rounds: number): Promise<Map<StartupPage, StartupResult>> {
  const runs = new Map<StartupPage, StartupResult[]>(STARTUP_PAGES.map((k) => [k, []]));
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 === 0 ? STARTUP_PAGES : [...STARTUP_PAGES].reverse()) runs.get(kind)!.push(await measureStartup(rig, kind, round));
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return new Map(
    [...runs].map(([kind, list]) => [
      kind,
      {
        createdCpuMs: median(list.map((r) => r.createdCpuMs)),
        createdBusyMs: median(list.map((r) => r.createdBusyMs)),
        busyMs: median(list.map((r) => r.busyMs)),
        cpuMs: median(list.map((r) => r.cpuMs)), windowMs: median(list.map((r) => r.windowMs)), tasks: [], hotFunctions: [], hotFunctionsCreated: [] },
    ]),
  );
}

/** The scenario table's rows: ours beside posthog-js, the page without a client named in the text. */
export function startupRows(results: ReadonlyMap<StartupPage, StartupResult>, rounds: number): ScenarioRow[] {
  const cell = (kind: StartupPage, part: 'created' | 'ready'): string => {
    const r = results.get(kind)!;
    return part === 'created' ? `${r.createdCpuMs.toFixed(1)} ms CPU (${r.createdBusyMs.toFixed(0)} ms wall)` : `${r.cpuMs.toFixed(1)} ms CPU (${r.busyMs.toFixed(0)} ms wall)`;
  };
  const empty = results.get('empty')!;
  return [
    {
      scenario:
        `main-thread work from the script's start to the client taking events (ours: \`createAnalytics()\` returned, events tracked from then on are kept until the core takes them; ` +
        `posthog-js: \`init()\` returned), CPU time of the page's main-thread tasks, wall time in brackets, median of ${rounds} fresh loads; the same page without any client ` +
        `(to its \`load\`): ${empty.cpuMs.toFixed(1)} ms CPU (${empty.busyMs.toFixed(0)} ms wall)`,
      ours: cell('ours-build', 'created'),
      posthog: cell('posthog', 'created'),
    },
    {
      scenario: `the same, to the client ready (ours: its delivery core in the worker answered; posthog-js: \`loaded\`)`,
      ours: cell('ours-build', 'ready'),
      posthog: cell('posthog', 'ready'),
    },
    {
      scenario:
        'the floor of both: a page that reads its visitor id from localStorage and starts a worker (taking events), which answers (ready); no facade, no queue, no unload path',
      ours: `${cell('floor', 'created')}; ready: ${cell('floor', 'ready')}`,
      posthog: '–',
    },
    {
      scenario: 'both, ours bundled by esbuild into one file with the app (worker.js not deployed: the shipped worker fails to load and the inline worker starts)',
      ours: `${cell('ours-esbuild', 'created')}; ready: ${cell('ours-esbuild', 'ready')}`,
      posthog: '–',
    },
  ];
}
