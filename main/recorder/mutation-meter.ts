/**
 * The mutation cap (docs/decisions.md, "Recording upload and the recorder's states": the page
 * matters more than its recording). rrweb serialises every DOM mutation it observes; a page that
 * rebuilds thousands of nodes a second in a loop would spend its main thread on recording. The
 * meter counts mutations per second of wall time and reports when a second holds more than the cap,
 * so the recorder can stop instead.
 */
import type { RecordedEvent } from '../../protocol/wire-types.js';

/** rrweb's `EventType.IncrementalSnapshot`. */
const INCREMENTAL_SNAPSHOT = 3;
/** rrweb's `IncrementalSource.Mutation`. */
const MUTATION = 0;

/** Mutations an rrweb event carries: nodes added and removed, attributes and texts changed. */
export function mutationsIn(event: RecordedEvent): number {
  if (event.type !== INCREMENTAL_SNAPSHOT) return 0;
  const data = event.data as { source?: unknown; adds?: unknown[]; removes?: unknown[]; attributes?: unknown[]; texts?: unknown[] } | null;
  if (data === null || typeof data !== 'object' || data.source !== MUTATION) return 0;
  const length = (list: unknown[] | undefined): number => (Array.isArray(list) ? list.length : 0);
  return length(data.adds) + length(data.removes) + length(data.attributes) + length(data.texts);
}

/**
 * Creates a meter with a cap of `limit` mutations per second; the function it returns counts one
 * event and answers true when the current second is over the cap.
 */
export function createMutationMeter(limit: number, now: () => number): (event: RecordedEvent) => boolean {
  let windowStart = -Infinity;
  let count = 0;
  return (event) => {
    const mutations = mutationsIn(event);
    if (mutations === 0) return false;
    const at = now();
    if (at - windowStart >= 1000) {
      windowStart = at;
      count = 0;
    }
    count += mutations;
    return count > limit;
  };
}
