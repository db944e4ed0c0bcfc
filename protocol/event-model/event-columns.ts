/**
 * The events of one task as columns: the form in which the facade posts events to the delivery
 * core and keeps its log of unacknowledged ones, and their expansion back into
 * {@link AnalyticsEvent} objects. The core expands every post (in the worker, not on the page's
 * main thread); the facade expands only on its rare paths (a beacon at pagehide).
 */
import type { AnalyticsEvent, AnalyticsEventType, EventContext, EventProperties } from './analytics-event.js';
import { createEventIdFormatter } from './event-id-formatter.js';

/**
 * Fields shared by a run of consecutive events in {@link EventColumns}: everything but the id,
 * timestamp, name and properties, which in a burst are all that changes from event to event.
 */
export interface EventRun {
  /** Index in the columns of the run's first event; the run ends where the next one starts. */
  start: number;
  type: AnalyticsEventType;
  userId?: string;
  anonymousId: string;
  sessionId: string;
  context: EventContext;
  previousId?: string;
}

/**
 * The events of one task, column by column: the form the facade posts them in. Structured clone
 * writes every key of every object it copies, so posting event objects costs several times what
 * these columns cost (figures in bench/RESULTS.md); the facade also
 * keeps these arrays as they are (no copy per event) for its log of unacknowledged events.
 * Event `i` is `timestamps[i]`, `names[i]`, `properties[i]` plus the fields of the run that holds
 * `i`; its id is the UUIDv7 of `idMs[i]`, `idCounters[i]` and `idTail` (`formatEventId` in
 * `event-id.ts`): numbers, so that making and posting an id allocates nothing on the main thread.
 */
export interface EventColumns {
  /** Each event id's millisecond. */
  idMs: number[];
  /** Each event id's counter: unique among the ids with this tail. */
  idCounters: number[];
  /** The random end of every id here: 8 hex digits, fixed for the page. */
  idTail: string;
  timestamps: number[];
  names: Array<string | undefined>;
  properties: Array<EventProperties | undefined>;
  /** Ordered by `start`; the first starts at 0 (none when there are no events). */
  runs: EventRun[];
}

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

/** Whether `ms` and `counter` are numbers an event id can be made of: whole, a 48-bit ms and a 42-bit counter. */
export function isIdNumbers(ms: unknown, counter: unknown): boolean {
  return Number.isSafeInteger(ms) && (ms as number) >= 0 && (ms as number) < 2 ** 48 && Number.isSafeInteger(counter) && (counter as number) >= 0 && (counter as number) < 2 ** 42;
}

/** A cheap shape check of a post's columns (the port is ours, but a wrong post must not break the core). */
export function isEventColumns(value: unknown): value is EventColumns {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Partial<Record<keyof EventColumns, unknown>>;
  if (typeof c.idTail !== 'string' || !/^[0-9a-f]{8}$/.test(c.idTail)) return false;
  if (!Array.isArray(c.idMs) || !Array.isArray(c.idCounters) || !Array.isArray(c.timestamps) || !Array.isArray(c.names) || !Array.isArray(c.properties) || !Array.isArray(c.runs)) return false;
  const n = c.timestamps.length;
  if (c.idMs.length !== n || c.idCounters.length !== n || c.names.length !== n || c.properties.length !== n) return false;
  for (let i = 0; i < n; i++) if (!isIdNumbers(c.idMs[i], c.idCounters[i])) return false;
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
