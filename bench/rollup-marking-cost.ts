// What the daily rollups' marking triggers (server/store/reports/rollup-schema.ts) cost at ingest: events
// per second through each store's own write path (no HTTP), with the triggers and with them
// dropped, in alternating rounds on one database, so that both see the same machine. Groups of 250
// events, two in flight (about what the server's group commit forms under the ingest benchmark),
// spread over one day as a live project's are.
//
//   node scripts/run-ts.mjs bench/rollup-marking-cost.ts [--events=40000] [--rounds=3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { StoredEvent } from '../server/store/event-store.js';
import { isPostgresUrl, openStore } from '../server/store/open-store.js';
import { generateProject } from '../test-support/server/report-fixtures.js';
import { startPostgres } from '../test-support/postgres-server.js';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const EVENTS = Number(args.get('events') ?? 40_000);
const ROUNDS = Number(args.get('rounds') ?? 3);
const GROUP = 250;
const TRIGGERS = ['rollup_mark_insert', 'rollup_mark_delete', 'rollup_mark_update'];

async function dropTriggers(location: string): Promise<void> {
  if (isPostgresUrl(location)) {
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    for (const t of TRIGGERS) await client.query(`DROP TRIGGER IF EXISTS ${t} ON events`);
    await client.end();
    return;
  }
  const db = new Database(location);
  for (const t of TRIGGERS) db.exec(`DROP TRIGGER IF EXISTS ${t}`);
  db.close();
}

/** Events per second writing `events` through a freshly opened store (which recreates the triggers), then dropping them if asked first. */
async function round(location: string, events: StoredEvent[], triggers: boolean): Promise<number> {
  const store = openStore(location);
  await store.init();
  try {
    if (!triggers) await dropTriggers(location);
    const started = performance.now();
    const inFlight = new Set<Promise<unknown>>();
    for (let i = 0; i < events.length; i += GROUP) {
      const p = store.write({ events: events.slice(i, i + GROUP), chunks: [] });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      if (inFlight.size >= 2) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    return events.length / ((performance.now() - started) / 1000);
  } finally {
    await store.close();
  }
}

async function measure(name: string, location: string): Promise<void> {
  const day = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const lines: Record<'with' | 'without', number[]> = { with: [], without: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const triggers of r % 2 === 0 ? [true, false] : [false, true]) {
      const events = [...generateProject({ projectId: 'marking', start: day, days: 1, sessions: Math.ceil(EVENTS / 7), seed: r + 1, idPrefix: `r${r}${triggers ? 't' : 'n'}` })].slice(0, EVENTS);
      lines[triggers ? 'with' : 'without'].push(await round(location, events, triggers));
    }
  }
  const fmt = (xs: number[]) => xs.map((x) => Math.round(x).toLocaleString('en').padStart(8)).join(' ');
  const us = (xs: number[]) => 1e6 / (xs.reduce((a, b) => a + b, 0) / xs.length);
  console.log(`${name}: events/s per round, ${EVENTS.toLocaleString('en')} events each`);
  console.log(`  with marking triggers    ${fmt(lines.with)}`);
  console.log(`  without                  ${fmt(lines.without)}`);
  console.log(`  cost: ${(us(lines.with) - us(lines.without)).toFixed(2)} µs per event (mean rates: ${us(lines.with).toFixed(2)} vs ${us(lines.without).toFixed(2)} µs per event)`);
}

const dir = mkdtempSync(join(tmpdir(), 'rollup-marking-'));
try {
  const sqlite = join(dir, 'marking.db');
  const setup = openStore(sqlite);
  await setup.init();
  await setup.createProject({ id: 'marking', name: 'marking', createdAt: 0, fullIp: false, corsOrigins: [], bots: 'flag' });
  await setup.close();
  await measure('SQLite', sqlite);
  const server = await startPostgres();
  try {
    const store = openStore(server.url);
    await store.init();
    await store.createProject({ id: 'marking', name: 'marking', createdAt: 0, fullIp: false, corsOrigins: [], bots: 'flag' });
    await store.close();
    await measure('PostgreSQL', server.url);
  } finally {
    await server.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
