/**
 * The experiments a project runs, read off its `experiment_exposure` events
 * (`properties.experiment`, docs/decisions.md "Wire mapping of every client call"). The reports have
 * no list of experiments, so the dashboard looks at the newest exposures of the range.
 */
import type { WireEvent } from '../api/wire-types.js';

/** How many of the newest exposures the list is made from. */
export const EXPOSURES_SCANNED = 1000;

/** The distinct experiment names of `events`, the most exposed first, ties by name. */
export function experimentNames(events: readonly WireEvent[]): string[] {
  const counts = new Map<string, number>();
  for (const event of events) {
    const name = event.properties.experiment;
    if (typeof name === 'string' && name !== '') counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([name]) => name);
}
