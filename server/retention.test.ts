/**
 * Retention through the real CLI on a real SQLite file: `start --retention-days N` (pruning as the
 * server starts, on an ephemeral port) and the one-shot `prune --retention-days N` share one
 * cut-off, now − N × 24 h. Each case stores events on both sides of the cut-off, and thousands
 * spread over 100 days, then checks exactly which rows are left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeChunk } from '../test-support/store/event-store.fixtures.js';
import { openStore } from './store/open-store.js';
import { buildCli, runCli, startServerProcess } from '../test-support/server/cli-process.js';
import { openStoredRows } from '../test-support/server/stored-rows.js';
import { makeEvent } from '../test-support/server/test-server.js';

const DAYS = 30;
/** A day, written out here rather than imported, so that a wrong constant in the code shows. */
const DAY_MS = 24 * 60 * 60 * 1000;
const cutoffAt = (now: number): number => now - DAYS * DAY_MS;
/** Events spread evenly over this many days, to check the count left over many rows and days. */
const SPREAD_DAYS = 100;
const SPREAD_EVENTS = 3000;
/**
 * How far inside the cut-off the "just inside" rows are. The rows are written before the pruning
 * process reads its clock, so a row exactly at the cut-off cannot be placed; this margin only has
 * to cover the moments between writing them and that process starting. The "just outside" rows
 * are 1 ms past the cut-off: the process's clock can only be later than the test's.
 */
const INSIDE_MS = 10 * 60_000;

interface Created {
  projectId: string;
  apiKey: string;
}

/** The rows a case writes, by id, and the ids that must be left after pruning. */
interface Planted {
  /** When the timestamps were computed: the pruning process's clock reads this or later. */
  anchor: number;
  kept: Set<string>;
  all: Set<string>;
}

let cli: string;
let dir: string;
beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(tmpdir(), 'sa-retention-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function post(url: string, project: Created, events: Array<Record<string, unknown>>): Promise<void> {
  const response = await fetch(`${url}/api/v1/events/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.apiKey}`, 'x-project-id': project.projectId },
    body: JSON.stringify(events),
  });
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ success: true, processed: events.length });
}

/**
 * Writes, through a server without retention, the edge events (1 ms outside the cut-off, and
 * {@link INSIDE_MS} inside it) and {@link SPREAD_EVENTS} events spread over {@link SPREAD_DAYS}
 * days; and, straight into the file (recordings are stamped by the server on arrival), one
 * recording chunk at each edge.
 */
async function plant(db: string, project: Created, name: string): Promise<Planted> {
  const anchor = Date.now();
  const edge = cutoffAt(anchor);
  const all = new Set<string>();
  const kept = new Set<string>();
  const events: Array<Record<string, unknown>> = [];
  const add = (id: string, timestamp: number, keep: boolean): void => {
    events.push(makeEvent({ event_id: id, timestamp: new Date(timestamp).toISOString() }));
    all.add(id);
    if (keep) kept.add(id);
  };
  add(`${name}-just-outside`, edge - 1, false);
  add(`${name}-just-inside`, edge + INSIDE_MS, true);
  // Half a step off the whole steps, so that no spread event lies between the two edges above.
  const step = (SPREAD_DAYS * DAY_MS) / SPREAD_EVENTS;
  for (let i = 0; i < SPREAD_EVENTS; i++) {
    const age = (i + 0.5) * step;
    add(`${name}-spread-${i}`, anchor - age, age < DAYS * DAY_MS);
  }

  const server = await startServerProcess(cli, ['--db', db]);
  try {
    for (let i = 0; i < events.length; i += 1000) await post(server.url, project, events.slice(i, i + 1000));
  } finally {
    server.child.kill('SIGTERM');
  }
  expect(await server.exited).toBe(0);

  const store = await openStore(db);
  try {
    await store.init();
    await store.write({
      events: [],
      chunks: [
        makeChunk(project.projectId, 'outside', 0, 1, { receivedAt: edge - 1 }),
        makeChunk(project.projectId, 'inside', 0, 1, { receivedAt: edge + INSIDE_MS }),
      ],
    });
  } finally {
    await store.close();
  }
  return { anchor, kept, all };
}

/** The cut-off a pruning process used must be N days (not hours, not minutes) before its clock. */
function expectCutoffOf(cutoff: number, planted: Planted, after: number): void {
  expect(cutoff).toBeGreaterThanOrEqual(cutoffAt(planted.anchor));
  expect(cutoff).toBeLessThanOrEqual(cutoffAt(after));
  // The margin held: the "just inside" rows were inside this process's cut-off.
  expect(cutoff).toBeLessThan(cutoffAt(planted.anchor) + INSIDE_MS);
}

async function expectLeft(db: string, project: Created, planted: Planted): Promise<void> {
  const rows = await openStoredRows(db);
  try {
    const ids = await rows.eventIds(project.projectId);
    expect(ids.size).toBe(planted.kept.size);
    expect([...planted.all].filter((id) => ids.has(id) !== planted.kept.has(id))).toEqual([]);
    expect(await rows.count(project.projectId)).toEqual({ events: planted.kept.size, chunks: 1 });
  } finally {
    await rows.close();
  }
  const store = await openStore(db);
  try {
    await store.init();
    expect(await store.getRecording(project.projectId, 'outside')).toBeNull();
    expect((await store.getRecording(project.projectId, 'inside'))?.events).toHaveLength(1);
  } finally {
    await store.close();
  }
}

async function createProject(db: string): Promise<Created> {
  // Keeps bots: Node's fetch and the test events' user agents are bots to the default policy.
  const out = await runCli(cli, ['project', 'create', '--name', 'Retention', '--bots', 'keep', '--json', '--db', db]);
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as Created;
}

describe(`retention of ${DAYS} days`, () => {
  it('start --retention-days prunes as the server starts: exactly the rows inside the cut-off are left', async () => {
    const db = join(dir, 'start', 'analytics.db');
    const project = await createProject(db);
    const planted = await plant(db, project, 'start');
    // The expected count is a fixed number, worked out by hand, as well as derived from the plan.
    expect(planted.kept.size).toBe(1 + (SPREAD_EVENTS * DAYS) / SPREAD_DAYS);

    const server = await startServerProcess(cli, ['--db', db, '--retention-days', String(DAYS)]);
    let line: { cutoff: string; events: number; chunks: number; days: number } | undefined;
    try {
      for (let tries = 0; line === undefined; tries++) {
        const found = server.log().split('\n').find((l) => l.includes('"msg":"retention"'));
        if (found !== undefined) line = JSON.parse(found) as typeof line;
        else if (tries > 400) throw new Error(`no retention line in the log:\n${server.log()}`);
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const after = Date.now();
      expect(line).toMatchObject({ days: DAYS, events: planted.all.size - planted.kept.size, chunks: 1 });
      expectCutoffOf(Date.parse(line!.cutoff), planted, after);
      await expectLeft(db, project, planted);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
  });

  it('prune --retention-days deletes the same rows, with the same cut-off', async () => {
    const db = join(dir, 'prune', 'analytics.db');
    const project = await createProject(db);
    const planted = await plant(db, project, 'prune');

    const out = await runCli(cli, ['prune', '--retention-days', String(DAYS), '--json', '--db', db]);
    const after = Date.now();
    expect(out.code).toBe(0);
    const result = JSON.parse(out.stdout) as { events: number; chunks: number; cutoff: string };
    expect(result).toMatchObject({ events: planted.all.size - planted.kept.size, chunks: 1 });
    expectCutoffOf(Date.parse(result.cutoff), planted, after);
    await expectLeft(db, project, planted);
  });
});
