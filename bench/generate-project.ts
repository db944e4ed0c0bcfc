// A realistic project of N events over 90 days (test-support/server/report-fixtures.ts: sessions,
// page views with referrers and campaigns, custom events, errors, web vitals, experiments, a few
// bots), for the report panels' benchmark (bench/panel-bench.ts) or to try the dashboard on.
//
//   node scripts/run-ts.mjs bench/generate-project.ts --events=10000000 --store=data/big.db
//   node scripts/run-ts.mjs bench/generate-project.ts --events=1000000 --store=postgres://…/db
//   node scripts/run-ts.mjs bench/generate-project.ts --events=10000000 --store=chdb:/tmp/chdb-10m
//
// A bulk load, not ingest: the rows go straight into the store's tables (SQLite: one connection,
// synchronous off, 50,000 rows a transaction; PostgreSQL: the store's own multi-row insert on two
// connections; both then put the events in time order, as ingest leaves them; ClickHouse on chDB, `chdb:DIRECTORY` (bench/chdb-location.ts): inserts of 100,000 rows,
// one in flight while the next is generated), with no HTTP, validation, bot filter or visitor hashing; the report columns are
// extracted as at ingest. Memory stays bounded: events are generated one at a time and written in
// slices. The project (`bench_…`, with a read key printed at the end) is created first.
import Database from 'better-sqlite3';
import { generateKey } from '../server/api-keys.js';
import type { EventStore, StoredEvent } from '../server/store/event-store.js';
import { eventToRow } from '../server/store/clickhouse/clickhouse-rows.js';
import { isPostgresUrl } from '../server/store/open-store.js';
import { insertEvents } from '../server/store/postgres/postgres-write.js';
import { dimensionValues } from '../server/store/reports/report-backfill.js';
import { REPORT_COLUMNS } from '../server/store/reports/report-columns.js';
import { generateProject } from '../test-support/server/report-fixtures.js';
import pg from 'pg';
import { chdbTables, chdbTransport, isChdbLocation, openBenchStore } from './chdb-location.js';

const DAY_MS = 86_400_000;

/** Options of {@link generateIntoStore}. */
export interface GenerateOptions {
  /** A SQLite path, a postgres:// URL (as for `openStore`) or `chdb:DIRECTORY` (bench/chdb-location.ts). */
  location: string;
  events: number;
  /** @default 90 */
  days?: number;
  /** End of the period, ms. @default the start of the current UTC day */
  end?: number;
  projectId?: string;
  onProgress?(written: number): void;
}

/** Average events per generated session (measured from the generator), to size the sessions. */
const EVENTS_PER_SESSION = 7.4;

/** Creates a project and bulk-loads `events` generated events into it; resolves with its id, read key and count. */
export async function generateIntoStore(options: GenerateOptions): Promise<{ projectId: string; readKey: string; events: number; start: number; end: number }> {
  const days = options.days ?? 90;
  const end = options.end ?? Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const start = end - days * DAY_MS;
  const projectId = options.projectId ?? `bench_${Date.now().toString(36)}`;
  const store: EventStore = openBenchStore(options.location);
  await store.init();
  await store.createProject({ id: projectId, name: projectId, createdAt: start, fullIp: false, corsOrigins: [], bots: 'flag' });
  const read = generateKey(projectId, 'read', start);
  await store.createKey(read.record);
  await store.close();
  const source = generateProject({ projectId, start, days, sessions: Math.ceil(options.events / EVENTS_PER_SESSION) * 2, seed: 18 });
  const take = function* (): Generator<StoredEvent> {
    let n = 0;
    for (const e of source) {
      if (n++ >= options.events) return;
      yield e;
    }
  };
  const written = isChdbLocation(options.location)
    ? await loadClickHouse(options.location, take(), options.onProgress)
    : isPostgresUrl(options.location)
      ? await loadPostgres(options.location, take(), options.onProgress)
      : loadSqlite(options.location, take(), options.onProgress);
  return { projectId, readKey: read.key, events: written, start, end };
}

