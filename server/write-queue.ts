import type { EventStore, StoredEvent, StoredRecordingChunk, WriteResult } from './store/event-store.js';
import { HttpError } from './http-error.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';

/** Items (events + chunks) waiting for a commit at most, by default: {@link WriteQueueOptions.maxPendingItems}. */
export const DEFAULT_MAX_PENDING_ITEMS = 50_000;

/** Items waiting before a second group overlaps the first, by default: {@link WriteQueueOptions.overlapMinItems}. */
export const DEFAULT_OVERLAP_MIN_ITEMS = 250;

/** Options of the group-commit write queue. */
export interface WriteQueueOptions {
  /**
   * Items (events + chunks) allowed to wait for a commit; beyond it requests are refused with
   * 503 `STORAGE_UNAVAILABLE` and `Retry-After` instead of buffering without limit.
   * @default 50000
   */
  maxPendingItems?: number;
  /** Largest group written in one transaction. @default 2000 */
  maxGroupItems?: number;
  /**
   * Groups in flight at once. PostgreSQL gains from a second connection, whose commit overlaps the
   * first's (the write path's figures are in bench/RESULTS.md, "Server ingest"); SQLite's writer
   * thread commits one at a time, and the second group waits there, ready to start the moment the
   * first is done instead of after a round trip through this thread.
   * @default 2
   */
  concurrency?: number;
  /**
   * Items that must be waiting before a group starts beside one already in flight; fewer wait for
   * the next commit to come back and join the group formed then. Without it a second group left
   * as soon as anything waited, and under load PostgreSQL's groups held about 120 events, where
   * larger groups cost less CPU per event (docs/decisions.md, "Group commit and commit-before-answer").
   * @default 250
   */
  overlapMinItems?: number;
  /** Seconds a refused client is told to wait. @default 1 */
  retryAfterSeconds?: number;
}

interface Pending {
  /** Emptied once the request's writes joined a group, so that nothing here keeps them alive. */
  events: StoredEvent[];
  chunks: StoredRecordingChunk[];
  eventCount: number;
  chunkCount: number;
  resolve(result: WriteResult): void;
  reject(error: unknown): void;
}

const NONE: never[] = [];

/**
 * Hands a group to the store. A function of its own, so that the closures waiting for the commit
 * do not share a scope with the group's events: once the store has encoded them (the SQLite store
 * does at once), they can be collected while the commit runs, before they grow old in the heap.
 */
function writeGroup(store: EventStore, events: StoredEvent[], chunks: StoredRecordingChunk[]): Promise<WriteResult> {
  // A store that throws synchronously must fail this group, not the process.
  return new Promise<WriteResult>((resolve) => resolve(store.write({ events, chunks })));
}

/** Group commit: requests submit their writes and get an answer only after the shared commit. */
export interface WriteQueue {
  /** Queues a request's writes; resolves with its own part of the result after commit. */
  submit(events: StoredEvent[], chunks: StoredRecordingChunk[]): Promise<WriteResult>;
  /** Items waiting or being written. */
  depth(): number;
  /** Resolves when everything submitted so far is committed (or failed). */
  drain(): Promise<void>;
}

/**
 * Creates the write queue. Writes submitted while a commit runs, or in the same turn of the event
 * loop, are written together in one transaction (`setImmediate` lets every request whose body has
 * arrived join), so throughput is not one transaction per request.
 */
export function createWriteQueue(store: EventStore, logger: Logger, metrics: Metrics, options: WriteQueueOptions = {}): WriteQueue {
  const maxPending = options.maxPendingItems ?? DEFAULT_MAX_PENDING_ITEMS;
  const maxGroup = options.maxGroupItems ?? 2000;
  const concurrency = options.concurrency ?? 2;
  const overlapMin = options.overlapMinItems ?? DEFAULT_OVERLAP_MIN_ITEMS;
  const retryAfter = String(options.retryAfterSeconds ?? 1);

  let waiting: Pending[] = [];
  let waitingItems = 0;
  let writingItems = 0;
  let inFlight = 0;
  let scheduled = false;
  const idle: Array<() => void> = [];

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(pump);
  };

  function pump(): void {
    scheduled = false;
    // A commit in flight always comes back and pumps again, so what waits here is never stranded.
    while (inFlight < concurrency && waiting.length > 0 && (inFlight === 0 || waitingItems >= overlapMin)) commitGroup(takeGroup());
    if (inFlight === 0 && waiting.length === 0) for (const done of idle.splice(0)) done();
  }

  function takeGroup(): Pending[] {
    let items = 0;
    let n = 0;
    while (n < waiting.length) {
      const p = waiting[n] as Pending;
      const size = p.eventCount + p.chunkCount;
      if (n > 0 && items + size > maxGroup) break;
      items += size;
      n++;
    }
    const group = waiting.slice(0, n);
    waiting = waiting.slice(n);
    waitingItems -= items;
    writingItems += items;
    return group;
  }

  function commitGroup(group: Pending[]): void {
    inFlight++;
    const events: StoredEvent[] = [];
    const chunks: StoredRecordingChunk[] = [];
    for (const p of group) {
      for (const e of p.events) events.push(e);
      for (const c of p.chunks) chunks.push(c);
      p.events = NONE;
      p.chunks = NONE;
    }
    const items = events.length + chunks.length;
    const started = performance.now();
    writeGroup(store, events, chunks).then(
      (result) => {
        metrics.commit((performance.now() - started) / 1000, items);
        let ei = 0;
        let ci = 0;
        for (const p of group) {
          p.resolve({
            eventInserted: result.eventInserted.slice(ei, (ei += p.eventCount)),
            chunkInserted: result.chunkInserted.slice(ci, (ci += p.chunkCount)),
          });
        }
        settle(items);
      },
      (error: unknown) => {
        logger.error('group commit failed', { items, error: error instanceof Error ? error.message : String(error) });
        const refusal = new HttpError('STORAGE_UNAVAILABLE', 'The database did not accept the write; retry later.', {
          headers: { 'Retry-After': retryAfter },
          cause: error,
        });
        for (const p of group) p.reject(refusal);
        settle(items);
      },
    );
  }

  function settle(items: number): void {
    inFlight--;
    writingItems -= items;
    metrics.setQueueDepth(waitingItems + writingItems);
    schedule();
  }

  return {
    submit(events, chunks) {
      const size = events.length + chunks.length;
      if (waitingItems + writingItems + size > maxPending) {
        return Promise.reject(
          new HttpError('STORAGE_UNAVAILABLE', 'The server is busy writing; retry later.', { headers: { 'Retry-After': retryAfter } }),
        );
      }
      return new Promise<WriteResult>((resolve, reject) => {
        waiting.push({ events, chunks, eventCount: events.length, chunkCount: chunks.length, resolve, reject });
        waitingItems += size;
        metrics.setQueueDepth(waitingItems + writingItems);
        if (waitingItems >= maxGroup && inFlight < concurrency) pump();
        else schedule();
      });
    },
    depth: () => waitingItems + writingItems,
    drain() {
      if (inFlight === 0 && waiting.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idle.push(resolve));
    },
  };
}
