import { type Dialect, type RunQuery, Values } from './dialect.js';
import { FILTER_DIMENSIONS, type FilterDimension } from '../report-store.js';
import { DAY_MS } from './rollup-schema.js';
import { dayKey } from './rollup-refresh.js';
import type { Filter } from './filtered-tops.js';
import { num } from '../shared/row-values.js';
import { GRAIN_DAY } from '../aggregates/aggregate-schema.js';

/*
 * Filtered top lists kept ahead of their first view (docs/decisions.md, "Filtered top lists"). A
 * top list with one filter reads the filter's events of each day it has not kept yet, once; for
 * a value with many events that first view is the slow one, and it grows with the traffic (the
 * overview's lists filtered by the device of half the visitors, 90 days at 10 million events:
 * tens of seconds on PostgreSQL). So the background keeps, for each clean past day of the last
 * year, every value with at least `minEvents` events that day, newest days first, and only while
 * no report is reading. A first view then counts the events only of values rarer than that on
 * each day of its range. Matomo pre-processes its segments in the background the same way.
 *
 * What it costs: a turn reads one day's events once for as many of its heavy values as the last
 * turns suggest fit in about {@link TURN_AIM_MS} (a value has no index of its own, so a read of one
 * value's day passes over all the day's events: one value a turn read a day of 54 heavy values 54
 * times), and counts each event once per value of it kept; a day built again (late events, an
 * erasure) is kept again.
 */

/** Options of {@link createFilteredAhead}. */
export interface FilteredAheadOptions {
  /** Reads and keeps one day of filters, its events read once (`FilteredTops.keepDay`). */
  keepDay(projectId: string, filters: readonly Filter[], day: number): Promise<void>;
  /** True while a report is reading: a turn taken only when idle then does nothing. */
  busy(): boolean;
  /**
   * A value is kept ahead on a day where it has at least this many events.
   * @default 1000
   */
  minEvents?: number;
  /**
   * A turn keeps the values of a day whose events add up to at most this many (at least one
   * value; fewer when the last turns suggest fewer fit in {@link TURN_AIM_MS}): the day's events
   * are read once for all of them, and each of theirs counted once per value (in each of its
   * dimensions), so this bounds a turn's work.
   * @default 500000
   */
  eventsATurn?: number;
  /**
   * Whether `keepDay` reads several values in one statement (the database builds the sketches);
   * false: it reads one a statement, every event a row to this process, and a turn keeps one
   * value, so that the turns still yield to reports between statements. @default () => true
   */
  manyValuesARead?: () => boolean;
  /**
   * How many past days are kept ahead.
   * @default 366
   */
  days?: number;
  /** @default Date.now */
  now?: () => number;
}

/**
 * One turn of keeping ahead: resolves true when it did something (checked a day, or kept a value's
 * day) and there may be more to do, false when every heavy value of every clean day is kept. With
 * `whenIdle` (the background's way), a turn stops as soon as a report reads, and resolves false:
 * the caller's loop of turns must end there, not call again at once (a turn that yields awaits no
 * I/O, so such a loop would hold the event loop, and every request, until it timed out).
 */
export type KeepAhead = (whenIdle?: boolean) => Promise<boolean>;

/** Days looked at in one turn that keeps nothing (each is one small read of the day's aggregates). */
const DAYS_A_TURN = 4;
/**
 * How long the list of candidate days is used before it is read again, ms: the turns of a tick
 * share it, and a day built since is seen within seconds. It is one index seek per project and
 * one index range of day rows each.
 */
const LIST_EVERY_MS = 5_000;
/**
 * A day built again waits this long before it is kept ahead again, ms: a day that late events
 * reach is built again every ten minutes (`rollup-refresher.ts`), and keeping its values ahead
 * after each build would read its events a dozen times over for nothing.
 */
const SETTLED_MS = 30 * 60_000;
/** Reads of one value's day that failed (past the read budget, a lost connection) before it is left to a first view. */
const MAX_ATTEMPTS = 3;
/**
 * How long a turn aims to take, ms: its values are chosen so that their events, at the last
 * turn's rate, fit in it. Well inside a read budget (PostgreSQL's is 15 s) on a busy machine: at
 * 30 million events a turn of 500,000 events ran past it there, and three failed turns leave a
 * value to its first view.
 */
export const TURN_AIM_MS = 2000;
/** A first turn's events, before any rate is known. */
const FIRST_EVENTS_A_TURN = 50_000;

/** What a process knows of a candidate day. */
interface DayState {
  day: number;
  version: number;
  /** When the version was first seen (−∞: at the first listing, taken as settled). */
  since: number;
  /** Every heavy value of this version is kept (or was tried {@link MAX_ATTEMPTS} times). */
  done: boolean;
  /** Reads of this version's values, by filter (`dim value`): a keep refused or failed is not read again at every turn. */
  tried: Map<string, number>;
}

