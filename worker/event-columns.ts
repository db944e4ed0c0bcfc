/**
 * The core's side of {@link EventColumns}: the events of one post, expanded back into the
 * AnalyticsEvent objects the queue holds. The work of building objects happens here, in the
 * worker, instead of on the page's main thread (DESIGN.md "The worker boundary").
 */
import type { AnalyticsEvent, EventColumns } from './types.js';

/** The events of `columns`, in order. */
export function expandColumns(columns: EventColumns): AnalyticsEvent[] {
  const { ids, timestamps, names, properties, runs } = columns;
  const events: AnalyticsEvent[] = new Array<AnalyticsEvent>(ids.length);
  for (let r = 0; r < runs.length; r++) {
    const run = runs[r]!;
    const end = r + 1 < runs.length ? runs[r + 1]!.start : ids.length;
    for (let i = run.start; i < end; i++) {
      const event: AnalyticsEvent = {
        id: ids[i]!,
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
  if (!Array.isArray(c.ids) || !Array.isArray(c.timestamps) || !Array.isArray(c.names) || !Array.isArray(c.properties) || !Array.isArray(c.runs)) return false;
  const n = c.ids.length;
  if (c.timestamps.length !== n || c.names.length !== n || c.properties.length !== n) return false;
  // Every event belongs to a run: the first run starts at 0, starts ascend and stay in range.
  if (n > 0 && (c.runs.length === 0 || (c.runs[0] as { start?: unknown }).start !== 0)) return false;
  let previous = -1;
  for (const run of c.runs as Array<{ start?: unknown }>) {
    if (typeof run !== 'object' || run === null || typeof run.start !== 'number' || run.start <= previous || run.start >= n) return false;
    previous = run.start;
  }
  return true;
}
