/**
 * The facade's events in columns ({@link EventColumns}, `protocol/event-model/event-columns.ts`): appended one by one at
 * the cost of six array pushes and a few compares, with no event object and no id text made (a
 * new run only when the type, user, session, context or alias changes), posted as they are, and
 * kept as they are in the mirror of
 * unacknowledged events. Filtering them (`mirror-columns.ts`) and turning them back into objects
 * (`expandColumns`) is for the rare paths, a beacon at pagehide and a worker restart, in chunks
 * loaded lazily; this module is part of the facade's bundle and must not be imported by those
 * chunks (a module shared with them becomes a chunk of its own, at a cost in bytes).
 */
import { formatEventId } from '../../protocol/event-model/event-id.js';
import type { AnalyticsEventType, EventContext, EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';

/** Empty columns for the ids ending in `idTail` (the page's, `uuid-v7.ts`). */
export function createColumns(idTail: string): EventColumns {
  return { idMs: [], idCounters: [], idTail, timestamps: [], names: [], properties: [], runs: [] };
}

/** The ids of events `from` … `to − 1` of `columns`, as text (for the rare paths that report ids). */
export function idsOf(columns: EventColumns, from = 0, to = columns.timestamps.length): string[] {
  const ids: string[] = [];
  for (let i = from; i < to; i++) ids.push(formatEventId(columns.idMs[i]!, columns.idCounters[i]!, columns.idTail));
  return ids;
}

/**
 * Appends one event to `columns`, field by field: the facade's funnel calls this for every event,
 * so no event object is made for it (positional, not an options object, for that reason).
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
