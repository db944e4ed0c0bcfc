/**
 * The core's side of {@link EventColumns}: the events of one post, expanded back into the
 * AnalyticsEvent objects the queue holds. The work of building objects and id texts happens here,
 * in the worker, instead of on the page's main thread (DESIGN.md "The worker boundary").
 */
import { createEventIdFormatter } from './event-id-formatter.js';
import type { AnalyticsEvent, EventColumns } from './types.js';

/** The events of `columns`, in order. */
export function expandColumns(columns: EventColumns): AnalyticsEvent[] {
  const { idMs, idCounters, idTail, timestamps, names, properties, runs } = columns;
  const format = createEventIdFormatter();
  const events: AnalyticsEvent[] = new Array<AnalyticsEvent>(timestamps.length);
  for (let r = 0; r < runs.length; r++) {
    const run = runs[r]!;
    const end = r + 1 < runs.length ? runs[r + 1]!.start : timestamps.length;
    for (let i = run.start; i < end; i++) {
      const event: AnalyticsEvent = {
        id: format(idMs[i]!, idCounters[i]!, idTail),
        timestamp: timestamps[i]!,
        type: run.type,
        event: names[i],
        properties: properties[i],
        userId: run.userId,
        anonymousId: run.anonymousId,
        sessionId: run.sessionId,
        context: run.context,
      };
      if (run.previousId !== undefined) event.previousId = run.previousId;
      events[i] = event;
    }
  }
  return events;
}

/** A cheap shape check of a post's columns (the port is ours, but a wrong post must not break the core). */
export function isEventColumns(value: unknown): value is EventColumns {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Partial<Record<keyof EventColumns, unknown>>;
  if (typeof c.idTail !== 'string' || !/^[0-9a-f]{8}$/.test(c.idTail)) return false;
  if (!Array.isArray(c.idMs) || !Array.isArray(c.idCounters) || !Array.isArray(c.timestamps) || !Array.isArray(c.names) || !Array.isArray(c.properties) || !Array.isArray(c.runs)) return false;
  const n = c.timestamps.length;
  if (c.idMs.length !== n || c.idCounters.length !== n || c.names.length !== n || c.properties.length !== n) return false;
  // Numbers an id can be made of: whole, a 48-bit ms and a 42-bit counter.
  for (let i = 0; i < n; i++) {
    const ms = c.idMs[i] as unknown;
    const counter = c.idCounters[i] as unknown;
    if (!Number.isSafeInteger(ms) || (ms as number) < 0 || (ms as number) >= 2 ** 48) return false;
    if (!Number.isSafeInteger(counter) || (counter as number) < 0 || (counter as number) >= 2 ** 42) return false;
  }
  // Every event belongs to a run: the first run starts at 0, starts ascend and stay in range.
  if (n > 0 && (c.runs.length === 0 || (c.runs[0] as { start?: unknown }).start !== 0)) return false;
  let previous = -1;
  for (const run of c.runs as Array<{ start?: unknown }>) {
    if (typeof run !== 'object' || run === null) return false;
    const start = run.start;
    // An index: NaN would pass every comparison below, and 1.5 falls between two events.
    if (!Number.isInteger(start) || (start as number) <= previous || (start as number) >= n) return false;
    previous = start as number;
  }
  return true;
}
