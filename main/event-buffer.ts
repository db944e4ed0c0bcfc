/**
 * The facade's events in columns ({@link EventColumns}, worker/types.ts): appended one by one at
 * the cost of four array pushes and a few compares (a new run only when the type, user, session,
 * context or alias changes), posted as they are, and kept as they are in the mirror of
 * unacknowledged events. Turning them back into objects (`event-objects.ts`) is for the rare
 * paths, a beacon at pagehide and a worker restart, in chunks loaded lazily.
 */
import type { AnalyticsEvent, EventColumns, EventRun } from '../worker/types.js';

/** Empty columns. */
export function createColumns(): EventColumns {
  return { ids: [], timestamps: [], names: [], properties: [], runs: [] };
}

/** Appends `event` to `columns`. */
export function appendEvent(columns: EventColumns, event: AnalyticsEvent): void {
  const { runs, ids } = columns;
  const run = runs[runs.length - 1];
  if (
    run === undefined ||
    run.sessionId !== event.sessionId ||
    run.context !== event.context ||
    run.type !== event.type ||
    run.userId !== event.userId ||
    run.anonymousId !== event.anonymousId ||
    run.previousId !== event.previousId
  ) {
    const { type, userId, anonymousId, sessionId, context, previousId } = event;
    runs.push({ start: ids.length, type, userId, anonymousId, sessionId, context, previousId });
  }
  ids.push(event.id);
  columns.timestamps.push(event.timestamp);
  columns.names.push(event.event);
  columns.properties.push(event.properties);
}

/** Calls `visit` for every event of `chunks` in order: its columns, its index there, its run, its overall index. */
function each(chunks: readonly EventColumns[], visit: (columns: EventColumns, i: number, run: EventRun, n: number) => void): void {
  let n = 0;
  for (const columns of chunks) {
    const { runs } = columns;
    for (let r = 0; r < runs.length; r++) {
      const end = r + 1 < runs.length ? runs[r + 1]!.start : columns.ids.length;
      for (let i = runs[r]!.start; i < end; i++) visit(columns, i, runs[r]!, n++);
    }
  }
}

/**
 * The events of `chunks` that `keep` accepts (by id and overall index), in order, as one set of
 * columns; no event objects are made.
 */
export function filterColumns(chunks: readonly EventColumns[], keep: (id: string, n: number) => boolean): EventColumns {
  const out = createColumns();
  let last: EventRun | undefined;
  each(chunks, (c, i, run, n) => {
    if (!keep(c.ids[i]!, n)) return;
    if (last !== run) out.runs.push({ ...run, start: out.ids.length });
    last = run;
    out.ids.push(c.ids[i]!);
    out.timestamps.push(c.timestamps[i]!);
    out.names.push(c.names[i]);
    out.properties.push(c.properties[i]);
  });
  return out;
}
