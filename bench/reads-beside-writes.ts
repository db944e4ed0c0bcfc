// Reads beside writes on SQLite: `/healthz`, ingest and a dashboard panel's latency while nothing
// else runs, while the heaviest report runs again and again, and while a user is erased, side by
// side in one run on one generated project of N events over a year (bench/generate-project.ts),
// its daily rollups built first, so that the server's background keeps frequent filters ahead
// throughout, as it does in its first minutes on a file and after each midnight. Run by
// `npm run bench:server -- --reads[=N]` (default 1,000,000 events): it then measures only this and
// writes "## Reads beside writes" of bench/RESULTS.md. The aim (docs/decisions.md, "Reads off the
// request thread"): `/healthz` and ingest p99 within 2x of their idle values.
//
// The server is a `service-analytics-server start` process (the CLI, on the generated file); the
// load (8 lanes of 20-event batches), the probes of `/healthz` (every 20 ms) and of the
// dashboard's first panel (the last 7 days' daily series and totals, every 200 ms) and the reads
// come from this process, over HTTP. Each phase lasts the same time; the report phase keeps one report in
// flight at a time, the erasure phase erases one user once the load is under way.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { generateKey } from '../server/api-keys.js';
import { openStore } from '../server/store/open-store.js';
import { percentile, startLoad } from '../test-support/load-generator.js';
import { buildCli, startServerProcess } from '../test-support/server/cli-process.js';
import { generateIntoStore } from './generate-project.js';

const DAY_MS = 86_400_000;

interface Timed {
  status: number;
  ms: number;
}

