import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { StoreError } from '../store-error.js';
import { THREAD_PRELUDE, type ThreadError, fromThreadError, toThreadError } from './thread-program.js';
import { createSketchKit } from '../aggregates/visitor-sketch.js';
import { registerSketchOf } from './sketch-of-function.js';

/*
 * The SQLite store's reads (reports, the read API, the export) run on threads of their own, each on
 * a read-only connection: better-sqlite3 is synchronous, and a report over a large range held the
 * request thread, so `/healthz` and every project's ingest waited for it (docs/decisions.md,
 * "Reads off the request thread"). WAL lets these connections read a snapshot beside the writer
 * thread's commits. Reads wait in one queue and each thread takes the next when it is free.
 *
 * Each read has a time budget, counted from its call (a read waiting behind others counts its
 * wait). Past it the read is refused with `StoreError('BUSY')`, which the server answers 503 with
 * `Retry-After`. A read still running then cannot be stopped (better-sqlite3 has no interrupt, and
 * a thread's termination waits for the native call to return), so its thread is abandoned to
 * finish on its own and a new one takes the next reads, but only while fewer threads than the
 * reader has are reading: reads wait for a runaway to end, and past their budget are refused too.
 * The server then spends at most as many cores on runaway reads as the reader has threads. The
 * threads run at a lower priority than the others (Linux), so reads take what ingest leaves of
 * the cores.
 *
 * What a runaway computes is not thrown away: the same read asked again (the same statement and
 * values: the client's retry after `Retry-After`) waits for the runaway's answer within its own
 * budget rather than running a second copy, and once the runaway has ended its answer is kept for
 * `keptAnswerMs` for such a retry. A report too heavy for one budget is so answered on a retry
 * (docs/protocol.md, "Errors and limits of the reports"). Answers of reads within their budget are
 * never kept: every other read sees the database as it is.
 */

/** Values of a statement: positional, or named (`@name`). */
export type ReadValues = readonly unknown[] | Readonly<Record<string, unknown>>;

/** Options of {@link startSqliteReader}. */
export interface SqliteReaderOptions {
  /** Database file, with its schema (the store creates both first). */
  path: string;
  busyTimeoutMs: number;
  /** The time budget of one read, from its call, ms. */
  budgetMs: number;
  /**
   * The threads' nice value (Linux; 0 normal, 19 lowest): the background's reads run below the
   * reports'. @default 10
   */
  niceness?: number;
  /**
   * How many threads read (a positive integer), each a read at a time from one queue: with two, a
   * read never waits behind one long read. @default 1
   */
  threads?: number;
  /**
   * How many of the threads may run scans (`all`'s `scan`) at once, abandoned ones included (a
   * positive integer): at most all but one, so other reads always have a thread, but for a reader
   * of one thread, where scans and other reads take turns. @default all but one (at least one)
   */
  scanThreads?: number;
  /**
   * How long the answer of a read refused past its budget is kept, once its thread has finished
   * it, for the same read asked again; 0 turns both off (a retry runs the read again, its thread
   * ends with it). @default 60000
   */
  keptAnswerMs?: number;
}

/** The reader's threads, seen from the request thread. */
export interface SqliteReader {
  /**
   * Runs a read-only statement and resolves with its rows. With `scan` (a read whose cost grows
   * with the data: a report from the events of its range), it runs on `scanThreads` threads at
   * most, abandoned ones included, so that other reads never all wait behind such reads.
   * @throws StoreError `BUSY` past the budget
   */
  all(sql: string, values: ReadValues, options?: { scan?: boolean }): Promise<Array<Record<string, unknown>>>;
  /**
   * Forgets the answers kept for retries and lets no read join or keep the answer of a runaway
   * that started before: after an erasure or a purge, no read answers with rows it removed.
   */
  forget(): void;
  /**
   * Ends the threads: waits for the idle ones; a read still in flight is refused and its thread
   * left to end with the process (as are abandoned ones), so that closing never waits for a query.
   */
  close(): Promise<void>;
}

interface ReaderThreadData {
  driverPath: string;
  path: string;
  busyTimeoutMs: number;
  /** The reader thread's nice value (0 normal, 19 lowest). */
  niceness: number;
}

type ToReader = { id: number; sql: string; values: ReadValues } | { close: true };
type FromReader = { ready: true } | ({ id: number } & PackedRows) | { id: number; error: ThreadError };

