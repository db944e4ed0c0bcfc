// Delivery scenarios of the client benchmark, ours with its default settings beside posthog-js:
// what arrives of the last events of a visit when the page navigates away or the tab is closed,
// what arrives of 2,000 events through a proxy that faults 30% of requests (ours also with the
// options for unreliable networks), and a 10,000-event burst with the defaults (above maxQueueSize;
// its wall time, its main-thread CPU time, and the same burst on the floor page of floor.ts), and
// what a client's unload path costs the main thread inside `pagehide` with 500 events to send.
// Counted by the server (ours, the floor) and by the stand-in capture endpoint (posthog-js).
// Printed as a table; aims are not enforced.
import type { BenchServer } from './analytics-server.js';
import type { CdpBrowser, CdpPage } from './cdp.js';
import { floorPage } from './floor.js';
import { type BenchWindow, benchDocument, ourPage, posthogPage } from './pages.js';
import { type CaptureEndpoint, posthogOptions } from './posthog.js';
import type { StaticServer } from '../../test-support/browser/static-server.js';
import { startFaultProxy } from '../../test-support/fault-proxy.js';

/** What the scenarios run on: the benchmark's rig. */
export interface ScenarioRig {
  browser: CdpBrowser;
  web: StaticServer;
  server: BenchServer;
  capture: CaptureEndpoint;
  /** Response headers of every page (cross-origin isolation). */
  headers: Record<string, string>;
}

type Client = 'ours' | 'posthog';
/** The burst also runs on the floor (floor.ts): what any worker-based client costs the same page. */
type BurstClient = Client | 'floor';
type Leave = 'navigate' | 'close';

/** One row of the scenarios table: each client's figure. */
export interface ScenarioRow {
  scenario: string;
  ours: string;
  posthog: string;
}

const UNLOAD_EVENTS = 500;
const BURST = 10_000;
const BURST_RUNS = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Opens a page of `client` with its defaults (ours: plus `options`), sending to `via` when given
 * (a proxy in front of the server); returns it and a counter of what arrived by name.
 */
async function open(
  rig: ScenarioRig,
  client: BurstClient,
  path: string,
  via?: { ours: string; posthog: string },
  options: Record<string, unknown> = {},
  pageOptions: { withoutFetchLater?: boolean } = {},
): Promise<{ page: CdpPage; arrived: (name: string) => Promise<number> }> {
  let arrived: (name: string) => Promise<number>;
  if (client === 'posthog') {
    rig.web.setPage(path, { html: posthogPage('/bench/posthog.js', posthogOptions(via?.posthog ?? rig.capture.url)), headers: rig.headers });
    rig.capture.reset();
    arrived = async (name) => rig.capture.count(name);
  } else if (client === 'floor') {
    const project = await rig.server.createProject();
    rig.web.setPage(path, { html: benchDocument(floorPage({ endpoint: rig.server.url, apiKey: project.writeKey, projectId: project.id })), headers: rig.headers });
    arrived = (name) => countArrived(rig, project.id, name);
  } else {
    const project = await rig.server.createProject();
    // Every delivery option at its default; only automatic page views are off, to count one event kind.
    const config = { apiKey: project.writeKey, projectId: project.id, endpoint: via?.ours ?? rig.server.url, enableAutoPageTracking: false, ...options };
    rig.web.setPage(path, { html: ourPage(config, pageOptions), headers: rig.headers });
    arrived = (name) => countArrived(rig, project.id, name);
  }
  const page = await rig.browser.newPage(`${rig.web.url}${path}`);
  await page.waitFor(() => (window as unknown as Partial<BenchWindow>).bench?.started === true, 30_000);
  await page.evaluate(() => (window as unknown as BenchWindow).bench.ready());
  return { page, arrived };
}

/** Events named `name` the server stored for the project. */
async function countArrived(rig: ScenarioRig, projectId: string, name: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await rig.server.store.queryEvents({ projectId, eventType: name, limit: 1000, cursor });
    count += page.events.length;
    if (page.nextCursor === null) return count;
    cursor = page.nextCursor;
  }
}

/** Waits until `count()` reaches `target` or stops moving for `quietMs` (at most `maxMs`). */
async function settle(count: () => Promise<number>, target: number, { quietMs = 3_000, maxMs = 30_000, pollMs = 250 } = {}): Promise<number> {
  let last = -1;
  let since = Date.now();
  const deadline = Date.now() + maxMs;
  for (;;) {
    const n = await count();
    if (n >= target || Date.now() > deadline) return n;
    if (n !== last) {
      last = n;
      since = Date.now();
    } else if (Date.now() - since > quietMs) return n;
    await sleep(pollMs);
  }
}

