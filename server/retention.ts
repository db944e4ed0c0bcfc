/**
 * Data retention: what `start --retention-days N` does at start and hourly, and what the one-shot
 * `prune --retention-days N` does. One cut-off for both, so the two commands cannot disagree
 * about which rows are "older than N days".
 */
import type { EventStore } from './store/event-store.js';

/** Milliseconds in one day of retention (a fixed 24 h: retention does not follow calendar days). */
export const DAY_MS = 86_400_000;

/**
 * The oldest time kept: rows strictly before it are deleted (`deleteOlderThan` keeps a row stamped
 * exactly at the cut-off).
 */
export function retentionCutoff(now: number, days: number): number {
  return now - days * DAY_MS;
}

/** What one prune deleted, and the cut-off it used. */
export interface PruneResult {
  cutoff: number;
  events: number;
  chunks: number;
}

/** Deletes events and recording chunks older than `days` days before `now`. */
export async function pruneOlderThanDays(store: EventStore, days: number, now: number): Promise<PruneResult> {
  const cutoff = retentionCutoff(now, days);
  const deleted = await store.deleteOlderThan(cutoff);
  return { cutoff, events: deleted.events, chunks: deleted.chunks };
}
