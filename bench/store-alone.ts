// The store's own ceiling: how many events/s a store takes through its write path when nothing else
// runs (no HTTP, no Koa, no validation, no load generator). Our server does all of that work and
// this too, on the same two cores, so it can never ingest faster than this figure; set beside the
// bare limit it says whether an aim is reachable at all on this machine. Run by server-bench.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import type { BackendEvent } from '../protocol/index.js';
import type { Durability } from '../server/store/durability.js';
import type { EventStore, StoredEvent } from '../server/store/event-store.js';
import { createDimensionExtractor } from '../server/reports/dimensions.js';
import { openBenchStore } from './chdb-location.js';
import { sampleBodies } from './load.js';

/** What one store-alone measurement found. */
export interface StoreAloneResult {
  eventsPerSecond: number;
  /** Group commits in the window and their size. */
  commits: number;
  groupSize: number;
  /** CPU of this process (the SQLite writer and checkpointer threads included), cores. */
  processCpu: number;
}

/** Options of {@link measureStoreAlone}. */
export interface StoreAloneOptions {
  /** A SQLite file, a `postgres://` URL (as for `openStore`) or `chdb:DIRECTORY` (bench/chdb-location.ts). */
  location: string;
  /** The ClickHouse database, for a chDB location. @default the store's own */
  database?: string;
  /** As for `openStore`; PostgreSQL ignores it. @default 'full' */
  durability?: Durability;
  seconds: number;
  /**
   * Events per group commit: about what the server's group commit forms under the benchmark's load
   * (its "events / commit" column).
   * @default 250
   */
  groupSize?: number;
  /**
   * Groups in flight at once, as the server's write queue allows.
   * @default 2
   */
  concurrency?: number;
  /** Called at the edges of the measured window (after a warm-up of a tenth of it). */
  onWindow?(edge: 'open' | 'close'): void;
}

const PROJECT_ID = 'proj_bench_store';

/**
 * Writes groups of realistic events (the load's bodies, as the batch route turns them into stored
 * events) back to back through `store.write`, `concurrency` at a time, and counts what committed.
 * Ids are time-ordered like the client's UUIDv7 ids and all fresh, so nothing is deduplicated.
 */
export async function measureStoreAlone(options: StoreAloneOptions): Promise<StoreAloneResult> {
  const groupSize = options.groupSize ?? 250;
  const concurrency = options.concurrency ?? 2;
  const templates = sampleBodies(20, 50).flatMap((body) => JSON.parse(body) as BackendEvent[]);
  const idTime = Date.now().toString(16).padStart(12, '0');
  const idHead = `${idTime.slice(0, 8)}-${idTime.slice(8, 12)}-7000-8000-`;
  let seq = 0;
  // The report columns as the batch route extracts them (each distinct page and agent parsed once).
  const dimensions = createDimensionExtractor();

  const group = (): StoredEvent[] => {
    const now = Date.now();
    const events = new Array<StoredEvent>(groupSize);
    for (let i = 0; i < groupSize; i++) {
      const e = templates[seq % templates.length] as BackendEvent;
      events[i] = {
        projectId: PROJECT_ID,
        eventId: idHead + (seq++).toString(16).padStart(12, '0'),
        eventType: e.event_type,
        userId: e.user_id ?? null,
        sessionId: e.session_id ?? null,
        timestamp: now,
        clientTimestamp: null,
        receivedAt: now,
        properties: e.properties ?? {},
        userAgent: e.user_agent ?? null,
        ipAddress: '127.0.0.0',
        isBot: false,
        // A visitor id as the server makes them (server/visitor-id.ts): the column's cost is measured.
        visitorId: 'q3n1VnZ0mJ1kCk2a9XbV0w',
        dimensions: dimensions.extract(e.properties ?? {}, e.user_agent ?? null),
      };
    }
    return events;
  };

  const store: EventStore = openBenchStore(options.location, {
    ...(options.durability === undefined ? {} : { durability: options.durability }),
    ...(options.database === undefined ? {} : { database: options.database }),
  });
  await store.init();
  try {
    let events = 0;
    let commits = 0;
    let stop = false;
    const writers = Array.from({ length: concurrency }, async () => {
      while (!stop) {
        const result = await store.write({ events: group(), chunks: [] });
        for (const inserted of result.eventInserted) if (inserted) events++;
        commits++;
      }
    });
    const mark = () => ({ at: performance.now(), events, commits, cpu: process.cpuUsage() });
    await sleep(options.seconds * 100);
    const a = mark();
    options.onWindow?.('open');
    await sleep(options.seconds * 1000);
    const b = mark();
    options.onWindow?.('close');
    stop = true;
    await Promise.all(writers);

    const seconds = (b.at - a.at) / 1000;
    const cpuMicros = b.cpu.user + b.cpu.system - (a.cpu.user + a.cpu.system);
    return {
      eventsPerSecond: (b.events - a.events) / seconds,
      commits: b.commits - a.commits,
      groupSize,
      processCpu: cpuMicros / 1e6 / seconds,
    };
  } finally {
    await store.close();
  }
}
