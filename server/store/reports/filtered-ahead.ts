import { type Dialect, type RunQuery, Values } from './dialect.js';
import { FILTER_DIMENSIONS, type FilterDimension } from '../report-store.js';
import { DAY_MS } from './rollup-schema.js';
import { dayKey } from './rollup-refresh.js';
import { num } from '../shared/row-values.js';
import { GRAIN_DAY } from '../aggregates/aggregate-schema.js';

/*
 * Filtered top lists kept ahead of their first view (docs/decisions.md, "Filtered top lists"). A
 * top list with one filter reads the filter's events of each day it has not kept yet, once; for
 * a value with many events that first view is the slow one, and it grows with the traffic (the
 * overview's lists filtered by the device of half the visitors, 90 days at 10 million events:
 * tens of seconds on PostgreSQL). So the background keeps, for each clean past day of the last
 * year, every value with at least `minEvents` events that day, one (value, day) a turn, newest
 * days first, and only while no report is reading. A first view then reads the events only of
 * values rarer than that on each day of its range: at most `minEvents` events a day, whatever the
 * size of the project. Matomo pre-processes its segments in the background the same way.
 *
 * What it costs: each event is read once per dimension in whose heavy values it is, so at most
 * once per dimension a day, once; a day built again (late events, an erasure) is kept again.
 */

/** Options of {@link createFilteredAhead}. */
export interface FilteredAheadOptions {
  /** Reads and keeps one day of a filter (`FilteredTops.keepDay`). */
  keepDay(projectId: string, filter: readonly [FilterDimension, string], day: number): Promise<void>;
  /** True while a report is reading: a turn taken only when idle then does nothing. */
  busy(): boolean;
  /**
   * A value is kept ahead on a day where it has at least this many events.
   * @default 1000
   */
  minEvents?: number;
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
 * `whenIdle` (the background's way), a turn while a report reads does nothing and resolves true.
 */
export type KeepAhead = (whenIdle?: boolean) => Promise<boolean>;

/** Days looked at in one turn that keeps nothing (each is one small read of the day's aggregates). */
const DAYS_A_TURN = 4;
/**
 * How long the list of candidate days is used before it is read again, ms: it reads the day rows
 * of every project's aggregates (about 0.1 s at 10 million events on PostgreSQL), and a turn is
 * taken every second while there is work.
 */
const LIST_EVERY_MS = 60_000;

/** Keeps the heavy filters of past days ahead, one turn at a time, over `run`. */
export function createFilteredAhead(dialect: Dialect, run: RunQuery, options: FilteredAheadOptions): KeepAhead {
  const minEvents = options.minEvents ?? 1000;
  const days = options.days ?? 366;
  const now = options.now ?? (() => Date.now());
  /** The days whose heavy values were all kept, by {@link dayKey}, with the day's version then. */
  const done = new Map<string, number>();
  /**
   * The (day, version, filter)s read once already: one whose keep was refused (the day was built
   * again meanwhile) or failed is not read again for that version, so that no turn repeats forever.
   */
  const tried = new Set<string>();
  const dims = FILTER_DIMENSIONS.map((dim) => `'${dim}'`).join(', ');
  let list: { at: number; rows: Array<Record<string, unknown>> } | null = null;

  return async (whenIdle = false) => {
    const yieldNow = () => whenIdle && options.busy();
    if (yieldNow()) return true;
    const time = now();
    if (list === null || time - list.at >= LIST_EVERY_MS) {
      const today = Math.floor(time / DAY_MS);
      const v = new Values(dialect);
      // The clean past days with events (a day row of the aggregates), newest first, with their
      // version (0: built before versions were kept, or never rebuilt).
      const rows = await run(
        `SELECT a.project_id, a.day, COALESCE(r.version, 0) AS version
         FROM (SELECT DISTINCT project_id, bucket AS day FROM agg_values WHERE dim = '' AND grain = ${GRAIN_DAY} AND bucket >= ${v.add(today - days)} AND bucket < ${v.add(today)}) a
           LEFT JOIN rollup_versions r ON r.project_id = a.project_id AND r.day = a.day
         WHERE NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.project_id = a.project_id AND d.day = a.day)
         ORDER BY a.day DESC, a.project_id`,
        v.list,
      );
      list = { at: time, rows };
    }
    const candidates = list.rows;
    const live = new Set<string>();
    let looked = 0;
    for (const row of candidates) {
      const projectId = String(row.project_id);
      const day = num(row.day);
      const key = dayKey(projectId, day);
      live.add(key);
      if (done.get(key) === num(row.version)) continue;
      if (looked === DAYS_A_TURN || yieldNow()) return true;
      looked++;
      // The day's heavy values, from the day's aggregates kept at ingest (a row per value and bot
      // flag), and the filters kept for it (a keep writes every dimension's marker at once).
      const w = new Values(dialect);
      const heavy = await run(
        `SELECT 0 AS kind, dim, value FROM agg_values WHERE project_id = ${w.add(projectId)} AND dim IN (${dims}) AND grain = ${GRAIN_DAY} AND bucket = ${w.add(day)}
           GROUP BY dim, value HAVING SUM(events) >= ${w.add(minEvents)}
         UNION ALL
         SELECT DISTINCT 1 AS kind, filter_dim, filter_value FROM rollup_filtered WHERE project_id = ${w.add(projectId)} AND day = ${w.add(day)} AND value IS NULL`,
        w.list,
      );
      const filterKey = (r: Record<string, unknown>) => `${key}\u0000${num(row.version)}\u0000${String(r.dim)}\u0000${String(r.value)}`;
      const kept = new Set(heavy.filter((r) => num(r.kind) === 1).map(filterKey));
      const next = heavy.find((r) => num(r.kind) === 0 && !kept.has(filterKey(r)) && !tried.has(filterKey(r)));
      if (next === undefined) {
        done.set(key, num(row.version));
        continue;
      }
      tried.add(filterKey(next));
      await options.keepDay(projectId, [next.dim as FilterDimension, String(next.value)], day);
      return true;
    }
    // Days gone from the candidates (past the year, retention) are forgotten.
    for (const key of done.keys()) if (!live.has(key)) done.delete(key);
    for (const entry of tried) if (!live.has(entry.slice(0, entry.indexOf('\u0000')))) tried.delete(entry);
    return looked > 0;
  };
}
