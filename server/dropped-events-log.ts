import type { Logger } from './logger.js';

/**
 * Logs the events a project's policy dropped (today: bot events under `bots: 'drop'`) at `info`, at
 * most once per project per interval, with the count since the last line: an operator sees in the
 * log that events are being dropped and how many, and a flood of them costs one line a minute.
 */
export interface DroppedEventsLog {
  /** Counts `count` dropped events of `projectId`; writes a line when the project's interval is over. */
  dropped(projectId: string, count: number, reason: string): void;
}

/** Options of {@link createDroppedEventsLog}. */
export interface DroppedEventsLogOptions {
  logger: Logger;
  now: () => number;
  /** Least time between two lines of one project, ms. @default 60000 */
  intervalMs?: number;
  /** Projects remembered at once; past it the memory starts over (a line may then come early). @default 10000 */
  maxProjects?: number;
}

/** Creates the rate-limited log of dropped events. */
export function createDroppedEventsLog(options: DroppedEventsLogOptions): DroppedEventsLog {
  const intervalMs = options.intervalMs ?? 60_000;
  const maxProjects = options.maxProjects ?? 10_000;
  const pending = new Map<string, { count: number; since: number; lastLine: number }>();
  return {
    dropped(projectId, count, reason) {
      const now = options.now();
      let entry = pending.get(projectId);
      if (entry === undefined) {
        if (pending.size >= maxProjects) pending.clear();
        entry = { count: 0, since: now, lastLine: -Infinity };
        pending.set(projectId, entry);
      }
      entry.count += count;
      if (now - entry.lastLine < intervalMs) return;
      options.logger.info('events dropped by the project policy', { projectId, reason, events: entry.count, sinceMs: now - entry.since });
      entry.count = 0;
      entry.since = now;
      entry.lastLine = now;
    },
  };
}