/** 500 realistic events in one task, then the page leaves: how many arrive. */
async function unload(rig: ScenarioRig, client: Client, leave: Leave): Promise<number> {
  const { page, arrived } = await open(rig, client, `/scenario-unload-${client}-${leave}.html`);
  await page.evaluate(({ n }) => (window as unknown as BenchWindow).bench.trackRich('last_moment', n, 'unload'), { n: UNLOAD_EVENTS });
  if (leave === 'navigate') {
    await page.send('Page.navigate', { url: 'about:blank' });
    await sleep(1_000);
    await page.close();
  } else {
    await page.close();
  }
  return settle(() => arrived('last_moment'), UNLOAD_EVENTS);
}

const PAGE_HIDE_RUNS = 5;

/**
 * 500 realistic events, then `pagehide` after `delayMs`: at once (the next task), before the core
 * could have had any of them acknowledged or built into a body, is the most a client's unload path
 * has to do in `pagehide`; a second later is the common case. With `slowServer` (ours only), the
 * worker's requests reach the server through a proxy that holds each one 10 s, as on a slow
 * network: a second later nothing is acknowledged yet (beacon-form requests pass at once). Returns
 * the main thread's CPU time from just before that task to just after it, its wall time, and what
 * arrived once the page was closed after it (the event is dispatched by the page, which stays
 * until then: the worker's own sends deliver too, and the server's dedupe keeps each event once).
 */
async function pageHide(
  rig: ScenarioRig,
  client: Client,
  withoutFetchLater: boolean,
  delayMs: number,
  slowServer = false,
): Promise<{ cpuMs: number; wallMs: number; arrived: number }> {
  const proxy = slowServer
    ? await startFaultProxy({ target: rig.server.url, faultRate: 1, mix: { delay: 1 }, delayMs: 10_000, eligible: ({ method, path }) => method !== 'OPTIONS' && !path.includes('api_key=') })
    : undefined;
  const via = proxy === undefined ? undefined : { ours: proxy.url, posthog: rig.capture.url };
  const { page, arrived } = await open(rig, client, `/scenario-pagehide-${client}-${String(withoutFetchLater)}-${delayMs}-${String(slowServer)}.html`, via, {}, { withoutFetchLater });
  let closed = false;
  try {
    await page.send('Performance.enable', { timeDomain: 'threadTicks' });
    await page.evaluate(({ n }) => (window as unknown as BenchWindow).bench.trackRich('hidden_moment', n, 'pagehide'), { n: UNLOAD_EVENTS });
    if (delayMs > 0) await sleep(delayMs);
    const cpuBefore = await taskCpuMs(page);
    const wallMs = await page.evaluate(() => (window as unknown as BenchWindow).bench.pageHide());
    const cpuMs = (await taskCpuMs(page)) - cpuBefore;
    // Closed before counting: an armed deferred request goes when the page goes.
    closed = true;
    await page.close();
    return { cpuMs, wallMs, arrived: await settle(() => arrived('hidden_moment'), UNLOAD_EVENTS) };
  } finally {
    if (!closed) await page.close();
    await proxy?.close();
  }
}

/** {@link pageHide} on {@link PAGE_HIDE_RUNS} fresh pages, as one cell: medians and ranges. */
async function pageHideRuns(rig: ScenarioRig, client: Client, withoutFetchLater: boolean, delayMs: number, slowServer = false): Promise<string> {
  const runs: Array<Awaited<ReturnType<typeof pageHide>>> = [];
  for (let r = 0; r < PAGE_HIDE_RUNS; r++) runs.push(await pageHide(rig, client, withoutFetchLater, delayMs, slowServer));
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const range = (values: number[]): string => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
  const cpu = runs.map((r) => r.cpuMs);
  const wall = runs.map((r) => r.wallMs);
  return `CPU ${median(cpu).toFixed(1)} ms (${range(cpu)}), wall ${median(wall).toFixed(1)} ms (${range(wall)}); ${Math.min(...runs.map((r) => r.arrived))} / ${UNLOAD_EVENTS} arrived (fewest)`;
}

/** The options of ours for unreliable networks, as the README names them. */
const RELIABLE = { retryAttempts: 10, maxQueueSize: 20_000, discardAfterRetries: false };
const FAULTY_EVENTS = 2_000;

