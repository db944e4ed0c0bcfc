/**
 * The facade's mirror of events posted to the core and not yet settled (acknowledged by the server,
 * discarded, or sent by beacon), for the pagehide beacon and a worker restart
 * (docs/architecture.md, "The worker boundary", "Acknowledgements back to the facade"). The posted
 * columns are kept as they are, each with the number of its first event (protocol/worker/worker-contract.ts
 * `ToWorkerMessage`); the core settles events by ranges of numbers (worker/seq-ranges.ts), in any
 * order (concurrent batches, retries, rejections by index), and each range costs the main thread a
 * few compares, however many events it covers. A chunk is dropped once all of it is settled: after
 * a burst drained, the mirror is empty again. Reading the unsettled events back out (at pagehide,
 * or for a restart) is `mirror-columns.ts`, loaded lazily, so the facade's bundle carries only what
 * every page runs.
 */
import type { EventColumns } from '../../protocol/event-model/event-columns.js';

/** Posted columns, numbered from `first`, and which of their numbers are settled. */
export interface MirrorChunk {
  first: number;
  columns: EventColumns;
  /** Settled numbers of this chunk: ascending, disjoint half-open ranges, flat `[from, to, …]`. */
  settled: number[];
  /** How many of its events are settled. */
  done: number;
}

/** The mirror; create one with {@link createAckMirror}. */
export interface AckMirror {
  /** Remembers posted `columns`, numbered `first` … `first + length − 1`. */
  add(first: number, columns: EventColumns): void;
  /** Settles the numbers in `ranges` (flat `[from, to, …]`, ascending); unknown numbers are ignored. */
  settle(ranges: readonly number[]): void;
  /** Settles the oldest unsettled events until at most `cap` are left. */
  trim(cap: number): void;
  /**
   * The chunks held, oldest first, for the rare paths (beacon, restart) in lazily loaded chunks:
   * `mirror-columns.ts` reads the unsettled events out of them.
   */
  chunks(): readonly MirrorChunk[];
  /** Forgets everything. */
  clear(): void;
  /** Unsettled events. */
  readonly size: number;
}

/** Creates an empty mirror. */
export function createAckMirror(): AckMirror {
  /** Ordered by `first`: numbers grow with every post. */
  let chunks: MirrorChunk[] = [];
  let size = 0;

  /** Settles [from, to) of `chunk`, clipped to it; drops fully settled chunks later. */
  function mark(chunk: MirrorChunk, from: number, to: number): void {
    const end = chunk.first + chunk.columns.timestamps.length;
    const a = Math.max(from, chunk.first);
    const b = Math.min(to, end);
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
    size -= fresh;
  }

  function prune(): void {
    chunks = chunks.filter((c) => c.done < c.columns.timestamps.length);
  }

  return {
    add(first, columns) {
      if (columns.timestamps.length === 0) return;
      chunks.push({ first, columns, settled: [], done: 0 });
      size += columns.timestamps.length;
    },

    settle(ranges) {
      // Both ascending: a chunk wholly before a range is before every later range too.
      let j = 0;
      for (let k = 0; k < ranges.length; k += 2) {
        const from = ranges[k]!;
        const to = ranges[k + 1]!;
        while (j < chunks.length && chunks[j]!.first + chunks[j]!.columns.timestamps.length <= from) j++;
        for (let i = j; i < chunks.length && chunks[i]!.first < to; i++) mark(chunks[i]!, from, to);
      }
      prune();
    },

    trim(cap) {
      for (const c of chunks) {
        // Each step settles the next `size − cap` numbers; those already settled count for nothing.
        for (let n = c.first, m; size > cap && n < c.first + c.columns.timestamps.length; n = m) mark(c, n, (m = n + size - cap));
      }
      prune();
    },

    chunks: () => [...chunks],

    clear() {
      chunks = [];
      size = 0;
    },

    get size() {
      return size;
    },
  };
}
