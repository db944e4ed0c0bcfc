import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { type Durability, sqliteSynchronous } from '../durability.js';
import type { DeletedUser, WriteBatch, WriteResult } from '../event-store.js';
import { cleanJson, cleanText } from '../shared/sanitize.js';
import { type Cleaners, type CommitAggregates, type EncodedBatch, encodeBatch, prepareEventWriter, transferablesOf } from './sqlite-event-writer.js';
import { SQLITE_AGGREGATES_SOURCE } from './sqlite-aggregates.js';
import { type SqliteErasureSql, prepareSqliteUserErasure, sqliteErasureSql } from './sqlite-erasure.js';
import { THREAD_PRELUDE, type ThreadError, fromThreadError, toThreadError } from './thread-program.js';

/*
 * The SQLite store's group commits run on a thread of their own. better-sqlite3 is synchronous:
 * on the request thread every commit (inserts, index updates, WAL writes, checkpoints) stopped all
 * HTTP work for its whole duration, which was most of the server's time under load. On the writer
 * thread the commit overlaps with reading, validating and answering the next requests, and the
 * request thread only serializes the properties and hands flat column values over
 * (`encodeBatch`; its typed arrays are transferred, not copied). Reads run on the reader thread
 * (`sqlite-reader.ts`), whose connection WAL lets read beside the writer, seeing a group as soon as
 * its commit was answered; credential lookups and other small reads stay on the request thread's
 * own connection. A third thread checkpoints the WAL, so the writer does not wait for the disk either.
 */

/** Options of {@link startSqliteWriter}. */
export interface SqliteWriterOptions {
  /** Database file; it must exist with its schema (the store creates both first). */
  path: string;
  busyTimeoutMs: number;
  /** SQLite's `synchronous` on the writer's and the checkpointer's connections (`durability.ts`). */
  durability: Durability;
}

/** The writer thread, seen from the request thread. */
export interface SqliteWriter {
  /** Commits a group in one transaction on the writer thread. */
  write(batch: WriteBatch): Promise<WriteResult>;
  /** Erases a user (`sqlite-erasure.ts`) in one transaction on the writer thread, in turn with the group commits. */
  eraseUser(projectId: string, userId: string): Promise<DeletedUser>;
  /** Lets queued writes finish, then closes the writer's connection and ends the thread. */
  close(): Promise<void>;
}

interface WriterThreadData {
  driverPath: string;
  path: string;
  busyTimeoutMs: number;
  synchronous: 'FULL' | 'NORMAL';
  /** WAL size past which the writer checkpoints itself, bytes. */
  walBackstopBytes: number;
  /** How often the checkpointer copies the WAL into the database, ms. */
  checkpointEveryMs: number;
  erasure: SqliteErasureSql;
}

type ToWriter = { id: number; batch: EncodedBatch } | { id: number; erase: { projectId: string; userId: string } } | { close: true };
type FromWriter = { ready: true } | { id: number; result: WriteResult | DeletedUser } | { id: number; error: ThreadError };

interface Port {
  on(event: 'message', listener: (message: ToWriter) => void): void;
  postMessage(message: FromWriter): void;
  close(): void;
}

/**
 * The writer thread's program. It is sent as source text (so it runs the same from the TypeScript
 * sources under test, from a bundle and from `dist/`, with no file to locate), and must therefore
 * stay self-contained, like `prepareEventWriter`. Messages are handled one at a time, in order.
 */
