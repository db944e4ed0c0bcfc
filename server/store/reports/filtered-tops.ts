import { type Dialect, type RunQuery, Values } from './dialect.js';
import { BUILT_IN_EVENT_TYPES, DIMENSION_COLUMNS, PAGE_TOP_DIMENSIONS, type FilterDimension, type ReportQuery, type TopDimension, type TopRow } from '../report-store.js';
import type { DayPlan } from './rollup-queries.js';
import { DAY_MS, daySql } from './rollup-schema.js';
import { VisitorSketch, hashKey } from '../aggregates/visitor-sketch.js';

/*
 * Top lists with one filter (docs/decisions.md, "Filtered top lists"). The aggregates kept at
 * ingest count each dimension on its own, so "the pages of mobile visitors" is not in them, and
 * keeping every pair of dimensions at ingest would write dozens of rows per event. Instead, the
 * first top list with a filter that reads a whole clean day computes that day's counts of the
 * filter from its events and keeps them (`rollup_filtered`, one row per value and day): a
 * dashboard filtered the same way again, the next day or by a teammate, reads a row per value and
 * day. Matomo archives its segments the same way, on first use.
 *
 * Kept rows are part of the daily rollups: they describe a day as its last refresh saw it, are read
 * only while the day is clean, and go when a refresh builds the day again (a late event, an
 * erasure, retention). Counts are exact; visitors are sketches, as in every top list.
 *
 * What one such report reads, each in one statement (one snapshot):
 * 1. the days of the range already kept for this filter and dimension, and their counts by value;
 * 2. the events of the rest of the range (days not clean, the ends); then, a few days a
 *    statement, the events of the clean days not kept yet (both bot flags, to keep them whole)
 *    with the days' versions and marks, handed to the store to keep (`KeepFiltered`) as soon as
 *    they are read: a first view of a long range at many events is so a series of reads, each
 *    within the read budget, and what it read stays kept if a later read is refused. The store
 *    keeps a day only if it is still clean at the version the snapshot saw, so rows computed
 *    before a refresh never outlive it;
 * 3. the kept sketches of the values ranked first.
 */

/** One value of a kept (day, filter, dimension): what a top list counts, and its visitors. */
export interface FilteredRow {
  isBot: boolean;
  value: string;
  n: number;
  /** The sketch of the visitors as reports count them by default (the anonymous id, else the daily hash); null is empty. */
  visitors: Uint8Array | null;
  /** The sketch of the daily visitor hashes; null is empty. */
  visitorHashes: Uint8Array | null;
}

/** A day's filtered rows, computed from a snapshot that saw the day clean at `version`. */
export interface FilteredDay {
  day: number;
  /** The day's `rollup_versions` version in that snapshot (0: never refreshed since it was created). */
  version: number;
  rows: FilteredRow[];
}

/** What a report hands to the store to keep: the days of one project, filter and dimension. */
export interface FilteredKeep {
  projectId: string;
  filterDim: FilterDimension;
  filterValue: string;
  /** The dimension counted (`custom_event` is kept as `event_type`, with every event type). */
  dim: FilterDimension;
  days: FilteredDay[];
}

/**
 * Keeps filtered days: each only if the day is not marked, its version is the one given, and it is
 * not kept already; resolves to the number of days kept.
 */
export type KeepFiltered = (keep: FilteredKeep) => Promise<number>;

/**
 * The SQL of an aggregate over a text key column that gives the stored bytes of the keys' sketch
 * (`visitor-sketch.ts`), the bytes `VisitorSketch` makes of them; null is empty.
 */
export type SketchOfSql = (key: string) => string;

/** Options of {@link createFilteredTops}. */
export interface FilteredTopsOptions {
  keep: KeepFiltered;
  /**
   * How the database builds sketches of keys itself, asked per report (null: it does not): the
   * events are then read as one row per day, bot flag and value rather than one per event, and no
   * key is hashed on the request thread. SQLite's `sa_sketch_of` (on the reader thread),
   * PostgreSQL's `hll` extension.
   */
  sketchOf?: () => SketchOfSql | null;
  /** A keep that failed: the report was answered; the days are computed again next time. */
  onKeepError?: (error: unknown) => void;
}