/** 2,000 realistic events in one task through a proxy that faults 30% of requests: how many arrive. */
async function faults(rig: ScenarioRig, client: Client, options: Record<string, unknown>, seed: number): Promise<number> {
  const proxyOptions = { faultRate: 0.3, seed, delayMs: [50, 300] as const, retryAfterSeconds: 1 };
  const ours = await startFaultProxy({ ...proxyOptions, target: rig.server.url });
  const posthog = await startFaultProxy({ ...proxyOptions, target: rig.capture.url });
  try {
    const { page, arrived } = await open(rig, client, `/scenario-faults-${client}-${seed}.html`, { ours: ours.url, posthog: posthog.url }, options);
    try {
      await page.evaluate(({ n }) => (window as unknown as BenchWindow).bench.trackRich('faulty', n, 'faults'), { n: FAULTY_EVENTS });
      // Retries with backoff take a while: wait longer for the count to stop moving (posthog-js retries for longer).
      return await settle(() => arrived('faulty'), FAULTY_EVENTS, { quietMs: 15_000, maxMs: 120_000, pollMs: 500 });
    } finally {
      await page.close();
    }
  } finally {
    await Promise.allSettled([ours.close(), posthog.close()]);
  }
}

/** The page's main-thread task time so far, ms (thread CPU time once Performance is enabled with threadTicks). */
async function taskCpuMs(page: CdpPage): Promise<number> {
  const { metrics } = await page.send<{ metrics: Array<{ name: string; value: number }> }>('Performance.getMetrics');
  return (metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0) * 1000;
}

/** A 10,000-event burst in one task with the defaults: per-call cost, long tasks, what arrives. */
async function burst(rig: ScenarioRig, client: BurstClient): Promise<{ perCallMicros: number; cpuMs: number; longTasks: number; longestMs: number; arrived: number }> {
  const { page, arrived } = await open(rig, client, `/scenario-burst-${client}.html`);
  try {
    await page.evaluate(() => (window as unknown as BenchWindow).bench.sample(10, 100, 'warmup', 'warmup'));
    // Task time in the main thread's CPU time (threadTicks): what the burst costs the page apart
    // from the time the thread waits for a core, which on 2 cores shared with the worker, the
    // browser and V8's background compilers is most of a fresh page's wall time.
    await page.send('Performance.enable', { timeDomain: 'threadTicks' });
    await sleep(1_000);
    const cpuBefore = await taskCpuMs(page);
    const run = await page.evaluate(({ n }) => (window as unknown as BenchWindow).bench.burst(n, 'burst_defaults', 'burst'), { n: BURST });
    const cpuMs = (await taskCpuMs(page)) - cpuBefore;
    await sleep(2_000);
    const tasks = (await page.evaluate(() => (window as unknown as BenchWindow).bench.longTasks)).filter((t) => t.start + t.duration >= run.start);
    const count = await settle(() => arrived('burst_defaults'), BURST);
    return { perCallMicros: (run.withPost / BURST) * 1000, cpuMs, longTasks: tasks.length, longestMs: Math.max(0, ...tasks.map((t) => t.duration)), arrived: count };
  } finally {
    await page.close();
  }
}

/** The burst on {@link BURST_RUNS} fresh pages, as one cell: medians, and in how many runs a long task. */
async function burstRuns(rig: ScenarioRig, client: BurstClient): Promise<string> {
  // A fresh page each: the first burst of a page runs partly in not yet optimised code, so single
  // runs vary by a factor of two or three on this machine; the median and the count are steadier.
  const runs: Array<Awaited<ReturnType<typeof burst>>> = [];
  for (let r = 0; r < BURST_RUNS; r++) runs.push(await burst(rig, client));
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const withLongTask = runs.filter((b) => b.longTasks > 0);
  return (
    `${median(runs.map((b) => b.perCallMicros)).toFixed(2)} µs per call (runs: ${runs.map((b) => b.perCallMicros.toFixed(2)).join(', ')}), ` +
    `CPU ${median(runs.map((b) => b.cpuMs)).toFixed(1)} ms (runs: ${runs.map((b) => b.cpuMs.toFixed(1)).join(', ')}), ` +
    `a long task in ${withLongTask.length} of ${BURST_RUNS} runs${withLongTask.length > 0 ? ` (longest ${Math.max(...withLongTask.map((b) => b.longestMs)).toFixed(0)} ms)` : ''}, ` +
    `${median(runs.map((b) => b.arrived))} arrived (median)`
  );
}

