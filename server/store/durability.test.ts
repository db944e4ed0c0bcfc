import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerOptions } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Durability } from './durability.js';
import { makeEvent, newProjectId } from '../../test-support/store/event-store.fixtures.js';
import { openStore } from './open-store.js';

/** What each thread of the store reported: its program's name and `synchronous` of each connection it opened. */
const reports = vi.hoisted(() => [] as Array<{ thread: string; synchronous: number[] }>);

// The writer and checkpointer threads run their program from source text (sqlite-writer.ts), with
// connections no test can reach. Here each such thread first runs a probe that notes every
// connection the program uses, and right after the program's `ready` message reads `synchronous`
// on those very connections and sends it in a message of its own, which the store ignores (it has
// no id).
vi.mock('node:worker_threads', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:worker_threads')>();
  const probe = `'use strict';
{
  const { workerData, parentPort } = require('node:worker_threads');
  const Driver = require(workerData.driverPath);
  const connections = new Set();
  const pragma = Driver.prototype.pragma;
  Driver.prototype.pragma = function (...args) {
    connections.add(this);
    return pragma.apply(this, args);
  };
  const post = parentPort.postMessage;
  parentPort.postMessage = function (message, ...rest) {
    post.call(this, message, ...rest);
    if (message && message.ready) post.call(this, { probe: [...connections].map((db) => db.pragma('synchronous', { simple: true })) });
  };
}
`;
  class ProbedWorker extends actual.Worker {
    constructor(source: string | URL, options?: WorkerOptions) {
      const probed = options?.eval === true && typeof source === 'string';
      super(probed ? `${probe}${source}` : source, options);
      if (!probed) return;
      const thread = /function (\w+)ThreadMain/.exec(source)?.[1] ?? 'unknown';
      this.on('message', (message: { probe?: number[] }) => {
        if (message.probe) reports.push({ thread, synchronous: message.probe });
      });
    }
  }
  return { ...actual, Worker: ProbedWorker, default: { ...actual, Worker: ProbedWorker } };
});

const dir = mkdtempSync(join(tmpdir(), 'durability-test-'));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  reports.length = 0;
  vi.restoreAllMocks();
});

describe('openStore(file, { durability })', () => {
  // SQLite's PRAGMA synchronous: 2 is FULL, 1 is NORMAL.
  const cases: Array<[string, Durability | undefined, number]> = [
    ['full by default', undefined, 2],
    ['full', 'full', 2],
    ['relaxed', 'relaxed', 1],
  ];

  it.each(cases)('sets synchronous on every connection that writes: %s', async (_name, durability, expected) => {
    // The request thread's connection: whichever `pragma` was called on (the store's only one here).
    const pragma = vi.spyOn(Database.prototype, 'pragma');
    const store = openStore(join(dir, `store-${++files}.db`), durability === undefined ? undefined : { durability });
    await store.init();
    try {
      const p = newProjectId();
      expect((await store.write({ events: [makeEvent(p, 1)], chunks: [] })).eventInserted).toEqual([true]);
      const own = [...new Set(pragma.mock.contexts as Database.Database[])];
      expect(own).toHaveLength(1);
      expect(own.map((db) => db.pragma('synchronous', { simple: true }))).toEqual([expected]);
      // The checkpointer's ready message is not awaited by init().
      await vi.waitFor(() => expect(reports.map((r) => r.thread).sort()).toEqual(expect.arrayContaining(['checkpointer', 'writer'])));
      const threads = reports.filter((r) => r.thread === 'writer' || r.thread === 'checkpointer');
      expect(threads.map((r) => [r.thread, r.synchronous]).sort()).toEqual([
        ['checkpointer', [expected]],
        ['writer', [expected]],
      ]);
    } finally {
      await store.close();
    }
  });
});
