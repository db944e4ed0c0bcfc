/**
 * Reading the facade's mirror of unacknowledged events (`ack-mirror.ts`) back out, for the rare
 * paths: the pagehide beacon (`beacon.ts`) and a worker restart (`worker-start.ts`). Imported only
 * by those lazily loaded chunks, so that this code stays out of the facade's bundle.
 */
import type { EventColumns, EventRun } from '../../protocol/event-model/event-columns.js';
import type { MirrorChunk } from './ack-mirror.js';

/** Calls `visit` for every event of `chunks` in order: its columns, its index there, its run, its overall index. */
function each(chunks: readonly EventColumns[], visit: (columns: EventColumns, i: number, run: EventRun, n: number) => void): void {
  let n = 0;
  for (const columns of chunks) {
    const { runs } = columns;
    for (let r = 0; r < runs.length; r++) {
      const end = r + 1 < runs.length ? runs[r + 1]!.start : columns.timestamps.length;
      for (let i = runs[r]!.start; i < end; i++) visit(columns, i, runs[r]!, n++);
    }
  }
}

/**
 * The events of `chunks` that `keep` accepts (by id counter, overall index, index in its columns
 * and those columns), in order, as one set of columns; no event objects are made. The chunks are
 * one client's, so their ids share one tail.
 */
export function filterColumns(
  chunks: readonly EventColumns[],
  keep: (idCounter: number, n: number, i: number, columns: EventColumns) => boolean,
): EventColumns {
  const out: EventColumns = { idMs: [], idCounters: [], idTail: chunks[0]?.idTail ?? '', timestamps: [], names: [], properties: [], runs: [] };
  let last: EventRun | undefined;
  each(chunks, (c, i, run, n) => {
    if (!keep(c.idCounters[i]!, n, i, c)) return;
    if (last !== run) out.runs.push({ ...run, start: out.timestamps.length });
    last = run;
    out.idMs.push(c.idMs[i]!);
    out.idCounters.push(c.idCounters[i]!);
    out.timestamps.push(c.timestamps[i]!);
    out.names.push(c.names[i]);
    out.properties.push(c.properties[i]);
  });
  return out;
}

/**
 * The unsettled events of `chunks`, oldest first, as one set of columns, less those whose numbers
 * are in `skip` (ascending ranges `[from, to, …]`: the events the deferred request carries).
 */
export function liveColumns(chunks: readonly MirrorChunk[], skip: readonly number[] = []): EventColumns {
  // filterColumns visits the chunks in order: the current one is found by walking forward, and
  // within it the settled ranges by a pointer, as the numbers ascend.
  let c = -1;
  let chunk: MirrorChunk | undefined;
  let k = 0;
  let s = 0;
  return filterColumns(
    chunks.map((x) => x.columns),
    (_, _n, i, columns) => {
      if (chunk?.columns !== columns) {
        do c++;
        while (chunks[c]!.columns !== columns);
        chunk = chunks[c]!;
        k = 0;
      }
      const n = chunk.first + i;
      const r = chunk.settled;
      while (k < r.length && r[k + 1]! <= n) k += 2;
      while (s < skip.length && skip[s + 1]! <= n) s += 2;
      return !(k < r.length && r[k]! <= n) && !(s < skip.length && skip[s]! <= n);
    },
  );
}

/** The numbers, as ascending ranges (`[from, to, …]`), of the events of `chunks` whose id counter is in `counters`. */
export function rangesOfCounters(chunks: readonly MirrorChunk[], counters: ReadonlySet<number>): number[] {
  const ranges: number[] = [];
  for (const { first, columns } of chunks) {
    columns.idCounters.forEach((counter, i) => {
      if (!counters.has(counter)) return;
      // Extends the last range when adjacent: a beacon sends runs of consecutive events.
      if (ranges[ranges.length - 1] === first + i) ranges[ranges.length - 1]++;
      else ranges.push(first + i, first + i + 1);
    });
  }
  return ranges;
}