function loadSqlite(path: string, events: Iterable<StoredEvent>, onProgress?: (n: number) => void): number {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -256000');
  const columns = ['project_id', 'event_id', 'event_type', 'user_id', 'session_id', 'timestamp', 'client_timestamp', 'received_at', 'properties', 'user_agent', 'ip_address', 'is_bot', 'visitor_id', ...REPORT_COLUMNS];
  const insert = db.prepare<unknown[]>(`INSERT OR IGNORE INTO events (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  // SQLite marks inserted days for the report rollups in the writer, not by a trigger
  // (server/store/reports/rollup-schema.ts): a bulk load marks the days it filled itself, in the same transaction.
  const markDay = db.prepare('INSERT INTO rollup_dirty (project_id, day) VALUES (?, ?) ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1');
  const slice = db.transaction((rows: StoredEvent[]) => {
    const days = new Map<string, [string, number]>();
    for (const e of rows) {
      const day = Math.floor(e.timestamp / DAY_MS);
      days.set(`${day} ${e.projectId}`, [e.projectId, day]);
    }
    for (const [projectId, day] of days.values()) markDay.run(projectId, day);
    for (const e of rows) {
      insert.run(e.projectId, e.eventId, e.eventType, e.userId, e.sessionId, e.timestamp, e.clientTimestamp, e.receivedAt, JSON.stringify(e.properties), e.userAgent, e.ipAddress, e.isBot ? 1 : 0, e.visitorId, ...dimensionValues(e.dimensions));
    }
  });
  let n = 0;
  let rows: StoredEvent[] = [];
  for (const e of events) {
    rows.push(e);
    if (rows.length === 50_000) {
      slice(rows);
      n += rows.length;
      rows = [];
      onProgress?.(n);
    }
  }
  slice(rows);
  n += rows.length;
  writeInTimeOrder(db);
  // The report aggregates are built from the events by the store's next open, as for an upgraded
  // database (server/store/aggregates/aggregate-schema.ts); a bulk load does not keep them itself.
  db.exec('DROP TABLE IF EXISTS agg_values; DROP TABLE IF EXISTS agg_sessions; DROP TABLE IF EXISTS agg_meta;');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
  db.close();
  return n;
}

/**
 * Rewrites `events` in time order, with its indexes and triggers as they were. The generator makes
 * events a session at a time at random times over the period, so an hour's events would lie all
 * over the table, where ingest writes them about in the order they happen, an hour's together:
 * what reads an hour or a day of events (an erasure, a day's rollup, a first read of a filter)
 * then meets them as it would on a server.
 */
function writeInTimeOrder(db: Database.Database): void {
  const objects = db.prepare("SELECT type, sql FROM sqlite_master WHERE tbl_name = 'events' AND sql IS NOT NULL").all() as Array<{ type: string; sql: string }>;
  const table = objects.find((o) => o.type === 'table')?.sql;
  if (table === undefined) throw new Error('no events table');
  db.transaction(() => {
    // SQLite keeps the text of a renamed table with its name quoted.
    db.exec(table.replace(/^CREATE TABLE\s+"?events"?(?=\s|\()/, 'CREATE TABLE events_in_order'));
    db.exec('INSERT INTO events_in_order SELECT * FROM events ORDER BY project_id, timestamp, event_id');
    db.exec('DROP TABLE events');
    db.exec('ALTER TABLE events_in_order RENAME TO events');
    for (const o of objects) if (o.type !== 'table') db.exec(o.sql);
  })();
}

async function loadPostgres(url: string, events: Iterable<StoredEvent>, onProgress?: (n: number) => void): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  let n = 0;
  const inFlight = new Set<Promise<unknown>>();
  let rows: StoredEvent[] = [];
  const flush = async (batch: StoredEvent[]) => {
    const p = insertEvents(pool, batch).then(() => {
      n += batch.length;
      onProgress?.(n);
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size >= 2) await Promise.race(inFlight);
  };
  for (const e of events) {
    rows.push(e);
    if (rows.length === 5000) {
      await flush(rows);
      rows = [];
    }
  }
  if (rows.length > 0) await flush(rows);
  await Promise.all(inFlight);
  // In time order, as on SQLite (`writeInTimeOrder`): each partition by its `events_by_time`.
  await pool.query('CLUSTER events USING events_by_time');
  // Built from the events by the store's next open, as on SQLite above.
  await pool.query('DROP TABLE IF EXISTS agg_values, agg_sessions, agg_meta');
  await pool.query('ANALYZE events');
  await pool.end();
  return n;
}

/**
 * ClickHouse on chDB: the rows as the store writes them (`eventToRow`), 100,000 an INSERT (each a
 * few parts, one per month it spans, merged in the background), one INSERT in flight while the
 * next slice is generated. The insert-time dedupe check is left out: the generated ids are unique.
 * `event_ids` is filled by its materialized view in the same INSERT, as at ingest.
 */
async function loadClickHouse(location: string, events: Iterable<StoredEvent>, onProgress?: (n: number) => void): Promise<number> {
  const transport = chdbTransport(location);
  const table = chdbTables().events;
  let n = 0;
  let inFlight: Promise<void> = Promise.resolve();
  let rows: ReturnType<typeof eventToRow>[] = [];
  const flush = async (slice: ReturnType<typeof eventToRow>[]) => {
    await inFlight;
    inFlight = transport.insert(table, slice).then(() => {
      n += slice.length;
      onProgress?.(n);
    });
  };
  for (const e of events) {
    rows.push(eventToRow(e, e.eventId));
    if (rows.length === 100_000) {
      await flush(rows);
      rows = [];
    }
  }
  if (rows.length > 0) await flush(rows);
  await inFlight;
  return n;
}

// Run as a script (run-ts names the bundle after the file), not when bundled into another bench.
if (process.argv[1]?.endsWith('bench__generate-project.mjs')) {
  const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
  const location = args.get('store');
  if (!location) throw new Error('--store=PATH, --store=postgres://… or --store=chdb:DIRECTORY is required');
  const started = performance.now();
  const result = await generateIntoStore({
    location,
    events: Number(args.get('events') ?? 1_000_000),
    onProgress: (n) => {
      if (n % 1_000_000 < 50_000) process.stderr.write(`${n.toLocaleString('en')} events…\n`);
    },
  });
  console.log(`${result.events.toLocaleString('en')} events in ${((performance.now() - started) / 1000).toFixed(0)} s; project ${result.projectId}, read key ${result.readKey}`);
}