/**
 * A statement's rows as they cross from the reader thread: the column names once, every cell in
 * one array (row after row), and the bytes of every blob in one buffer that is moved, not copied.
 * Cloning each row as an object with a Buffer of its own per blob cost more than the query itself
 * for a report of a few thousand rows with sketches.
 */
interface PackedRows {
  names: string[];
  /** `names.length` cells per row; a blob's cell is null here. */
  cells: unknown[];
  /** Where each blob's cell is in `cells`. */
  blobAt: Int32Array;
  /** Where each blob's bytes end in `bytes` (each starts where the one before ends). */
  blobEnds: Int32Array;
  bytes: Uint8Array;
}

/** The rows of a {@link PackedRows}, each blob a Buffer over the moved bytes. */
function unpackRows(packed: PackedRows): Array<Record<string, unknown>> {
  const { names, cells, blobAt, blobEnds, bytes } = packed;
  const width = names.length;
  const rows: Array<Record<string, unknown>> = [];
  if (width === 0) return rows;
  for (let at = 0; at < cells.length; at += width) {
    const row: Record<string, unknown> = {};
    for (let c = 0; c < width; c++) row[names[c] as string] = cells[at + c];
    rows.push(row);
  }
  let start = 0;
  for (let k = 0; k < blobAt.length; k++) {
    const cell = blobAt[k] as number;
    const end = blobEnds[k] as number;
    (rows[Math.floor(cell / width)] as Record<string, unknown>)[names[cell % width] as string] = Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start);
    start = end;
  }
  return rows;
}

interface Port {
  on(event: 'message', listener: (message: ToReader) => void): void;
  postMessage(message: FromReader, transfer?: ArrayBuffer[]): void;
  close(): void;
}

/** The reader thread's program, sent as source text like the writer's (`sqlite-writer.ts`): self-contained. */
function readerThreadMain(
  load: (id: string) => unknown,
  data: ReaderThreadData,
  port: Port,
  toError: typeof toThreadError,
  createKit: typeof createSketchKit,
  registerSketch: typeof registerSketchOf,
): void {
  // Below the request and writer threads: on Linux a thread's nice value is its own, and
  // setPriority's pid 0 is the calling thread. Where that fails (another system, no permission to
  // change it), reads run at the process's priority.
  try {
    (load('node:os') as typeof import('node:os')).setPriority(data.niceness);
  } catch {
    // Left as it is.
  }
  const Driver = load(data.driverPath) as typeof Database;
  const db = new Driver(data.path, { readonly: true, fileMustExist: true });
  db.pragma(`busy_timeout = ${data.busyTimeoutMs}`);
  db.pragma('cache_size = -32000');
  registerSketch(db, createKit());
  const statements = new Map<string, Database.Statement>();
  port.on('message', (message) => {
    if ('close' in message) {
      db.close();
      port.close();
      return;
    }
    try {
      let statement = statements.get(message.sql);
      if (statement === undefined) {
        statement = db.prepare(message.sql);
        // Rows as arrays (packed below); a statement that returns none is refused by all() itself.
        if (statement.reader) statement.raw(true);
        // Report shapes are a few hundred at most; bound them all the same.
        if (statements.size >= 500) statements.clear();
        statements.set(message.sql, statement);
      }
      const rows = (Array.isArray(message.values) ? statement.all(...(message.values as unknown[])) : statement.all(message.values)) as unknown[][];
      // Packed (PackedRows): the names once, the cells in one array, the blobs' bytes in one moved buffer.
      const cells: unknown[] = [];
      const blobs: Uint8Array[] = [];
      const at: number[] = [];
      let size = 0;
      for (const row of rows) {
        for (const cell of row) {
          if (cell instanceof Uint8Array) {
            at.push(cells.length);
            blobs.push(cell);
            size += cell.length;
            cells.push(null);
          } else {
            cells.push(cell);
          }
        }
      }
      const bytes = new Uint8Array(size);
      const blobEnds = new Int32Array(blobs.length);
      let end = 0;
      for (let k = 0; k < blobs.length; k++) {
        bytes.set(blobs[k] as Uint8Array, end);
        end += (blobs[k] as Uint8Array).length;
        blobEnds[k] = end;
      }
      const names = statement.columns().map((column) => column.name);
      port.postMessage({ id: message.id, names, cells, blobAt: Int32Array.from(at), blobEnds, bytes }, [bytes.buffer]);
    } catch (error) {
      port.postMessage({ id: message.id, error: toError(error) });
    }
  });
  port.postMessage({ ready: true });
}

