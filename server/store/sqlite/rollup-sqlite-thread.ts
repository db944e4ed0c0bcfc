import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { Dialect } from '../reports/dialect.js';
import { type RefreshNext, type RefreshedDay, type SqliteRefreshSql, prepareSqliteRefresh, sqliteRefreshSql } from '../reports/rollup-refresh.js';
import { DAY_MS } from '../reports/rollup-schema.js';
import type { FilteredKeep, KeepFiltered } from '../reports/filtered-tops.js';
import { prepareSqliteFilteredKeep, prepareSqliteSessionDaysKeep } from '../reports/report-keep.js';
import type { KeepSessionDays, SessionDaysKeep } from '../reports/session-days.js';
import { createSketchKit } from '../aggregates/visitor-sketch.js';
import { type EstimatesKeep, type KeepEstimates, prepareSqliteEstimatesKeep } from '../aggregates/kept-estimates.js';
import { THREAD_PRELUDE, type ThreadError, fromThreadError, toThreadError } from './thread-program.js';

/*
 * The SQLite rollup refresh runs on a thread of its own, on a connection of its own: computing a
 * day of a large project takes seconds of synchronous work (bench/RESULTS.md, "Report panels"),
 * which on the request thread would stop every HTTP request for that long. Like the writer thread
 * (`sqlite-writer.ts`), its program is sent as source text and handles one request at a time. It
 * also keeps the filtered rows and session days reports compute (`reports/report-keep.ts`) and the
 * estimates series computed (`aggregates/kept-estimates.ts`): the reader thread's connection does
 * not write, and the request thread must not wait for the write lock.
 */

interface ThreadData {
  driverPath: string;
  path: string;
  busyTimeoutMs: number;
  sql: SqliteRefreshSql;
  dayMs: number;
}

type ToThread =
  | { id: number; beforeDay: number; skip: readonly string[] }
  | { id: number; keep: FilteredKeep }
  | { id: number; keepSessionDays: SessionDaysKeep }
  | { id: number; keepEstimates: EstimatesKeep }
  | { close: true };
type FromThread = { ready: true } | { id: number; result: RefreshedDay | number | null } | { id: number; error: ThreadError };

interface Port {
  on(event: 'message', listener: (message: ToThread) => void): void;
  postMessage(message: FromThread): void;
  close(): void;
}

/** The thread's program; self-contained. */
function refreshThreadMain(
  load: (id: string) => unknown,
  data: ThreadData,
  port: Port,
  prepare: typeof prepareSqliteRefresh,
  prepareKeep: typeof prepareSqliteFilteredKeep,
  prepareSessionDaysKeep: typeof prepareSqliteSessionDaysKeep,
  prepareEstimatesKeep: typeof prepareSqliteEstimatesKeep,
  toError: typeof toThreadError,
  createKit: typeof createSketchKit,
): void {
  const Driver = load(data.driverPath) as typeof Database;
  const db = new Driver(data.path);
  db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  const refresh = prepare(db, data.sql, data.dayMs);
  const kit = createKit();
  const keep = prepareKeep(db, kit);
  const keepSessionDays = prepareSessionDaysKeep(db);
  const keepEstimates = prepareEstimatesKeep(db, kit);
  port.on('message', (message) => {
    if ('close' in message) {
      db.close();
      port.close();
      return;
    }
    try {
      const result =
        'keep' in message
          ? keep(message.keep)
          : 'keepSessionDays' in message
            ? keepSessionDays(message.keepSessionDays)
            : 'keepEstimates' in message
              ? keepEstimates(message.keepEstimates)
              : refresh(message.beforeDay, message.skip);
      port.postMessage({ id: message.id, result });
    } catch (error) {
      port.postMessage({ id: message.id, error: toError(error) });
    }
  });
  port.postMessage({ ready: true });
}

const SOURCE = `${THREAD_PRELUDE}(${refreshThreadMain.toString()})(require, workerData, parentPort, ${prepareSqliteRefresh.toString()}, ${prepareSqliteFilteredKeep.toString()}, ${prepareSqliteSessionDaysKeep.toString()}, ${prepareSqliteEstimatesKeep.toString()}, ${toThreadError.toString()}, ${createSketchKit.toString()});`;

/** A running refresh thread. */
export interface SqliteRollupThread {
  refreshNext: RefreshNext;
  keepFiltered: KeepFiltered;
  keepSessionDays: KeepSessionDays;
  keepEstimates: KeepEstimates;
  /** Lets a refresh in progress finish, then closes the thread's connection. */
  close(): Promise<void>;
}

/** Starts the refresh thread on the database file at `path`; resolves once its connection is open. */
export function startSqliteRollupThread(options: { path: string; busyTimeoutMs: number; dialect: Dialect }): Promise<SqliteRollupThread> {
  const data: ThreadData = {
    driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs,
    sql: sqliteRefreshSql(options.dialect),
    dayMs: DAY_MS,
  };
  return new Promise((resolve, reject) => {
    const worker = new Worker(SOURCE, { eval: true, workerData: data });
    const waiting = new Map<number, { resolve(result: RefreshedDay | number | null): void; reject(error: Error): void }>();
    let nextId = 1;
    let ready = false;
    let failure: Error | null = null;
    const exited = new Promise<void>((done) => worker.once('exit', () => done()));
    const fail = (error: Error) => {
      failure = error;
      if (!ready) reject(error);
      for (const w of waiting.values()) w.reject(error);
      waiting.clear();
    };
    worker.on('error', (error) => fail(new Error(`SQLite rollup thread failed: ${error.message}`, { cause: error })));
    worker.on('exit', (code) => fail(new Error(`SQLite rollup thread exited (code ${code}).`)));
    worker.on('message', (message: FromThread) => {
      if ('ready' in message) {
        ready = true;
        worker.unref();
        const ask = (message: (id: number) => ToThread) =>
          new Promise<RefreshedDay | number | null>((resolveOne, rejectOne) => {
            if (failure) return rejectOne(failure);
            const id = nextId++;
            waiting.set(id, { resolve: resolveOne, reject: rejectOne });
            worker.ref();
            worker.postMessage(message(id));
          });
        resolve({
          refreshNext: async (beforeDay, skip = []) => (await ask((id) => ({ id, beforeDay, skip }))) as RefreshedDay | null,
          keepFiltered: async (keep) => (await ask((id) => ({ id, keep }))) as number,
          keepSessionDays: async (keepSessionDays) => (await ask((id) => ({ id, keepSessionDays }))) as number,
          keepEstimates: async (keepEstimates) => (await ask((id) => ({ id, keepEstimates }))) as number,
          close: async () => {
            if (failure) return;
            worker.ref();
            worker.postMessage({ close: true } satisfies ToThread);
            await exited;
          },
        });
        return;
      }
      const w = waiting.get(message.id);
      if (!w) return;
      waiting.delete(message.id);
      if (waiting.size === 0) worker.unref();
      if ('result' in message) w.resolve(message.result);
      else w.reject(fromThreadError('SQLite rollup refresh', message.error));
    });
  });
}