/** Runs every scenario for both clients; returns the table's rows. */
export async function runDeliveryScenarios(rig: ScenarioRig, clients: readonly Client[] = ['ours', 'posthog']): Promise<ScenarioRow[]> {
  const cell = async (f: (client: Client) => Promise<string>): Promise<Record<Client, string>> => {
    const out: Record<Client, string> = { ours: '–', posthog: '–' };
    for (const client of clients) {
      process.stdout.write(`scenario, ${client}… `);
      out[client] = await f(client);
      console.log(out[client]);
    }
    return out;
  };
  const rows: ScenarioRow[] = [];
  for (const leave of ['navigate', 'close'] as const) {
    const what = leave === 'navigate' ? 'the page navigates away' : 'the tab is closed';
    const result = await cell(async (client) => `${await unload(rig, client, leave)} / ${UNLOAD_EVENTS}`);
    rows.push({ scenario: `${UNLOAD_EVENTS} realistic events, then ${what}: arrived`, ...result });
  }
  for (const delayMs of [0, 1_000]) {
    const when = delayMs === 0 ? 'in the next task (nothing acknowledged or built into a body yet: each unload path sends all of them itself)' : 'a second later';
    const hidden = await cell((client) => pageHideRuns(rig, client, false, delayMs));
    rows.push({
      scenario: `${UNLOAD_EVENTS} realistic events, then \`pagehide\` ${when}: the main thread's CPU time over that task, its wall time; median and range of ${PAGE_HIDE_RUNS} fresh pages`,
      ...hidden,
    });
    if (clients.includes('ours')) {
      process.stdout.write('scenario, ours, without fetchLater… ');
      const plain = await pageHideRuns(rig, 'ours', true, delayMs);
      console.log(plain);
      rows.push({
        scenario: `the same without \`fetchLater\` (as in Firefox and Safari)${delayMs === 0 ? ': the beacon maps, encodes and gzips them on the main thread (its gzip loaded at this first use)' : ''}`,
        ours: plain,
        posthog: '–',
      });
    }
  }
  if (clients.includes('ours')) {
    for (const withoutFetchLater of [false, true]) {
      process.stdout.write(`scenario, ours, slow server${withoutFetchLater ? ', without fetchLater' : ''}… `);
      const slow = await pageHideRuns(rig, 'ours', withoutFetchLater, 1_000, true);
      console.log(slow);
      rows.push({
        scenario: withoutFetchLater
          ? 'the same without `fetchLater`: the beacon sends the body the worker built as it is'
          : `${UNLOAD_EVENTS} realistic events, then \`pagehide\` a second later, the server answering the worker after 10 s (a slow network: none acknowledged yet; the armed request carries them)`,
        ours: slow,
        posthog: '–',
      });
    }
  }
  const faultyDefaults = await cell(async (client) => `${await faults(rig, client, {}, 11)} / ${FAULTY_EVENTS}`);
  rows.push({
    scenario: `${FAULTY_EVENTS.toLocaleString('en-US')} events in one task, 30% of requests failing (5xx, resets, 429, lost answers), default settings: arrived (ours: maxQueueSize 1000 keeps the newest 1000 of a burst and reports the rest to onDiscard)`,
    ...faultyDefaults,
  });
  if (clients.includes('ours')) {
    process.stdout.write('scenario, ours, reliable options… ');
    const reliable = `${await faults(rig, 'ours', RELIABLE, 11)} / ${FAULTY_EVENTS}`;
    console.log(reliable);
    rows.push({ scenario: `the same, ours with retryAttempts 10, maxQueueSize 20000, discardAfterRetries false: arrived`, ours: reliable, posthog: '–' });
  }
  const bursts = await cell((client) => burstRuns(rig, client));
  rows.push({ scenario: `${BURST.toLocaleString('en-US')} track() calls in one task, default settings, ${BURST_RUNS} fresh pages (ours: maxQueueSize 1000 keeps the newest 1000); CPU: the main thread's task time in thread CPU time over the burst's task`, ...bursts });
  if (clients.includes('ours')) {
    process.stdout.write('scenario, floor, burst… ');
    const floor = await burstRuns(rig, 'floor');
    console.log(floor);
    rows.push({ scenario: `the floor of both, the same burst on ${BURST_RUNS} fresh pages: a page that pushes each call's object to an array and posts the task's array to a worker (it keeps all 10,000)`, ours: floor, posthog: '–' });
  }
  return rows;
}

/** The rows as a markdown table. */
export function scenarioTable(rows: readonly ScenarioRow[]): string {
  const lines = ['| scenario | ours, default settings | posthog-js (automatic features off) |', '|---|---:|---:|'];
  for (const row of rows) lines.push(`| ${row.scenario} | ${row.ours} | ${row.posthog} |`);
  return lines.join('\n');
}
