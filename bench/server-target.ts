// One server under test, in its own process (so that it does not share an event loop with the load
// generator). Run by bench/server-bench.ts through scripts/run-ts.mjs:
//
//   node scripts/run-ts.mjs bench/server-target.ts bare
//   node scripts/run-ts.mjs bench/server-target.ts noop        (our server, writes go nowhere)
//   node scripts/run-ts.mjs bench/server-target.ts sqlite /tmp/x/events.db
//   node scripts/run-ts.mjs bench/server-target.ts sqlite-relaxed /tmp/x/events.db   (durability relaxed)
//   node scripts/run-ts.mjs bench/server-target.ts postgres postgres://…
//   (twice on one database: the two-process target; the second finds the project and adds a key)
//
// When listening it prints one JSON line on stdout: { url, projectId, key, pid }. Commands come one
// per line on stdin: `mark` answers { mark: TargetMark } (CPU, event-loop use, group commits so
// far); `stop`, the end of stdin, SIGTERM or SIGINT stop it: our server then commits what it
// acknowledged and closes the store, and the process prints { stopped: true } and exits 0.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { generateKey } from '../server/api-keys.js';
import { silentLogger } from '../server/logger.js';
import { serve } from '../server/serve.js';
import type { Durability } from '../server/store/durability.js';
import type { EventStore } from '../server/store/event-store.js';
import { openStore } from '../server/store/open-store.js';

export interface TargetReady {
  url: string;
  projectId: string;
  key: string;
  pid: number;
}

/** The answer to `mark` on stdin: counters to difference across the measured window. */
export interface TargetMark {
  at: number;
  /** process.cpuUsage(), µs. */
  cpuMicros: number;
  /** Time the main thread was runnable but waited for a core (Linux schedstat), ms; null elsewhere. */
  runQueueMs: number | null;
  /** performance.eventLoopUtilization() counters, ms. */
  eluIdle: number;
  eluActive: number;
  /** Group commits so far (our server only): count, seconds spent, items written. */
  commits: number;
  commitSeconds: number;
  commitItems: number;
  /** Resident memory of the process (every thread, native memory included), bytes. */
  rssBytes: number;
}

const PROJECT_ID = 'proj_bench';

/** The limit: node:http that reads the body, parses it and answers. Nothing else. */
interface Running {
  url: string;
  key?: string;
  /** Prometheus text of our server's metrics. */
  metrics?: () => string;
  close(): Promise<void>;
}

async function startBare(): Promise<Running> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let status = 200;
      let body: string;
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        body = `{"success":true,"processed":${Array.isArray(parsed) ? parsed.length : 0}}`;
      } catch {
        status = 400;
        body = '{"error":"The body is not valid JSON.","code":"INVALID_JSON"}';
      }
      res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Our server with a store that keeps projects and keys (in-memory SQLite) but whose `write` stores
 * nothing and reports every event inserted: the cost of HTTP, auth, parsing, validation and group
 * commit without the database. A diagnostic, not a product configuration.
 */
function noopWrites(store: EventStore): EventStore {
  return {
    ...store,
    write: async (batch) => ({ eventInserted: batch.events.map(() => true), chunkInserted: batch.chunks.map(() => true) }),
  };
}

async function startOurs(location: string, noop = false, durability?: Durability): Promise<Running> {
  const opened = openStore(location, { durability });
  await opened.init();
  const store = noop ? noopWrites(opened) : opened;
  const now = Date.now();
  // A second process on the same database (the two-process target) finds the project made.
  if (!(await store.getProject(PROJECT_ID))) {
    await store.createProject({ id: PROJECT_ID, name: 'Benchmark', createdAt: now, fullIp: false, corsOrigins: [], bots: 'drop' });
  }
  const { key, record } = generateKey(PROJECT_ID, 'write', now);
  await store.createKey(record);
  const running = await serve({ store, logger: silentLogger, port: 0, host: '127.0.0.1' });
  return { url: running.url, key, metrics: () => running.app.metrics.render(), close: () => running.close() };
}

function runQueueMs(): number | null {
  try {
    // "time on cpu (ns), time waiting on a run queue (ns), timeslices" of the main thread.
    const [, waiting] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').trim().split(' ');
    return Number(waiting) / 1e6;
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const [kind, location] = process.argv.slice(2);
  let server: Running;
  if (kind === 'bare') server = await startBare();
  else if (kind === 'noop') server = await startOurs(':memory:', true);
  else if ((kind === 'sqlite' || kind === 'postgres') && location) server = await startOurs(location);
  else if (kind === 'sqlite-relaxed' && location) server = await startOurs(location, false, 'relaxed');
  else throw new Error('usage: server-target.ts bare | noop | sqlite <file> | sqlite-relaxed <file> | postgres <url>');

  const ready: TargetReady = { url: server.url, projectId: PROJECT_ID, key: server.key ?? 'none', pid: process.pid };
  process.stdout.write(`${JSON.stringify(ready)}\n`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    server.close().then(
      () => {
        process.stdout.write(`${JSON.stringify({ stopped: true })}\n`, () => process.exit(0));
      },
      (error: unknown) => {
        console.error('server-target: close failed', error);
        process.exit(1);
      },
    );
  };
  process.stdin.setEncoding('utf8');
  const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  const mark = (): void => {
    const usage = process.cpuUsage();
    const elu = performance.eventLoopUtilization();
    const text = server.metrics?.() ?? '';
    const m: TargetMark = {
      at: performance.now(),
      cpuMicros: usage.user + usage.system,
      runQueueMs: runQueueMs(),
      eluIdle: elu.idle,
      eluActive: elu.active,
      commits: metric(text, 'sa_write_latency_seconds_count'),
      commitSeconds: metric(text, 'sa_write_latency_seconds_sum'),
      commitItems: metric(text, 'sa_commit_items_total'),
      rssBytes: process.memoryUsage.rss(),
    };
    process.stdout.write(`${JSON.stringify({ mark: m })}\n`);
  };
  let pending = '';
  process.stdin.on('data', (text: string) => {
    pending += text;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const command = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (command === 'mark') mark();
      else if (command === 'stop') stop();
    }
  });
  // The bench died or closed our stdin: do not linger as an orphan holding a port.
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