const READER_SOURCE = `${THREAD_PRELUDE}(${readerThreadMain.toString()})(require, workerData, parentPort, ${toThreadError.toString()}, ${createSketchKit.toString()}, ${registerSketchOf.toString()});`;

interface Read {
  id: number;
  sql: string;
  values: ReadValues;
  key: string | null;
  /** A read whose cost grows with the data (`SqliteReader.all`'s `scan`). */
  scan: boolean;
  resolve(rows: Array<Record<string, unknown>>): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The reader thread's nice value: when the cores are busy, ingest and `/healthz` (the request and
 * writer threads, at 0) get about ten times its share of a core; idle cores it uses in full.
 */
const READER_NICENESS = 10;

/**
 * The refusal of a read past its budget; `continues` when its thread goes on with it and the same
 * read asked again gets that answer.
 */
function overBudget(budgetMs: number, continues = false): StoreError {
  return new StoreError('BUSY', `The database did not answer this read within its budget of ${budgetMs} ms; retry later.`, { continues });
}

/** A read refused past its budget whose thread still runs it, and the same reads asked since. */
interface Runaway {
  key: string;
  /** The reader's {@link SqliteReader.forget} generation when the read was asked. */
  generation: number;
  /** Reads waiting for its answer, each within its own budget. */
  joined: Set<Read>;
}

/** The answer of a runaway that ended, kept for the same read asked again. */
interface KeptAnswer {
  answer: PackedRows;
  until: number;
  /** Its memory, about ({@link sizeOf}). */
  size: number;
}

/** How many answers are kept at most, and in how much memory all told (a larger answer is not kept). */
const MAX_KEPT_ANSWERS = 16;
const MAX_KEPT_BYTES = 64 * 1024 * 1024;
/** What a cell costs in memory besides a string's characters, about: its slot and the value's header. */
const CELL_BYTES = 32;

/** The memory of an answer, about: its blobs, and each cell with a string's two bytes a character. */
function sizeOf(answer: PackedRows): number {
  let size = answer.bytes.byteLength;
  for (const cell of answer.cells) size += CELL_BYTES + (typeof cell === 'string' ? 2 * cell.length : 0);
  return size;
}

/** The same read's key: its statement and values (null when the values have no JSON form: never joined or kept). */
function keyOf(sql: string, values: ReadValues): string | null {
  try {
    return `${sql}\u0000${JSON.stringify(values)}`;
  } catch {
    return null;
  }
}

/** One thread of the reader: the worker it runs on now, and the read it is running. */
interface Lane {
  current: Worker | null;
  starting: Promise<Worker> | null;
  running: Read | null;
}