/** Keeps the heavy filters of past days ahead, one turn at a time, over `run`. */
export function createFilteredAhead(dialect: Dialect, run: RunQuery, options: FilteredAheadOptions): KeepAhead {
  const minEvents = options.minEvents ?? 1000;
  const eventsATurn = options.eventsATurn ?? 500_000;
  /** The events of the next turn's values, at most: from the last turn's rate, quartered after a failed one. */
  let bound = Math.min(eventsATurn, FIRST_EVENTS_A_TURN);
  const days = options.days ?? 366;
  const now = options.now ?? (() => Date.now());
  const states = new Map<string, DayState>();
  const dims = FILTER_DIMENSIONS.map((dim) => `'${dim}'`).join(', ');
  let list: { at: number; rows: Array<Record<string, unknown>> } | null = null;

  return async (whenIdle = false) => {
    const yieldNow = () => whenIdle && options.busy();
    if (yieldNow()) return false;
    const time = now();
    if (list === null || time - list.at >= LIST_EVERY_MS) {
      const today = Math.floor(time / DAY_MS);
      const v = new Values(dialect);
      // The clean past days with events (a day row of the aggregates: the projects found by index
      // seeks, one per project, then one index range each), newest first, with their version (0:
      // built before versions were kept).
      const rows = await run(
        `WITH RECURSIVE p (project_id) AS (
           SELECT (SELECT project_id FROM agg_values ORDER BY project_id LIMIT 1)
           UNION ALL
           SELECT (SELECT n.project_id FROM agg_values n WHERE n.project_id > p.project_id ORDER BY n.project_id LIMIT 1) FROM p WHERE p.project_id IS NOT NULL)
         SELECT a.project_id, a.day, COALESCE(r.version, 0) AS version
         FROM (SELECT DISTINCT a.project_id, a.bucket AS day FROM p
                 JOIN agg_values a ON a.project_id = p.project_id AND a.dim = '' AND a.grain = ${GRAIN_DAY} AND a.bucket >= ${v.add(today - days)} AND a.bucket < ${v.add(today)}) a
           LEFT JOIN rollup_versions r ON r.project_id = a.project_id AND r.day = a.day
         WHERE NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.project_id = a.project_id AND d.day = a.day)
         ORDER BY a.day DESC, a.project_id`,
        v.list,
      );
      list = { at: time, rows };
    }
    let looked = 0;
    for (const row of list.rows) {
      const projectId = String(row.project_id);
      const day = num(row.day);
      const version = num(row.version);
      const key = dayKey(projectId, day);
      let state = states.get(key);
      if (state === undefined || state.version !== version) {
        state = { day, version, since: state === undefined ? -Infinity : time, done: false, tried: new Map() };
        states.set(key, state);
      }
      if (state.done || time - state.since < SETTLED_MS) continue;
      if (yieldNow()) return false;
      if (looked === DAYS_A_TURN) return true;
      looked++;
      // The day's values with their counts, from the day's aggregates kept at ingest (a row per
      // value and bot flag), then the filters kept for it (a keep writes every dimension's marker
      // at once). Both columns only listed side by side: nothing compares their collations.
      const w = new Values(dialect);
      const dayRows = await run(
        `SELECT 0 AS kept, dim, value, SUM(events) AS n FROM agg_values WHERE project_id = ${w.add(projectId)} AND dim IN (${dims}) AND grain = ${GRAIN_DAY} AND bucket = ${w.add(day)}
           GROUP BY dim, value HAVING SUM(events) >= ${w.add(minEvents)}
         UNION ALL
         SELECT DISTINCT 1 AS kept, filter_dim, filter_value, 0 FROM rollup_filtered WHERE project_id = ${w.add(projectId)} AND day = ${w.add(day)} AND value IS NULL`,
        w.list,
      );
      const filterOf = (r: Record<string, unknown>) => `${String(r.dim)} ${String(r.value)}`;
      const kept = new Set(dayRows.filter((r) => num(r.kept) === 1).map(filterOf));
      const tried = state.tried;
      const batch: Array<Record<string, unknown>> = [];
      const oneValue = options.manyValuesARead?.() === false;
      let events = 0;
      for (const r of dayRows) {
        if (num(r.kept) === 1 || kept.has(filterOf(r)) || (tried.get(filterOf(r)) ?? 0) >= MAX_ATTEMPTS) continue;
        if (batch.length > 0 && (oneValue || events + num(r.n) > bound)) continue;
        batch.push(r);
        events += num(r.n);
      }
      if (batch.length === 0) {
        state.done = true;
        state.tried.clear();
        continue;
      }
      if (yieldNow()) return false;
      for (const r of batch) tried.set(filterOf(r), (tried.get(filterOf(r)) ?? 0) + 1);
      const started = performance.now();
      try {
        await options.keepDay(projectId, batch.map((r): Filter => [r.dim as FilterDimension, String(r.value)]), day);
      } catch (error) {
        bound = Math.max(1, Math.floor(bound / 4));
        throw error;
      }
      // At most twice what this turn read (one fast turn of few events says little of many); a
      // turn of one value past the bound counts as read: the bound would otherwise stay below it.
      const rate = events / Math.max(performance.now() - started, 1);
      bound = Math.max(1, Math.min(eventsATurn, 2 * Math.max(bound, events), Math.floor(rate * TURN_AIM_MS)));
      return true;
    }
    // Days past the year are forgotten; a day marked again (off the list for now) is not: it comes
    // back built again, and waits to be settled.
    const first = Math.floor(time / DAY_MS) - days;
    for (const [key, state] of states) if (state.day < first) states.delete(key);
    return looked > 0;
  };
}
