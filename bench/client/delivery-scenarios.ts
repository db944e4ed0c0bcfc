// Delivery scenarios of the client benchmark, ours with its default settings beside posthog-js:
// what arrives of the last events of a visit when the page navigates away or the tab is closed,
// and a 10,000-event burst with the defaults (above maxQueueSize). Counted by the server (ours)
// and by the stand-in capture endpoint (posthog-js). Printed as a table; aims are not enforced.
import type { BenchServer } from './analytics-server.js';
import type { CdpBrowser, CdpPage } from './cdp.js';
import { type BenchWindow, ourPage, posthogPage } from './pages.js';
import { type CaptureEndpoint, posthogOptions } from './posthog.js';
import type { StaticServer } from '../../examples/browser-tests/static-server.js';

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
type Leave = 'navigate' | 'close';

/** One row of the scenarios table: each client's figure. */
export interface ScenarioRow {
  scenario: string;
  ours: string;
  posthog: string;
}

const UNLOAD_EVENTS = 500;
const BURST = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a page of `client` with its defaults; returns it and a counter of what arrived by name. */
async function open(rig: ScenarioRig, client: Client, path: string): Promise<{ page: CdpPage; arrived: (name: string) => Promise<number> }> {
  let arrived: (name: string) => Promise<number>;
  if (client === 'posthog') {
    rig.web.setPage(path, { html: posthogPage('/bench/posthog.js', posthogOptions(rig.capture.url)), headers: rig.headers });
    rig.capture.reset();
    arrived = async (name) => rig.capture.count(name);
  } else {
    const project = await rig.server.createProject();
    // Every delivery option at its default; only automatic page views are off, to count one event kind.
    const config = { apiKey: project.writeKey, projectId: project.id, endpoint: rig.server.url, enableAutoPageTracking: false };
    rig.web.setPage(path, { html: ourPage(config), headers: rig.headers });
    arrived = async (name) => {
      let count = 0;
      let cursor: string | undefined;
      for (;;) {
        const page = await rig.server.store.queryEvents({ projectId: project.id, eventType: name, limit: 1000, cursor });
        count += page.events.length;
        if (page.nextCursor === null) return count;
        cursor = page.nextCursor;
      }
    };
  }
  const page = await rig.browser.newPage(`${rig.web.url}${path}`);
  await page.waitFor(() => (window as unknown as Partial<BenchWindow>).bench?.started === true, 30_000);
  await page.evaluate(() => (window as unknown as BenchWindow).bench.ready());
  return { page, arrived };
}

/** Waits until `count()` reaches `target` or stops moving for 3 s (at most 30 s). */
async function settle(count: () => Promise<number>, target: number): Promise<number> {
  let last = -1;
  let since = Date.now();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const n = await count();
    if (n >= target || Date.now() > deadline) return n;
    if (n !== last) {
      last = n;
      since = Date.now();
    } else if (Date.now() - since > 3_000) return n;
    await sleep(250);
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

/** A 10,000-event burst in one task with the defaults: per-call cost, long tasks, what arrives. */
async function burst(rig: ScenarioRig, client: Client): Promise<{ perCallMicros: number; longTasks: number; longestMs: number; arrived: number }> {
  const { page, arrived } = await open(rig, client, `/scenario-burst-${client}.html`);
  try {
    await page.evaluate(() => (window as unknown as BenchWindow).bench.sample(10, 100, 'warmup', 'warmup'));
    await sleep(1_000);
    const run = await page.evaluate(({ n }) => (window as unknown as BenchWindow).bench.burst(n, 'burst_defaults', 'burst'), { n: BURST });
    await sleep(2_000);
    const tasks = (await page.evaluate(() => (window as unknown as BenchWindow).bench.longTasks)).filter((t) => t.start + t.duration >= run.start);
    const count = await settle(() => arrived('burst_defaults'), BURST);
    return { perCallMicros: (run.withPost / BURST) * 1000, longTasks: tasks.length, longestMs: Math.max(0, ...tasks.map((t) => t.duration)), arrived: count };
  } finally {
    await page.close();
  }
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
  const bursts = await cell(async (client) => {
    const b = await burst(rig, client);
    return `${b.perCallMicros.toFixed(2)} µs per call, ${b.longTasks} long task(s)${b.longTasks > 0 ? ` (longest ${b.longestMs.toFixed(0)} ms)` : ''}, ${b.arrived} arrived`;
  });
  rows.push({ scenario: `${BURST.toLocaleString('en-US')} track() calls in one task, default settings (ours: maxQueueSize 1000 keeps the newest 1000)`, ...bursts });
  return rows;
}

/** The rows as a markdown table. */
export function scenarioTable(rows: readonly ScenarioRow[]): string {
  const lines = ['| scenario | ours, default settings | posthog-js (automatic features off) |', '|---|---:|---:|'];
  for (const row of rows) lines.push(`| ${row.scenario} | ${row.ours} | ${row.posthog} |`);
  return lines.join('\n');
}
