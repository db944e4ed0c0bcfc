/**
 * Event objects from the facade's columns ({@link EventColumns}), for the rare path that needs
 * them: a beacon at pagehide (`beacon.ts`; a restart replays columns as they are). A module of its
 * own, imported only by that lazily loaded chunk, so that this code stays out of the facade's
 * bundle (the bundler splits by module).
 */
import { formatEventId } from '../worker/event-id.js';
import type { AnalyticsEvent, EventColumns } from '../worker/types.js';

/** The events of `chunks`, in order, as objects. */
export function eventsOf(...chunks: EventColumns[]): AnalyticsEvent[] {
  const events: AnalyticsEvent[] = [];
  // Not mirror-columns.ts's `each`: a few lines, and this module stays independent of that one.
  for (const c of chunks) {
    for (let r = 0; r < c.runs.length; r++) {
      const { start, previousId, ...shared } = c.runs[r]!;
      const end = r + 1 < c.runs.length ? c.runs[r + 1]!.start : c.timestamps.length;
      for (let i = start; i < end; i++) {
        const id = formatEventId(c.idMs[i]!, c.idCounters[i]!, c.idTail);
        const event: AnalyticsEvent = { ...shared, id, timestamp: c.timestamps[i]!, event: c.names[i], properties: c.properties[i] };
        if (previousId !== undefined) event.previousId = previousId;
        events.push(event);
      }
    }
  }
  return events;
}
