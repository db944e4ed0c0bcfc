// How long schema version 5's backfill takes (server/store/reports/report-backfill.ts): a version 4
// database of N generated events (test-support/server/report-fixtures.ts) is opened by the current
// store, which fills every row's report columns before it serves. Prints rows, seconds and seconds
// per million rows for each store; the figures go to docs/decisions.md, "Report columns".
//
//   node scripts/run-ts.mjs bench/report-backfill.ts                       # 1,000,000 rows, both stores
//   node scripts/run-ts.mjs bench/report-backfill.ts --rows=200000 --stores=sqlite
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startPostgres } from '../test-support/postgres-server.js';
import { generateProject } from '../test-support/server/report-fixtures.js';
import type { EventStore, StoredEvent } from '../server/store/event-store.js';
import { createPostgresStore } from '../server/store/postgres/postgres-store.js';
import { REPORT_COLUMNS } from '../server/store/reports/report-columns.js';
import { createSqliteStore } from '../server/store/sqlite/sqlite-store.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROWS = Number(args.get('rows') ?? 1_000_000);
const STORES = (args.get('stores') ?? 'sqlite,postgres').split(',');
const DROP = `${REPORT_COLUMNS.map((c) => `ALTER TABLE events DROP COLUMN ${c};`).join('\n')}\nDROP TABLE backfills;\nUPDATE events SET client_timestamp = NULL;`;

/** Writes about ROWS events as version 4 stored them (no report columns). */
async function fill(store: EventStore, projectId: string): Promise<number> {
  let batch: StoredEvent[] = [];
  let n = 0;
  // About 7 events per session on average.
  for (const e of generateProject({ projectId, start: Date.UTC(2026, 0, 1), days: 90, sessions: Math.ceil(ROWS / 7) })) {
    const { dimensions: _, ...old } = e;
    batch.push({ ...old, clientTimestamp: null });
    if (batch.length === 5000) {
      await store.write({ events: batch, chunks: [] });
      n += batch.length;
      batch = [];
      if (n >= ROWS) return n;
    }
  }
  if (batch.length > 0) await store.write({ events: batch, chunks: [] });
  return n + batch.length;
}

function report(name: string, rows: number, ms: number): void {
  console.log(`${name}: ${rows.toLocaleString('en')} rows backfilled in ${(ms / 1000).toFixed(1)} s = ${((ms / 1000) * (1e6 / rows)).toFixed(1)} s per million rows`);
}

if (STORES.includes('sqlite')) {
  const dir = mkdtempSync(join(tmpdir(), 'report-backfill-'));
  try {
    const path = join(dir, 'v4.db');
    const store = createSqliteStore({ path });
    await store.init();
    const rows = await fill(store, 'p_bench');
    await store.close();
    const raw = new Database(path);
    raw.exec(DROP);
    raw.pragma('user_version = 4');
    raw.exec('VACUUM');
    raw.close();
    const started = performance.now();
    const upgraded = createSqliteStore({ path });
    await upgraded.init();
    report('SQLite', rows, performance.now() - started);
    await upgraded.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (STORES.includes('postgres')) {
  const server = await startPostgres();
  try {
    const store = createPostgresStore({ url: server.url });
    await store.init();
    await store.createProject({ id: 'p_bench', name: 'bench', createdAt: 0, fullIp: false, corsOrigins: [], bots: 'keep' });
    const rows = await fill(store, 'p_bench');
    await store.close();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`${DROP}\nUPDATE schema_version SET version = 4;`);
    await admin.query('VACUUM FULL events');
    await admin.end();
    const started = performance.now();
    const upgraded = createPostgresStore({ url: server.url });
    await upgraded.init();
    report('PostgreSQL', rows, performance.now() - started);
    await upgraded.close();
  } finally {
    await server.stop();
  }
}
