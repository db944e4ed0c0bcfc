/**
 * Event objects from the facade's columns ({@link EventColumns}), for the rare paths: a beacon at
 * pagehide (`beacon.ts`) and a worker restart (`worker-start.ts`). A module of its own, imported
 * only by those lazily loaded chunks, so that this code stays out of the facade's bundle (the
 * bundler splits by module).
 */
import type { AnalyticsEvent, EventColumns } from '../worker/types.js';

/** The events of `chunks`, in order, as objects. */
export function eventsOf(...chunks: EventColumns[]): AnalyticsEvent[] {
  const events: AnalyticsEvent[] = [];
  // Not event-buffer.ts's `each`: an import of it from here would split that module into a chunk
  // of its own, shared with the facade's bundle, at a cost in bytes.
  for (const c of chunks) {
    for (let r = 0; r < c.runs.length; r++) {
      const { start, previousId, ...shared } = c.runs[r]!;
      const end = r + 1 < c.runs.length ? c.runs[r + 1]!.start : c.ids.length;
      for (let i = start; i < end; i++) {
        const event: AnalyticsEvent = { ...shared, id: c.ids[i]!, timestamp: c.timestamps[i]!, event: c.names[i], properties: c.properties[i] };
        if (previousId !== undefined) event.previousId = previousId;
        events.push(event);
      }
    }
  }
  return events;
}
