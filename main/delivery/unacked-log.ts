/**
 * The client's log of unacknowledged events (docs/architecture.md, "The life of one event"): every
 * event from its push until the server accepted it, a core discarded it or a beacon sent it, kept
 * in the columns it was appended to ({@link EventColumns}: a few array pushes per event, no event
 * object, no id text) and named by its id's counter (`uuid-v7.ts`) for its whole life.
 *
 * The last chunk is open: the task's buffer, sealed when posted (`delivery-client.ts`). Ranges of
 * numbers settle events in any order (concurrent batches, retries, rejections by index); a chunk
 * goes once all of it is settled. Reading the unsettled events back out is `log-columns.ts`, for
 * the lazy chunks: this module is in the facade's bundle, and a module shared with a lazy chunk
 * becomes a chunk of its own, at a cost in bytes.
 */
import { formatEventId } from '../../protocol/event-model/event-id.js';
import type { AnalyticsEventType, EventContext, EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { DroppedIds } from '../../protocol/worker/worker-contract.js';

/** Columns of the log and which of their events are settled. */
export interface LogChunk {
  columns: EventColumns;
  /** Settled events by index in `columns`: ascending, disjoint half-open ranges, flat `[from, to, …]`. */
  settled: number[];
  /** How many of its events are settled. */
  done: number;
}

/** The log; create one with {@link createUnackedLog}. */
export interface UnackedLog {
  /** The open chunk: events not posted yet, appended to by {@link appendEvent}. */
  readonly open: LogChunk;
  /** Unsettled events, posted or not. */
  readonly size: number;
  /** The open chunk was posted: it is kept as it is, and an empty one opens. */
  seal(): void;
  /** Takes the first `n` events of the open chunk out of the log unposted; returns their ids' numbers. */
  drop(n: number): DroppedIds;
  /** Settles the numbers in `ranges` (flat `[from, to, …]`, ascending); unknown numbers are ignored. */
  settle(ranges: readonly number[]): void;
  /** Settles the oldest unsettled events until at most `cap` are left; returns their ids when `report`. */
  trim(cap: number, report: boolean): string[];
  /** The chunks held, oldest first: the posted ones, then the open one. */
  chunks(): readonly LogChunk[];
  /** Forgets every event. */
  clear(): void;
}

/** Creates an empty log for the ids ending in `idTail` (the page's, `uuid-v7.ts`). */
export function createUnackedLog(idTail: string): UnackedLog {
  let posted: LogChunk[] = [];
  /** Unsettled events of `posted`. */
  let count = 0;
  let open = chunkOf(createColumns(idTail));

  /** Settles events [a, b) of `chunk` by index; already settled ones count for nothing. */
  function mark(chunk: LogChunk, a: number, b: number): void {
    if (a >= b) return;
    const r = chunk.settled;
    let i = 0;
    while (i < r.length && r[i + 1]! < a) i += 2;
    let j = i;
    let lo = a;
    let hi = b;
    let fresh = b - a;
    for (; j < r.length && r[j]! <= b; j += 2) {
      fresh -= Math.max(0, Math.min(r[j + 1]!, b) - Math.max(r[j]!, a));
      lo = Math.min(lo, r[j]!);
      hi = Math.max(hi, r[j + 1]!);
    }
    r.splice(i, j - i, lo, hi);
    chunk.done += fresh;
    if (chunk !== open) count -= fresh;
  }

  /** Settles the numbers of `ranges` that fall in `chunk`: numbers ascend in a chunk, so by binary search. */
  function settleIn(chunk: LogChunk, ranges: readonly number[]): void {
    const numbers = chunk.columns.idCounters;
    const n = numbers.length;
    if (n === 0) return;
    for (let k = 0; k < ranges.length; k += 2) {
      if (ranges[k + 1]! <= numbers[0]!) continue;
      if (ranges[k]! > numbers[n - 1]!) break;
      mark(chunk, indexOf(numbers, ranges[k]!), indexOf(numbers, ranges[k + 1]!));
    }
  }

  function prune(): void {
    posted = posted.filter((c) => c.done < c.columns.timestamps.length);
  }

  const log: UnackedLog = {
    get open() {
      return open;
    },

    get size() {
      return count + open.columns.timestamps.length - open.done;
    },

    seal() {
      if (open.columns.timestamps.length === 0) return;
      posted.push(open);
      count += open.columns.timestamps.length - open.done;
      open = chunkOf(createColumns(idTail));
    },

    drop(n) {
      const { columns, settled } = open;
      const dropped = { idMs: columns.idMs.slice(0, n), idCounters: columns.idCounters.slice(0, n) };
      // The settled ranges move down by n; those wholly inside the dropped part go.
      const kept: number[] = [];
      let done = 0;
      for (let k = 0; k < settled.length; k += 2) {
        const from = Math.max(0, settled[k]! - n);
        const to = settled[k + 1]! - n;
        if (to > from) (kept.push(from, to), (done += to - from));
      }
      open = { columns: sliceColumns(columns, n, columns.timestamps.length), settled: kept, done };
      return dropped;
    },

    settle(ranges) {
      for (const chunk of posted) settleIn(chunk, ranges);
      settleIn(open, ranges);
      prune();
    },

    trim(cap, report) {
      const ids: string[] = [];
      for (const chunk of [...posted, open]) {
        // From the end of its settled start, if any: each step settles one event.
        for (let i = chunk.settled[0] === 0 ? chunk.settled[1]! : 0; log.size > cap && i < chunk.columns.timestamps.length; i++) {
          const done = chunk.done;
          mark(chunk, i, i + 1);
          if (report && chunk.done > done) ids.push(idOf(chunk.columns, i));
        }
      }
      prune();
      // The buffer's settled oldest leave it, so that a buffer no core takes stays bounded.
      if (open.settled[0] === 0) log.drop(open.settled[1]!);
      return ids;
    },

    chunks: () => [...posted, open],

    clear() {
      posted = [];
      count = 0;
      open = chunkOf(createColumns(idTail));
    },
  };
  return log;
}

function chunkOf(columns: EventColumns): LogChunk {
  return { columns, settled: [], done: 0 };
}

/** The index of the first of the ascending `numbers` not below `n`. */
function indexOf(numbers: readonly number[], n: number): number {
  let lo = 0;
  let hi = numbers.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (numbers[mid]! < n) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Empty columns for the ids ending in `idTail` (the page's, `uuid-v7.ts`). */
export function createColumns(idTail: string): EventColumns {
  return { idMs: [], idCounters: [], idTail, timestamps: [], names: [], properties: [], runs: [] };
}

/** The id of event `i` of `columns`, as text (for the rare paths that report ids). */
export function idOf(columns: EventColumns, i: number): string {
  return formatEventId(columns.idMs[i]!, columns.idCounters[i]!, columns.idTail);
}

/**
 * Appends one event to `columns`, field by field: the facade's funnel calls this for every event,
 * so no event object is made for it (positional, not an options object, for that reason). A new
 * run only when the type, user, session, context or alias changes.
 */
export function appendEvent(
  columns: EventColumns,
  idMs: number,
  idCounter: number,
  timestamp: number,
  type: AnalyticsEventType,
  name: string | undefined,
  properties: EventProperties | undefined,
  userId: string | undefined,
  anonymousId: string,
  sessionId: string,
  context: EventContext,
  previousId: string | undefined,
): void {
  const { runs, timestamps } = columns;
  const run = runs[runs.length - 1];
  if (
    run === undefined ||
    run.sessionId !== sessionId ||
    run.context !== context ||
    run.type !== type ||
    run.userId !== userId ||
    run.anonymousId !== anonymousId ||
    run.previousId !== previousId
  ) {
    runs.push({ start: timestamps.length, type, userId, anonymousId, sessionId, context, previousId });
  }
  columns.idMs.push(idMs);
  columns.idCounters.push(idCounter);
  timestamps.push(timestamp);
  columns.names.push(name);
  columns.properties.push(properties);
}

/** Events `from` … `to − 1` of `columns`, as columns of their own (array slices; no event objects). */
export function sliceColumns(columns: EventColumns, from: number, to: number): EventColumns {
  const { idMs, idCounters, idTail, timestamps, names, properties, runs } = columns;
  return {
    idMs: idMs.slice(from, to),
    idCounters: idCounters.slice(from, to),
    idTail,
    timestamps: timestamps.slice(from, to),
    names: names.slice(from, to),
    properties: properties.slice(from, to),
    // The runs that reach into the slice, each starting at its first event there.
    runs: runs
      .filter((run, r) => run.start < to && (runs[r + 1]?.start ?? timestamps.length) > from)
      .map((run) => ({ ...run, start: Math.max(run.start, from) - from })),
  };
}

/** What the client holds unacknowledged, for the pagehide beacon (`DeliveryClient.pending()` in `delivery-client.ts`). */
export interface PendingEvents {
  /** The log's chunks, oldest first: posted ones, then the buffer; with which events are settled. */
  chunks: readonly LogChunk[];
  /** The time zone to add to the events (the core's; undefined before one started). */
  timezone: string | undefined;
  /**
   * Numbers of the events that the armed deferred request (`fetchLater`) carries, as ascending
   * ranges (`[from, to, …]`): the browser sends them, the pagehide beacon need not.
   */
  covered: readonly number[];
  /**
   * Where the page has no `fetchLater`: the core's body of the covered events (gzip, beacon form),
   * held for the pagehide beacon to send as it is.
   */
  held?: { url: string; body: ArrayBuffer; covered: readonly number[] } | undefined;
}