/** Starts the reader's threads and resolves once their connections are open. */
export async function startSqliteReader(options: SqliteReaderOptions): Promise<SqliteReader> {
  const data: ReaderThreadData = {
    driverPath: createRequire(import.meta.url).resolve('better-sqlite3'),
    path: options.path,
    busyTimeoutMs: options.busyTimeoutMs,
    niceness: options.niceness ?? READER_NICENESS,
  };
  for (const [name, value] of [['threads', options.threads], ['scanThreads', options.scanThreads]] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1)) throw new RangeError(`SQLite reader: ${name} must be a positive integer, not ${value}`);
  }
  const threads = options.threads ?? 1;
  let nextId = 1;
  // Reads wait here and go to a free thread one at a time, so a read that is refused before its
  // turn never reaches a thread at all.
  const queue: Read[] = [];
  const lanes: Lane[] = Array.from({ length: threads }, () => ({ current: null, starting: null, running: null }));
  /** Threads left to finish a read past its budget, and how many of those reads are scans. */
  let abandoned = 0;
  let abandonedScans = 0;
  let closed = false;
  /** The threads given up on, by the read each still runs. */
  const runaways = new Map<Worker, Runaway>();
  const kept = new Map<string, KeptAnswer>();
  const keptAnswerMs = options.keptAnswerMs ?? 60_000;
  /** Raised by `forget()`: a runaway of an earlier generation is neither joined nor kept. */
  let generation = 0;

  /** A runaway's thread answered: the reads joined to it get its answer, which is kept for more; then the thread ends. */
  function finish(worker: Worker, runaway: Runaway, message: FromReader): void {
    runaways.delete(worker);
    void worker.terminate();
    if ('ready' in message) return;
    for (const read of runaway.joined) {
      clearTimeout(read.timer);
      if ('cells' in message) read.resolve(unpackRows(message));
      else read.reject(fromThreadError('SQLite reader', message.error));
    }
    if (!('cells' in message) || closed || runaway.generation !== generation) return;
    const size = sizeOf(message);
    if (size > MAX_KEPT_BYTES) return;
    const entry: KeptAnswer = { answer: message, until: Date.now() + keptAnswerMs, size };
    kept.delete(runaway.key);
    kept.set(runaway.key, entry);
    setTimeout(() => kept.get(runaway.key) === entry && kept.delete(runaway.key), keptAnswerMs).unref();
    // Within the bounds, the oldest go first (a Map iterates in insertion order).
    let total = 0;
    for (const answer of kept.values()) total += answer.size;
    for (const [key, answer] of kept) {
      if (kept.size <= MAX_KEPT_ANSWERS && total <= MAX_KEPT_BYTES) break;
      kept.delete(key);
      total -= answer.size;
    }
  }

  const spawn = (lane: Lane): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = new Worker(READER_SOURCE, { eval: true, workerData: data });
      let ready = false;
      worker.on('message', (message: FromReader) => {
        if ('ready' in message) {
          ready = true;
          resolve(worker);
          return;
        }
        const runaway = runaways.get(worker);
        if (runaway !== undefined) return void finish(worker, runaway, message);
        if (worker !== lane.current || lane.running === null || lane.running.id !== message.id) return;
        const read = lane.running;
        lane.running = null;
        clearTimeout(read.timer);
        if ('cells' in message) read.resolve(unpackRows(message));
        else read.reject(fromThreadError('SQLite reader', message.error));
        pump();
      });
      const fail = (error: Error): void => {
        if (!ready) reject(error);
        if (worker !== lane.current) return;
        lane.current = null;
        if (lane.running !== null) {
          clearTimeout(lane.running.timer);
          lane.running.reject(error);
          lane.running = null;
        }
        pump();
      };
      worker.on('error', (error) => fail(new Error(`SQLite reader thread failed: ${error.message}`, { cause: error })));
      worker.on('exit', (code) => fail(new Error(`SQLite reader thread exited (code ${code}).`)));
    });

  /** Threads that are reading or may read: each lane's, starting or started, and the abandoned ones. */
  const live = () => abandoned + lanes.filter((lane) => lane.current !== null || lane.starting !== null).length;

  function start(lane: Lane): void {
    lane.starting = spawn(lane);
    lane.starting.then(
      (worker) => {
        lane.starting = null;
        lane.current = worker;
        pump();
      },
      (error: unknown) => {
        lane.starting = null;
        // With no other thread to take them, the reads waiting cannot be answered.
        if (live() > 0) return;
        for (const read of queue.splice(0)) {
          clearTimeout(read.timer);
          read.reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
    );
  }

  /** Scans may run on this many threads at once: never all of them, so other reads always have one. */
  const maxScans = Math.max(1, Math.min(threads - 1, options.scanThreads ?? threads - 1));

  function pump(): void {
    if (closed) return;
    for (const lane of lanes) {
      if (queue.length === 0) break;
      if (lane.running !== null || lane.starting !== null) continue;
      if (lane.current === null) {
        // A thread given up on still reads: a new one starts only while fewer than `threads` read.
        if (live() < threads) start(lane);
        continue;
      }
      // The first read that may run: a scan waits while scans hold the threads they may (`maxScans`).
      const scans = abandonedScans + lanes.filter((other) => other.running?.scan === true).length;
      const next = queue.findIndex((read) => !read.scan || scans < maxScans);
      if (next === -1) break;
      const read = queue.splice(next, 1)[0] as Read;
      lane.running = read;
      lane.current.ref();
      lane.current.postMessage({ id: read.id, sql: read.sql, values: read.values } satisfies ToReader);
    }
    // An idle thread does not keep the process alive.
    for (const lane of lanes) if (lane.running === null) lane.current?.unref();
  }

  /** A read whose budget ran out: refused, and its thread given up if it was running there. */
  function expire(read: Read): void {
    for (const runaway of runaways.values()) {
      if (runaway.joined.delete(read)) return void read.reject(overBudget(options.budgetMs, runaway.generation === generation));
    }
    const waiting = queue.indexOf(read);
    if (waiting !== -1) {
      queue.splice(waiting, 1);
      read.reject(overBudget(options.budgetMs));
      return;
    }
    const lane = lanes.find((candidate) => candidate.running === read);
    if (lane === undefined || lane.current === null) return;
    lane.running = null;
    read.reject(overBudget(options.budgetMs, read.key !== null));
    const worker = lane.current;
    lane.current = null;
    abandoned++;
    // A scan given up on still scans until its thread ends: it holds its place among the scans.
    if (read.scan) abandonedScans++;
    worker.unref();
    // Its answer ends it (`finish`); the exit lets the next thread start. The same read waiting in
    // the queue waits for that answer rather than run a second copy.
    if (read.key !== null) {
      const joined = new Set(queue.filter((other) => other.key === read.key));
      for (const other of joined) queue.splice(queue.indexOf(other), 1);
      runaways.set(worker, { key: read.key, generation, joined });
    } else {
      void worker.terminate();
    }
    worker.once('exit', (code) => {
      abandoned--;
      if (read.scan) abandonedScans--;
      // Ended without an answer (it died): the reads joined to it cannot get one.
      for (const joined of runaways.get(worker)?.joined ?? []) {
        clearTimeout(joined.timer);
        joined.reject(new Error(`SQLite reader thread exited (code ${code}).`));
      }
      runaways.delete(worker);
      pump();
    });
    pump();
  }

  const starts = await Promise.allSettled(lanes.map((lane) => spawn(lane)));
  const failed = starts.find((start) => start.status === 'rejected');
  if (failed !== undefined) {
    // The threads that did start must not outlive a reader that never was.
    for (const start of starts) if (start.status === 'fulfilled') void start.value.terminate();
    throw failed.reason;
  }
  lanes.forEach((lane, i) => {
    lane.current = (starts[i] as PromiseFulfilledResult<Worker>).value;
    lane.current.unref();
  });

  return {
    all(sql, values, readOptions) {
      if (closed) return Promise.reject(new StoreError('NOT_OPEN', 'The SQLite store is closed.'));
      const key = keptAnswerMs > 0 ? keyOf(sql, values) : null;
      const answer = key === null ? undefined : kept.get(key);
      if (answer !== undefined && answer.until > Date.now()) return Promise.resolve(unpackRows(answer.answer));
      return new Promise((resolve, reject) => {
        const read: Read = { id: nextId++, sql, values, key, scan: readOptions?.scan === true, resolve, reject, timer: setTimeout(() => expire(read), options.budgetMs) };
        read.timer.unref();
        // The same read still running past its budget: its answer, rather than a second copy of it.
        for (const runaway of runaways.values()) if (runaway.key === key && runaway.generation === generation) return void runaway.joined.add(read);
        queue.push(read);
        pump();
      });
    },
    forget() {
      generation++;
      kept.clear();
    },
    async close() {
      if (closed) return;
      closed = true;
      kept.clear();
      const joined = [...runaways.values()].flatMap((runaway) => [...runaway.joined.values()]);
      for (const runaway of runaways.values()) runaway.joined.clear();
      for (const read of [...queue.splice(0), ...joined]) {
        clearTimeout(read.timer);
        read.reject(new StoreError('NOT_OPEN', 'The SQLite store is closed.'));
      }
      await Promise.all(
        lanes.map(async (lane) => {
          const worker = lane.current ?? (await lane.starting?.catch(() => null)) ?? null;
          if (worker === null) return;
          if (lane.running !== null) {
            // A read in flight may take as long as its query does (no interrupt): refused now, its
            // thread left to end with the process, so that shutdown never waits for a report.
            clearTimeout(lane.running.timer);
            lane.running.reject(new StoreError('NOT_OPEN', 'The SQLite store is closed.'));
            lane.running = null;
            lane.current = null;
            worker.unref();
            void worker.terminate();
            return;
          }
          const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
          worker.ref();
          worker.postMessage({ close: true } satisfies ToReader);
          await exited;
        }),
      );
    },
  };
}