function writerThreadMain(
  load: (id: string) => unknown,
  data: WriterThreadData,
  port: Port,
  clean: Cleaners,
  prepare: typeof prepareEventWriter,
  toError: typeof toThreadError,
  openAggregates: (db: Database.Database) => CommitAggregates,
  prepareErasure: typeof prepareSqliteUserErasure,
): void {
  const Driver = load(data.driverPath) as typeof Database;
  const db = new Driver(data.path);
  db.pragma(`synchronous = ${data.synchronous}`);
  db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  db.pragma('cache_size = -32000');
  // Checkpoints are the checkpointer thread's job; this threshold is only a backstop that bounds the
  // WAL should that thread fall behind or die (SQLite's default, 1,000 pages, made every few
  // commits wait for a copy and an fsync, which cost a clear share of the ingest rate; the
  // store's figures are in bench/RESULTS.md).
  // In pages of this database's own size (4 KB for a file made before 16 KB pages were the default).
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${Math.ceil(data.walBackstopBytes / pageSize)}`);
  db.pragma(`journal_size_limit = ${data.walBackstopBytes}`);
  const aggregates = openAggregates(db);
  const write = prepare(db, clean, aggregates);
  const erase = prepareErasure(db, aggregates, data.erasure);
  port.on('message', (message) => {
    if ('close' in message) {
      db.close();
      port.close();
      return;
    }
    try {
      const result = 'erase' in message ? erase(message.erase.projectId, message.erase.userId) : write(message.batch);
      port.postMessage({ id: message.id, result });
    } catch (error) {
      port.postMessage({ id: message.id, error: toError(error) });
    }
  });
  port.postMessage({ ready: true });
}

/**
 * The checkpointer thread's program (self-contained, like the writer's): on a connection of its
 * own it copies committed WAL pages into the database file every `checkpointEveryMs`. PASSIVE never
 * blocks the writer, so the writer keeps committing while the copy and its fsyncs wait for the disk.
 */
function checkpointerThreadMain(load: (id: string) => unknown, data: WriterThreadData, port: Port): void {
  const Driver = load(data.driverPath) as typeof Database;
  const db = new Driver(data.path);
  db.pragma(`synchronous = ${data.synchronous}`);
  db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), data.checkpointEveryMs);
  port.on('message', () => {
    clearInterval(timer);
    db.close();
    port.close();
  });
  port.postMessage({ ready: true });
}

const WRITER_SOURCE = `${THREAD_PRELUDE}(${writerThreadMain.toString()})(require, workerData, parentPort, { cleanText: ${cleanText.toString()}, cleanJson: ${cleanJson.toString()} }, ${prepareEventWriter.toString()}, ${toThreadError.toString()}, ${SQLITE_AGGREGATES_SOURCE}, ${prepareSqliteUserErasure.toString()});`;
const CHECKPOINTER_SOURCE = `${THREAD_PRELUDE}(${checkpointerThreadMain.toString()})(require, workerData, parentPort);`;

interface Waiting {
  resolve(result: WriteResult | DeletedUser): void;
  reject(error: Error): void;
}

/**
 * Starts the writer thread and resolves once its connection is open. A thread that dies fails the
 * writes it had and is started again by the next write.
 */
export async function startSqliteWriter(options: SqliteWriterOptions): Promise<SqliteWriter> {
  const data: WriterThreadData = {
    driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs,
    synchronous: sqliteSynchronous(options.durability),
    walBackstopBytes: 40_960_000,
    checkpointEveryMs: 100,
    erasure: sqliteErasureSql(),
  };
  let nextId = 1;
  const waiting = new Map<number, Waiting>();
  let closing: Promise<void> | null = null;
  let current: Worker | null = null;
  let starting: Promise<Worker> | null = null;

  const spawn = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(WRITER_SOURCE, { eval: true, workerData: data });
      let ready = false;
      worker.on('message', (message: FromWriter) => {
        if ('ready' in message) {
          ready = true;
          // Idle, the thread must not keep the process alive; `write` refs it while a group is out.
          if (waiting.size === 0) worker.unref();
          resolve(worker);
          return;
        }
        const w = waiting.get(message.id);
        if (!w) return;
        waiting.delete(message.id);
        if (waiting.size === 0) worker.unref();
        if ('result' in message) w.resolve(message.result);
        else w.reject(fromThreadError('SQLite writer', message.error));
      });
      const fail = (error: Error): void => {
        if (current === worker) current = null;
        if (!ready) reject(error);
        for (const w of waiting.values()) w.reject(error);
        waiting.clear();
      };
      worker.on('error', (error) => fail(new Error(`SQLite writer thread failed: ${error.message}`, { cause: error })));
      worker.on('exit', (code) => fail(new Error(`SQLite writer thread exited (code ${code}).`)));
    });

  current = await spawn();
  // Not essential: should it fail, the writer's backstop still bounds the WAL.
  const checkpointer = new Worker(CHECKPOINTER_SOURCE, { eval: true, workerData: data });
  checkpointer.on('error', () => {});
  const checkpointerExited = new Promise<void>((resolve) => checkpointer.once('exit', () => resolve()));
  // After the listeners, which would ref it again: the checkpointer never keeps the process alive.
  checkpointer.unref();

  /** Posts a message to the writer thread (started again after a crash) and resolves with its answer. */
  const send = async (message: (id: number) => { message: ToWriter; transfer?: ArrayBuffer[] }): Promise<WriteResult | DeletedUser> => {
    if (closing) throw new Error('The SQLite writer is closed.');
    if (!current) {
      // After a crash: the writes that arrive while a new thread starts all wait for that one.
      starting ??= spawn().finally(() => (starting = null));
      current = await starting;
    }
    const worker = current;
    const id = nextId++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      worker.ref();
      const out = message(id);
      worker.postMessage(out.message, out.transfer ?? []);
    });
  };

  return {
    async write(batch) {
      const result = await send((id) => {
        const encoded = encodeBatch(batch);
        return { message: { id, batch: encoded }, transfer: transferablesOf(encoded) };
      });
      return result as WriteResult;
    },
    async eraseUser(projectId, userId) {
      return (await send((id) => ({ message: { id, erase: { projectId, userId } } }))) as DeletedUser;
    },
    close() {
      if (closing) return closing;
      // Both stay ref'd until they have exited, or the process could end with the close half done.
      const writerExited = new Promise<void>((resolve) => {
        const worker = current;
        if (!worker) return resolve();
        worker.ref();
        worker.once('exit', () => resolve());
        // The close message queues behind every write already posted, so those still commit.
        worker.postMessage({ close: true } satisfies ToWriter);
      });
      checkpointer.ref();
      checkpointer.postMessage({ close: true } satisfies ToWriter);
      closing = Promise.all([writerExited, checkpointerExited]).then(() => {});
      return closing;
    },
  };
}