/** A top list with one filter over a rollup plan. */
export type FilteredTop = (q: ReportQuery, filter: readonly [FilterDimension, string], dimension: TopDimension, limit: number, plan: DayPlan) => Promise<TopRow[]>;

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/** Stored sketch bytes as the driver returns them, or null (empty). */
const bytesOf = (value: unknown): Uint8Array | null => (value instanceof Uint8Array ? value : null);

/** How long one read of missing days aims to take, ms: well inside SQLite's read budget (15 s by default). */
const READ_AIM_MS = 1000;
/** At most this many days in one read. */
const MAX_DAYS_A_READ = 31;

/** Compares in UTF-8 byte order, as the stores order values. */
const byteCompare = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** One value's count and visitor sketches (stored bytes; null is empty) in a day or a piece of the range. */
interface Group {
  n: number;
  visitors: Uint8Array | null;
  hashes: Uint8Array | null;
}

/** A group's keys while events are read one by one (a database without {@link FilteredTopsOptions.sketchOf}). */
class Tally {
  n = 0;
  readonly visitors = VisitorSketch.empty();
  readonly hashes = VisitorSketch.empty();
  add(visitor: unknown, hash: unknown): void {
    this.n++;
    if (typeof visitor === 'string') this.visitors.add(hashKey(visitor));
    if (typeof hash === 'string') this.hashes.add(hashKey(hash));
  }
  group(): Group {
    return { n: this.n, visitors: this.visitors.toBytes(), hashes: this.hashes.toBytes() };
  }
}

