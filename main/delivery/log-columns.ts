/**
 * Reading the client's log of unacknowledged events (`unacked-log.ts`) back out, for the rare
 * paths: the pagehide beacon (`beacon.ts`) and a worker restart's replay (`core-connection.ts`).
 * Imported only by lazily loaded chunks, so that this code stays out of the facade's bundle.
 */
import type { EventColumns, EventRun } from '../../protocol/event-model/event-columns.js';
import type { LogChunk } from './unacked-log.js';

/**
 * The unsettled events of `chunks`, oldest first, as one set of columns (no event objects are
 * made), less those whose numbers are in `skip` (ascending ranges `[from, to, …]`: the events the
 * deferred request carries). The chunks are one client's, so their ids share one tail, and their
 * numbers ascend from chunk to chunk.
 */
export function liveColumns(chunks: readonly LogChunk[], skip: readonly number[] = []): EventColumns {
  const out: EventColumns = { idMs: [], idCounters: [], idTail: chunks[0]?.columns.idTail ?? '', timestamps: [], names: [], properties: [], runs: [] };
  let last: EventRun | undefined;
  // Numbers and indices ascend: the settled and skipped ranges are each walked by a pointer.
  let s = 0;
  for (const { columns, settled } of chunks) {
    const { runs } = columns;
    let k = 0;
    for (let r = 0; r < runs.length; r++) {
      const run = runs[r]!;
      const end = r + 1 < runs.length ? runs[r + 1]!.start : columns.timestamps.length;
      for (let i = run.start; i < end; i++) {
        const n = columns.idCounters[i]!;
        while (k < settled.length && settled[k + 1]! <= i) k += 2;
        while (s < skip.length && skip[s + 1]! <= n) s += 2;
        if ((k < settled.length && settled[k]! <= i) || (s < skip.length && skip[s]! <= n)) continue;
        if (last !== run) out.runs.push({ ...run, start: out.timestamps.length });
        last = run;
        out.idMs.push(columns.idMs[i]!);
        out.idCounters.push(n);
        out.timestamps.push(columns.timestamps[i]!);
        out.names.push(columns.names[i]);
        out.properties.push(columns.properties[i]);
      }
    }
  }
  return out;
}