async function timedFetch(url: string, init?: RequestInit): Promise<Timed> {
  const started = performance.now();
  try {
    const res = await fetch(url, init);
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

/** Probes `url` every `everyMs` until stopped; each probe waits for the last. */
function probe(url: string, everyMs: number, init?: RequestInit): { stop(): Promise<Timed[]> } {
  const results: Timed[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      results.push(await timedFetch(url, init));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return results;
    },
  };
}

interface PhaseResult {
  phase: string;
  eventsPerSec: number;
  ingestP50: number;
  ingestP99: number;
  ingestMax: number;
  healthP50: number;
  healthP99: number;
  healthMax: number;
  panelP50: number;
  panelP99: number;
  panelMax: number;
  reads: string;
}

const fmt = (ms: number) => (Number.isFinite(ms) ? ms.toFixed(ms < 10 ? 2 : 0) : '—');

/** A SQLite file holding one project's events, and what the phases need of it. */
interface Prepared {
  location: string;
  projectId: string;
  readKey: string;
  /** The end of the project's range (ms): reports cover the year before it. */
  end: number;
  events: number;
  /** How the file came to be, for the table's heading. */
  made: string;
}

/**
 * Runs the three phases on a generated project of `events` events (`existing` empty), or on each
 * SQLite file of `existing` (bench/generate-project.ts made them; its first project is measured,
 * and its heaviest user erased: the file changes), and returns the markdown of the section.
 */
export async function runReadsBesideWritesBench(options: { events: number | null; existing?: readonly string[]; phaseMs?: number; log: (line: string) => void }): Promise<string> {
  const tables: string[] = [];
  if (options.events !== null) {
    const dir = mkdtempSync(join(tmpdir(), 'reads-bench-'));
    try {
      const location = join(dir, 'reads.db');
      options.log(`reads bench: generating ${options.events.toLocaleString('en-US')} events over 365 days`);
      const generated = await generateIntoStore({ location, events: options.events, days: 365 });
      const made = `\`npm run bench:server -- --reads=${options.events}\`: one generated project of ${options.events.toLocaleString('en-US')} events over 365 days`;
      tables.push(await measure({ location, projectId: generated.projectId, readKey: generated.readKey, end: generated.end, events: options.events, made }, options));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  for (const location of options.existing ?? []) {
    const db = new Database(location, { readonly: true });
    const projectId = db.prepare('SELECT project_id FROM events LIMIT 1').pluck().get() as string;
    const { n, end } = db.prepare('SELECT count(*) AS n, max(timestamp) + 1 AS end FROM events WHERE project_id = ?').get(projectId) as { n: number; end: number };
    db.close();
    const store = openStore(location, { migrationBackup: false }); // a bench file: no copy of it before a migration
    await store.init();
    const read = generateKey(projectId, 'read', Date.now());
    await store.createKey(read.record);
    await store.close();
    const made = `\`npm run bench:server -- --reads-on=${location}\`: the project of ${n.toLocaleString('en-US')} events that \`bench/generate-project.ts\` wrote there`;
    tables.push(await measure({ location, projectId, readKey: read.key, end, events: n, made }, options));
  }
  return tables.join('\n\n');
}

/** The three phases on one prepared file; the markdown of its table. */
async function measure(prepared: Prepared, options: { phaseMs?: number; log: (line: string) => void }): Promise<string> {
  const phaseMs = options.phaseMs ?? 15_000;
  const started = new Date();
  const load0 = loadavg()[0] ?? 0;
  const { location } = prepared;
  const generated = { projectId: prepared.projectId, readKey: prepared.readKey, end: prepared.end };
  {
    const store = openStore(location);
    await store.init();
    // The rollups built now, not by the server during the phases: its background then keeps filters ahead.
    const refreshStarted = performance.now();
    while ((await store.reports.refreshRollups()) > 0);
    options.log(`reads bench: rollups built in ${((performance.now() - refreshStarted) / 1000).toFixed(0)} s`);
    const write = generateKey(generated.projectId, 'write', Date.now());
    const admin = generateKey(generated.projectId, 'admin', Date.now());
    await store.createKey(write.record);
    await store.createKey(admin.record);
    await store.close();
    const db = new Database(location, { readonly: true });
    // The user with the most events: the heaviest erasure of the project.
    const { user_id: userId, n: userEvents } = db
      .prepare('SELECT user_id, count(*) AS n FROM events WHERE project_id = ? AND user_id IS NOT NULL GROUP BY user_id ORDER BY n DESC LIMIT 1')
      .get(generated.projectId) as { user_id: string; n: number };
    db.close();

    const cli = await buildCli();
    const server = await startServerProcess(cli, ['--db', location, '--no-rate-limit']);
    const headers = (key: string) => ({ authorization: `ApiKey ${key}`, 'x-project-id': generated.projectId });
    // The heaviest report here: a year's daily series under three filters, which no rollup answers.
    const from = new Date(generated.end - 365 * DAY_MS).toISOString();
    const to = new Date(generated.end).toISOString();
    const heavy = `${server.url}/api/v1/reports/timeseries?from=${from}&to=${to}&interval=day&device=mobile&browser=Chrome&os=Android`;
    // The dashboard's first panel over the last week (the series with its totals, in one answer).
    const panel = `${server.url}/api/v1/reports/timeseries?from=${new Date(generated.end - 7 * DAY_MS).toISOString()}&to=${to}&interval=day`;
    const rows: PhaseResult[] = [];
    try {
      for (const phase of ['idle (ingest only)', 'heaviest report, again and again', 'erasure of one user'] as const) {
        options.log(`reads bench: ${phase}`);
        const load = startLoad({ url: server.url, projectId: generated.projectId, writeKey: write.key, concurrency: 8, batchSize: 20, durationMs: phaseMs });
        const health = probe(`${server.url}/healthz`, 20);
        const panels = probe(panel, 200, { headers: headers(generated.readKey) });
        const reads: Timed[] = [];
        let readsRunning = true;
        const readLoop = (async () => {
          if (phase === 'heaviest report, again and again') {
            while (readsRunning) reads.push(await timedFetch(heavy, { headers: headers(generated.readKey) }));
          } else if (phase === 'erasure of one user') {
            await new Promise((resolve) => setTimeout(resolve, phaseMs / 3));
            reads.push(await timedFetch(`${server.url}/api/v1/users/${encodeURIComponent(userId)}`, { method: 'DELETE', headers: headers(admin.key) }));
          }
        })();
        const result = await load.done;
        readsRunning = false;
        const probes = await health.stop();
        const panelTimes = (await panels.stop()).map((p) => p.ms);
        await readLoop;
        const lat = result.latenciesMs;
        const ok = reads.filter((r) => r.status === 200);
        const refused = reads.filter((r) => r.status === 503);
        rows.push({
          phase,
          eventsPerSec: (result.acknowledged.length / result.durationMs) * 1000,
          ingestP50: percentile(lat, 50),
          ingestP99: percentile(lat, 99),
          ingestMax: percentile(lat, 100),
          healthP50: percentile(probes.map((p) => p.ms), 50),
          healthP99: percentile(probes.map((p) => p.ms), 99),
          healthMax: percentile(probes.map((p) => p.ms), 100),
          panelP50: percentile(panelTimes, 50),
          panelP99: percentile(panelTimes, 99),
          panelMax: percentile(panelTimes, 100),
          reads:
            reads.length === 0
              ? '—'
              : `${ok.length} × 200${refused.length ? `, ${refused.length} × 503` : ''}; ${reads.map((r) => fmt(r.ms)).slice(0, 4).join(', ')}${reads.length > 4 ? ', …' : ''} ms`,
        });
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const idle = rows[0] as PhaseResult;
    const lines = [
      `Measured ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC by ${prepared.made}, a \`service-analytics-server start\` process on SQLite (durability full, defaults otherwise, no rate limit) holding it; each phase ${phaseMs / 1000} s of ingest (8 lanes of 20-event batches) with \`/healthz\` probed every 20 ms and the dashboard's first panel (the last 7 days' daily series and totals) every 200 ms; the daily rollups built before the server started, so that its background keeps frequent filters ahead throughout. Load average ${load0.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end; 2 cores. The heaviest report: a year's daily series under three filters (\`device\`, \`browser\`, \`os\`), which no rollup answers, one in flight at a time. The erasure: the user with the most events (${userEvents}), with an admin key, a third into its phase.`,
      '',
      '| phase | ingest events/s | ingest p50 ms | ingest p99 ms | ingest max ms | /healthz p50 ms | /healthz p99 ms | /healthz max ms | panel p50 ms | panel p99 ms | panel max ms | p99 against idle (ingest, /healthz) | reads (answers; first times) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
      ...rows.map(
        (r) =>
          `| ${r.phase} | ${Math.round(r.eventsPerSec).toLocaleString('en-US')} | ${fmt(r.ingestP50)} | ${fmt(r.ingestP99)} | ${fmt(r.ingestMax)} | ${fmt(r.healthP50)} | ${fmt(r.healthP99)} | ${fmt(r.healthMax)} | ${fmt(r.panelP50)} | ${fmt(r.panelP99)} | ${fmt(r.panelMax)} | ${(r.ingestP99 / idle.ingestP99).toFixed(2)}×, ${(r.healthP99 / idle.healthP99).toFixed(2)}× | ${r.reads} |`,
      ),
    ];
    return lines.join('\n');
  }
}