/** Filtered top lists over `run`, keeping what they compute through `options.keep`. */
export function createFilteredTops(dialect: Dialect, run: RunQuery, options: FilteredTopsOptions): FilteredTop {
  const builtIns = new Set(BUILT_IN_EVENT_TYPES);

  return async (q, [filterDim, filterValue], dimension, limit, plan) => {
    const dim: FilterDimension = dimension === 'custom_event' ? 'event_type' : dimension;
    const pages = PAGE_TOP_DIMENSIONS.has(dimension);
    const botKept = q.includeBots ? '' : ` AND is_bot = ${dialect.falseValue}`;
    const days = plan.days;
    const dirty = new Set(days?.dirty ?? []);
    /** The kept rows of the plan's clean days. */
    const keptWhere = (v: Values, clean: NonNullable<DayPlan['days']>) =>
      `project_id = ${v.add(q.projectId)} AND filter_dim = ${v.add(filterDim)} AND filter_value = ${v.add(filterValue)} AND dim = ${v.add(dim)}
       AND day >= ${v.add(clean.first)} AND day < ${v.add(clean.end)}${clean.dirty.length > 0 ? ` AND day NOT IN (${clean.dirty.map((d) => v.add(d)).join(', ')})` : ''}`;

    // 1. The kept days and their counts by value, in one snapshot.
    const counts = new Map<string, number>();
    const kept = new Set<number>();
    if (days !== null) {
      const v = new Values(dialect);
      const rows = await run(
        `SELECT 0 AS kind, day, CAST(NULL AS TEXT) AS value, 0 AS n FROM rollup_filtered WHERE ${keptWhere(v, days)} AND value IS NULL
         UNION ALL
         SELECT 1 AS kind, NULL, value, SUM(n) FROM rollup_filtered WHERE ${keptWhere(v, days)} AND value IS NOT NULL${botKept} GROUP BY value`,
        v.list,
      );
      for (const row of rows) {
        if (num(row.kind) === 0) kept.add(num(row.day));
        else counts.set(String(row.value), num(row.n));
      }
    }

    // 2. The events of the rest of the range (days not clean, the ends), then of the clean days not kept yet.
    const column = DIMENSION_COLUMNS[dim];
    const sketchOf = options.sketchOf?.() ?? null;
    const visitor = 'COALESCE(anonymous_id, visitor_id)';
    /** The statement of the events of `[from, to)` by day, bot flag and value; with `state`, the days' versions and marks after them. */
    const eventsSql = (v: Values, from: number, to: number, bots: string, state: boolean) => {
      const head = `SELECT 0 AS kind, ${daySql('timestamp')} AS day, CASE WHEN is_bot = ${dialect.falseValue} THEN 0 ELSE 1 END AS bot, ${column} AS value`;
      let where = `project_id = ${v.add(q.projectId)} AND timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)}${bots}
        AND ${DIMENSION_COLUMNS[filterDim]} = ${v.add(filterValue)} AND ${column} IS NOT NULL`;
      if (pages) where += " AND event_type = 'page_view'";
      let sql =
        sketchOf === null
          ? `${head}, 1 AS n, ${visitor} AS visitor, visitor_id AS visitor_hash, CAST(NULL AS BYTEA) AS visitors, CAST(NULL AS BYTEA) AS visitor_hashes,
          CAST(NULL AS BIGINT) AS version FROM events WHERE ${where}`
          : `${head}, COUNT(*) AS n, CAST(NULL AS TEXT) AS visitor, CAST(NULL AS TEXT) AS visitor_hash, ${sketchOf(visitor)} AS visitors,
          ${sketchOf('visitor_id')} AS visitor_hashes, CAST(NULL AS BIGINT) AS version FROM events WHERE ${where} GROUP BY 2, 3, 4`;
      if (state) {
        // The days' state in the same snapshot as their events: kind 1 a version, 2 a mark.
        const stateOf = (kind: number, table: string, version: string) =>
          `SELECT ${kind} AS kind, day, 0 AS bot, CAST(NULL AS TEXT) AS value, 0 AS n, CAST(NULL AS TEXT) AS visitor, CAST(NULL AS TEXT) AS visitor_hash,
           CAST(NULL AS BYTEA) AS visitors, CAST(NULL AS BYTEA) AS visitor_hashes, ${version} AS version
           FROM ${table} WHERE project_id = ${v.add(q.projectId)} AND day >= ${v.add(from / DAY_MS)} AND day < ${v.add(to / DAY_MS)}`;
        sql += `\n UNION ALL ${stateOf(1, 'rollup_versions', 'version')}\n UNION ALL ${stateOf(2, 'rollup_dirty', 'CAST(NULL AS BIGINT)')}`;
      }
      return sql;
    };
    /** Rows of {@link eventsSql} as groups by (day, bot flag) and value, and the days' versions and marks. */
    const groupsOf = (rows: ReadonlyArray<Record<string, unknown>>) => {
      const groups = new Map<number, Map<string, Group>>(); // day * 2 + bot → value → group
      const versions = new Map<number, number>();
      const marked = new Set<number>();
      const tallies = new Map<number, Map<string, Tally>>();
      for (const row of rows) {
        const kind = num(row.kind);
        if (kind === 1) versions.set(num(row.day), num(row.version));
        else if (kind === 2) marked.add(num(row.day));
        else {
          const key = num(row.day) * 2 + num(row.bot);
          const value = String(row.value);
          if (sketchOf !== null) {
            let byValue = groups.get(key);
            if (byValue === undefined) groups.set(key, (byValue = new Map()));
            byValue.set(value, { n: num(row.n), visitors: bytesOf(row.visitors), hashes: bytesOf(row.visitor_hashes) });
            continue;
          }
          let byValue = tallies.get(key);
          if (byValue === undefined) tallies.set(key, (byValue = new Map()));
          let tally = byValue.get(value);
          if (tally === undefined) byValue.set(value, (tally = new Tally()));
          tally.add(row.visitor, row.visitor_hash);
        }
      }
      for (const [key, byValue] of tallies) groups.set(key, new Map([...byValue].map(([value, tally]) => [value, tally.group()])));
      return { groups, versions, marked };
    };

    const counted: Array<[string, Group]> = [];
    const countIn = (groups: Map<number, Map<string, Group>>) => {
      for (const [key, byValue] of groups) if (q.includeBots || key % 2 === 0) counted.push(...byValue);
    };
    if (plan.raw.length > 0) {
      const v = new Values(dialect);
      countIn(groupsOf(await run(plan.raw.map(([from, to]) => eventsSql(v, from, to, botKept, false)).join('\n UNION ALL '), v.list)).groups);
    }
    if (days !== null) {
      // Consecutive days missing, a few at a time: one day first, then as many as the last read
      // suggests fit in about a second (a statement per day costs its own planning and round trip,
      // which at a few thousand events a day was most of a first view).
      let size = 1;
      for (let day = days.first; day < days.end; ) {
        if (dirty.has(day) || kept.has(day)) {
          day++;
          continue;
        }
        let end = day + 1;
        while (end < days.end && end - day < size && !dirty.has(end) && !kept.has(end)) end++;
        const v = new Values(dialect);
        const started = performance.now();
        const { groups, versions, marked } = groupsOf(await run(eventsSql(v, day * DAY_MS, end * DAY_MS, '', true), v.list));
        const elapsed = performance.now() - started;
        size = Math.max(1, Math.min(MAX_DAYS_A_READ, Math.floor(((end - day) * READ_AIM_MS) / Math.max(elapsed, 1))));
        countIn(groups);
        // Kept after their read, but days marked in that snapshot; the store checks again.
        const keepDays: FilteredDay[] = [];
        for (let d = day; d < end; d++) {
          if (marked.has(d)) continue;
          const rows: FilteredRow[] = [];
          for (const bot of [0, 1]) {
            for (const [value, group] of groups.get(d * 2 + bot) ?? []) {
              rows.push({ isBot: bot === 1, value, n: group.n, visitors: group.visitors, visitorHashes: group.hashes });
            }
          }
          keepDays.push({ day: d, version: versions.get(d) ?? 0, rows });
        }
        if (keepDays.length > 0) {
          options.keep({ projectId: q.projectId, filterDim, filterValue, dim, days: keepDays }).catch((error: unknown) => options.onKeepError?.(error));
        }
        day = end;
      }
    }

    // The answer: counts of the kept days, the computed days and the rest; then the sketches of the values ranked first.
    for (const [value, group] of counted) counts.set(value, (counts.get(value) ?? 0) + group.n);
    const ranked = [...counts.entries()]
      .filter(([value, n]) => n > 0 && (dimension !== 'custom_event' || !builtIns.has(value)))
      .sort((a, b) => b[1] - a[1] || byteCompare(a[0], b[0]))
      .slice(0, limit);
    const sketchColumn = q.visitorKey === 'hash' ? 'visitor_hashes' : 'visitors';
    const visitors = new Map(ranked.map(([value]) => [value, VisitorSketch.empty()]));
    for (const [value, group] of counted) {
      const sketch = q.visitorKey === 'hash' ? group.hashes : group.visitors;
      if (sketch !== null) visitors.get(value)?.mergeBytes(sketch);
    }
    if (ranked.length > 0 && days !== null && kept.size > 0) {
      // Days kept by another report since step 1 add rows of days computed here: a sketch's union
      // is idempotent, so they change nothing.
      const w = new Values(dialect);
      const sketchRows = await run(
        `SELECT value, ${sketchColumn} AS sketch FROM rollup_filtered WHERE ${keptWhere(w, days)}
         AND value IN (${ranked.map(([value]) => w.add(value)).join(', ')})${botKept}`,
        w.list,
      );
      for (const row of sketchRows) if (row.sketch instanceof Uint8Array) visitors.get(String(row.value))?.mergeBytes(row.sketch);
    }

    return ranked.map(([value, n]) => ({ value, events: n, visitors: (visitors.get(value) ?? VisitorSketch.empty()).estimate() }));
  };
}
