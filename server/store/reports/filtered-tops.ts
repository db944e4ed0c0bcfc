import { type Dialect, type RunQuery, Values } from './dialect.js';
import { BUILT_IN_EVENT_TYPES, DIMENSION_COLUMNS, FILTER_DIMENSIONS, type FilterDimension, type ReportQuery, type TopDimension, type TopRow } from '../report-store.js';
import type { DayPlan } from './rollup-queries.js';
import { DAY_MS, daySql } from './rollup-schema.js';
import { WEEK_DAYS, weekOfDaySql, wholeWeeks } from '../aggregates/aggregate-schema.js';
import { VisitorSketch, hashKey } from '../aggregates/visitor-sketch.js';
import { byteCompare, bytesOf, num } from '../shared/row-values.js';
import type { SketchUnionSql } from '../aggregates/aggregate-queries.js';

/*
 * Top lists with one filter (docs/decisions.md, "Filtered top lists"). The aggregates kept at
 * ingest count each dimension on its own, so "the pages of mobile visitors" is not in them, and
 * keeping every pair of dimensions at ingest would write dozens of rows per event. Instead, the
 * first top list with a filter that reads a whole clean day computes that day's counts of the
 * filter from its events and keeps them (`rollup_filtered`, one row per value and day): a
 * dashboard filtered the same way again, the next day or by a teammate, reads a row per value and
 * day, and per value and week for each whole week kept (`rollup_filtered_weeks`, merged by the
 * store from the week's seven days once they are all kept). Matomo archives its segments the same way, on first use. The background keeps the
 * frequent values ahead of their first view the same way (`filtered-ahead.ts`, through `keepDay`).
 *
 * Kept rows are part of the daily rollups: they describe a day as its last refresh saw it, are read
 * only while the day is clean, and go when a refresh builds the day again (a late event, an
 * erasure, retention), a week's rows with any of its days. Counts are exact; visitors are sketches, as in every top list.
 *
 * What one such report reads, each in one statement (one snapshot):
 * 1. the days and whole weeks of the range already kept for this filter and dimension, and their
 *    counts by value (a day of a week kept whole from the week's rows); weeks found kept day by day
 *    without their week rows are handed to the store to merge;
 * 2. the events of the rest of the range (days not clean, the ends); then, a few days a
 *    statement, the events of the clean days not kept yet (both bot flags, to keep them whole)
 *    with the days' versions and marks, handed to the store to keep (`KeepFiltered`) as soon as
 *    they are read: a first view of a long range at many events is so a series of reads, each
 *    within the read budget, and what it read stays kept if a later read is refused. The store
 *    keeps a day only if it is still clean at the version the snapshot saw, so rows computed
 *    before a refresh never outlive it;
 * 3. the kept sketches of the values ranked first, a week's where step 1 read its week.
 *
 * A filter applied on the dashboard asks for every top list of the overview at once, each with
 * the same filter. So a read of missing days counts every dimension from the one pass over the
 * filter's events and keeps them all, and a report that finds a day being read by another waits
 * for that read instead of reading the events again: the first view of a filtered dashboard reads
 * its events once, not once per panel.
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

/** A day's filtered rows by dimension, computed from a snapshot that saw the day clean at `version`. */
export interface FilteredDay {
  day: number;
  /** The day's `rollup_versions` version in that snapshot (0: never refreshed since it was created). */
  version: number;
  /** The rows of each dimension counted (`custom_event` is kept as `event_type`, with every event type). */
  dims: Array<{ dim: FilterDimension; rows: FilteredRow[] }>;
}

/** What a report hands to the store to keep: the days of one project and filter. */
export interface FilteredKeep {
  projectId: string;
  filterDim: FilterDimension;
  filterValue: string;
  days: FilteredDay[];
  /**
   * Weeks (`aggregate-schema.ts`) whose seven days the report found kept but not their week rows
   * (kept before week rows were): merged as the weeks of the days kept are.
   */
  weeks?: readonly number[];
}

/**
 * Keeps filtered days: each only if the day is not marked and its version is the one given, and
 * each of its dimensions only if not kept already; resolves to the number of (day, dimension) kept.
 * Then merges the week rows of each week of those days and of `weeks` whose seven days are kept
 * and none marked.
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
  /**
   * How the database merges stored sketches itself, asked per report (null: it does not): step 3
   * then reads one sketch per value ranked, not one per value and kept day or week. PostgreSQL's
   * `hll` extension.
   */
  sketchUnion?: () => SketchUnionSql | null;
  /** A keep that failed: the report was answered; the days are computed again next time. */
  onKeepError?: (error: unknown) => void;
  /**
   * Runs the reads of {@link FilteredTops.keepDay} (the background's), by default `run`. A report
   * never waits for such a read of a day: it reads the day itself.
   */
  runBackground?: RunQuery;
}

/** A top list with one filter over a rollup plan. */
export type FilteredTop = (q: ReportQuery, filter: Filter, dimension: TopDimension, limit: number, plan: DayPlan) => Promise<TopRow[]>;

/** The filtered top lists of a store. */
export interface FilteredTops {
  top: FilteredTop;
  /**
   * Reads one clean day of the events of `filters` and keeps every dimension of each, as a report's
   * first view of each would; settles once kept (a keep that failed went to `onKeepError`). Where
   * the database builds the sketches, one statement reads the day's events once for all of them;
   * elsewhere (every event a row to this process) a statement a filter. A filter whose day a
   * report is reading is left to that report. Rejects as a read does (past its budget).
   */
  keepDay(projectId: string, filters: readonly Filter[], day: number): Promise<void>;
}

/** How long one read of missing days aims to take, ms: well inside SQLite's read budget (15 s by default). */
const READ_AIM_MS = 1000;
/** At most this many days in one read. */
const MAX_DAYS_A_READ = 31;
/**
 * Reads of missing days run at most this many at once per store, the others wait for a turn: each
 * is a scan of the events, and more at once only share the cores (on PostgreSQL with its pool of
 * ten, the overview's eight lists reading side by side took 67 s over 90 days at 10M events, two
 * at a time 34 s; four at a time measured 48 s).
 */
const READS_AT_ONCE = 2;

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

/** The dimensions a read of missing days counts and keeps: every one a top list can ask for. */
const KEPT_DIMENSIONS: readonly FilterDimension[] = FILTER_DIMENSIONS;

/** A dimension's groups of a read: by `day * 2 + bot flag`, then by value. */
type Groups = Map<number, Map<string, Group>>;

/** A filter: a dimension and its value. */
export type Filter = readonly [FilterDimension, string];

/** What one statement over the events gave: each filter's groups of each dimension, and the days' versions and marks. */
interface EventsRead {
  /** The days read (of missing days: `[first, end)`; of the rest of a range: empty). */
  first: number;
  end: number;
  /** How long the statement took, ms (its wait for a turn not counted). */
  ms: number;
  /** By {@link groupsKey}. */
  groups: Map<string, Groups>;
  versions: Map<number, number>;
  marked: Set<number>;
}

/** The key of a filter's groups of one dimension in {@link EventsRead.groups}. */
const groupsKey = (filterDim: string, filterValue: string, dim: string): string => JSON.stringify([filterDim, filterValue, dim]);

/** Filtered top lists over `run`, keeping what they compute through `options.keep`. */
export function createFilteredTops(dialect: Dialect, run: RunQuery, options: FilteredTopsOptions): FilteredTops {
  const builtIns = new Set(BUILT_IN_EVENT_TYPES);
  const turns = createTurns(READS_AT_ONCE);
  /** Reads of missing days under way, by project, filter and day (each read is listed under each of its days). */
  const reading = new Map<string, { read: Promise<EventsRead>; background: boolean }>();
  /**
   * The read of a day a report may wait for: another report's. The background's runs at the lowest
   * priority, so a report reads the day itself rather than wait (the second keep of it is refused).
   */
  const reportReading = (key: string) => {
    const entry = reading.get(key);
    return entry === undefined || entry.background ? undefined : entry.read;
  };
  const readingKey = (projectId: string, filterDim: FilterDimension, filterValue: string, day: number) =>
    JSON.stringify([projectId, filterDim, filterValue, day]);

  /**
   * The statement of the events of `filters` over `ranges`, by filter, day, bot flag and value of
   * each of `dims`; with `state`, the versions and marks of its days after them. The events are
   * read once, whatever the number of filters: each is then counted once per filter it matches
   * (materialized when several dimensions group them).
   */
  const eventsSql = (
    v: Values,
    sketchOf: SketchOfSql | null,
    projectId: string,
    filters: readonly Filter[],
    ranges: ReadonlyArray<readonly [number, number]>,
    dims: readonly FilterDimension[],
    bots: string,
    state: readonly [first: number, end: number] | null,
  ): string => {
    const valuesOf = new Map<FilterDimension, string[]>();
    for (const [dim, value] of filters) valuesOf.set(dim, [...(valuesOf.get(dim) ?? []), value]);
    const filterDims = [...valuesOf];
    // Values are added in the order of the text (SQLite's placeholders are positional).
    const inList = (values: readonly string[]) => values.map((value) => v.add(value)).join(', ');
    const columns = `${daySql('timestamp')} AS day, CASE WHEN is_bot = ${dialect.falseValue} THEN 0 ELSE 1 END AS bot,
        CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END AS pv, ${dims.map((dim, i) => `${DIMENSION_COLUMNS[dim]} AS d${i}`).join(', ')},
        COALESCE(anonymous_id, visitor_id) AS vkey, visitor_id AS vhash`;
    const events = `FROM events WHERE project_id = ${v.add(projectId)}
        AND (${ranges.map(([from, to]) => `(timestamp >= ${v.add(from)} AND timestamp < ${v.add(to)})`).join(' OR ')})${bots}`;
    // `x`: a row per event and filter it matches, the filter in `fd` and `fv` when there are
    // several (one filter's rows carry none: a first view's events are many). Filters of one
    // dimension partition the events: a row per event, read straight; filters of several
    // dimensions read the events once (`f`), then each dimension's matches of them.
    const keyed = filters.length > 1;
    let source: string;
    if (filterDims.length === 1) {
      const [dim, values] = filterDims[0] as [FilterDimension, string[]];
      source = `x AS ${dims.length > 1 ? 'MATERIALIZED ' : ''}(SELECT ${keyed ? `'${dim}' AS fd, ${DIMENSION_COLUMNS[dim]} AS fv, ` : ''}${columns}
        ${events} AND ${DIMENSION_COLUMNS[dim]} IN (${inList(values)}))`;
    } else {
      const names = `day, bot, pv, ${dims.map((_, i) => `d${i}`).join(', ')}, vkey, vhash`;
      source = `f AS MATERIALIZED (SELECT ${filterDims.map(([dim], k) => `${DIMENSION_COLUMNS[dim]} AS f${k}`).join(', ')}, ${columns}
        ${events} AND (${filterDims.map(([dim, values]) => `${DIMENSION_COLUMNS[dim]} IN (${inList(values)})`).join(' OR ')})),
      x AS MATERIALIZED (${filterDims.map(([dim, values], k) => `SELECT '${dim}' AS fd, f${k} AS fv, ${names} FROM f WHERE f${k} IN (${inList(values)})`).join('\n UNION ALL ')})`;
    }
    const filterColumns = keyed ? 'fd, fv' : 'CAST(NULL AS TEXT) AS fd, CAST(NULL AS TEXT) AS fv';
    const branches = dims.map((dim, i) => {
      // Page dimensions count page views, the event type every event.
      const where = `d${i} IS NOT NULL${dim === 'event_type' ? '' : ' AND pv = 1'}`;
      return sketchOf === null
        ? `SELECT 0 AS kind, ${filterColumns}, '${dim}' AS dim, day, bot, d${i} AS value, 1 AS n, vkey, vhash, CAST(NULL AS BYTEA) AS visitors,
             CAST(NULL AS BYTEA) AS visitor_hashes, CAST(NULL AS BIGINT) AS version FROM x WHERE ${where}`
        : `SELECT 0 AS kind, ${filterColumns}, '${dim}' AS dim, day, bot, d${i} AS value, COUNT(*) AS n, CAST(NULL AS TEXT) AS vkey, CAST(NULL AS TEXT) AS vhash,
             ${sketchOf('vkey')} AS visitors, ${sketchOf('vhash')} AS visitor_hashes, CAST(NULL AS BIGINT) AS version
           FROM x WHERE ${where} GROUP BY ${keyed ? 'fd, fv, ' : ''}day, bot, d${i}`;
    });
    if (state !== null) {
      // The days' state in the same snapshot as their events: kind 1 a version, 2 a mark.
      const stateOf = (kind: number, table: string, version: string) =>
        `SELECT ${kind} AS kind, CAST(NULL AS TEXT) AS fd, CAST(NULL AS TEXT) AS fv, CAST(NULL AS TEXT) AS dim, day, 0 AS bot, CAST(NULL AS TEXT) AS value, 0 AS n,
           CAST(NULL AS TEXT) AS vkey, CAST(NULL AS TEXT) AS vhash, CAST(NULL AS BYTEA) AS visitors, CAST(NULL AS BYTEA) AS visitor_hashes, ${version} AS version
         FROM ${table} WHERE project_id = ${v.add(projectId)} AND day >= ${v.add(state[0])} AND day < ${v.add(state[1])}`;
      branches.push(stateOf(1, 'rollup_versions', 'version'), stateOf(2, 'rollup_dirty', 'CAST(NULL AS BIGINT)'));
    }
    return `WITH ${source}\n${branches.join('\n UNION ALL ')}`;
  };

  /**
   * Rows of {@link eventsSql} (grouped by the database when `sketched`) as each filter's groups, and
   * the days' versions and marks; `filters` as given to it.
   */
  const readOf = (sketched: boolean, filters: readonly Filter[], first = 0, end = 0, ms = 0) => (rows: ReadonlyArray<Record<string, unknown>>): EventsRead => {
    // One filter's rows carry no filter: its keys, by dimension, made once.
    const only = filters.length === 1 ? (filters[0] as Filter) : null;
    const onlyKeys = new Map<string, string>();
    const keyOf = (row: Record<string, unknown>) => {
      if (only === null) return groupsKey(String(row.fd), String(row.fv), String(row.dim));
      const dim = String(row.dim);
      let key = onlyKeys.get(dim);
      if (key === undefined) onlyKeys.set(dim, (key = groupsKey(only[0], only[1], dim)));
      return key;
    };
    const groups = new Map<string, Groups>();
    const versions = new Map<number, number>();
    const marked = new Set<number>();
    const tallies = new Map<string, Map<number, Map<string, Tally>>>();
    const slot = <T>(outer: Map<string, Map<number, Map<string, T>>>, dim: string, key: number) => {
      let byKey = outer.get(dim);
      if (byKey === undefined) outer.set(dim, (byKey = new Map()));
      let byValue = byKey.get(key);
      if (byValue === undefined) byKey.set(key, (byValue = new Map()));
      return byValue;
    };
    for (const row of rows) {
      const kind = num(row.kind);
      if (kind === 1) versions.set(num(row.day), num(row.version));
      else if (kind === 2) marked.add(num(row.day));
      else {
        const dim = keyOf(row);
        const key = num(row.day) * 2 + num(row.bot);
        const value = String(row.value);
        if (sketched) {
          slot(groups, dim, key).set(value, { n: num(row.n), visitors: bytesOf(row.visitors), hashes: bytesOf(row.visitor_hashes) });
          continue;
        }
        const byValue = slot(tallies, dim, key);
        let tally = byValue.get(value);
        if (tally === undefined) byValue.set(value, (tally = new Tally()));
        tally.add(row.vkey, row.vhash);
      }
    }
    for (const [dim, byKey] of tallies) {
      for (const [key, byValue] of byKey) for (const [value, tally] of byValue) slot(groups, dim, key).set(value, tally.group());
    }
    return { first, end, ms, groups, versions, marked };
  };

  /** Hands the days `[first, end)` of `read` to the store to keep, every dimension; days marked in its snapshot are not. */
  const keepRead = (projectId: string, [filterDim, filterValue]: Filter, read: EventsRead) => {
    const days: FilteredDay[] = [];
    for (let day = read.first; day < read.end; day++) {
      if (read.marked.has(day)) continue;
      const dims = KEPT_DIMENSIONS.map((dim) => {
        const rows: FilteredRow[] = [];
        for (const bot of [0, 1]) {
          for (const [value, group] of read.groups.get(groupsKey(filterDim, filterValue, dim))?.get(day * 2 + bot) ?? []) {
            rows.push({ isBot: bot === 1, value, n: group.n, visitors: group.visitors, visitorHashes: group.hashes });
          }
        }
        return { dim, rows };
      });
      days.push({ day, version: read.versions.get(day) ?? 0, dims });
    }
    if (days.length === 0) return Promise.resolve();
    return options.keep({ projectId, filterDim, filterValue, days }).then(
      () => undefined,
      (error: unknown) => options.onKeepError?.(error),
    );
  };

  /**
   * Reads the events of `filters` of the days `[first, end)`, every dimension, listed in `reading`
   * until kept: a report arriving meanwhile takes this read rather than the events again. `kept`
   * settles once the store has kept what was read (or failed to: `onKeepError`).
   */
  const readDays = (projectId: string, filters: readonly Filter[], sketchOf: SketchOfSql | null, first: number, end: number, background = false) => {
    const via = background ? (options.runBackground ?? run) : run;
    const task = async () => {
      const v = new Values(dialect);
      const started = performance.now();
      const rows = await via(eventsSql(v, sketchOf, projectId, filters, [[first * DAY_MS, end * DAY_MS]], KEPT_DIMENSIONS, '', [first, end]), v.list);
      return readOf(sketchOf !== null, filters, first, end, performance.now() - started)(rows);
    };
    // The background's reads (one at a time; on SQLite on a thread of their own) take no turn from the reports'.
    const read = background ? task() : turns.take(task);
    const keys = filters.flatMap(([filterDim, filterValue]) => Array.from({ length: end - first }, (_, i) => readingKey(projectId, filterDim, filterValue, first + i)));
    const entry = { read, background };
    for (const key of keys) reading.set(key, entry);
    const release = () => {
      for (const key of keys) if (reading.get(key) === entry) reading.delete(key);
    };
    const kept = read.then((done) => Promise.all(filters.map((filter) => keepRead(projectId, filter, done)))).then(release, release);
    return { read, kept };
  };

  /** Weeks asked of the store to keep as weeks, until it settles: the overview's lists find the same ones at once. */
  const weeksAsked = new Set<string>();
  /**
   * Asks the store to merge the week rows of the whole weeks `[first, end)` whose seven days a
   * report found kept without them (kept day by day before week rows were, or a keep's weeks
   * refused then); not waited for.
   */
  const keepWeeks = (projectId: string, [filterDim, filterValue]: Filter, first: number, end: number, dirty: readonly number[], kept: ReadonlySet<number>, keptWeeks: readonly number[]) => {
    const weeks: number[] = [];
    for (let week = first; week < end; week++) {
      if (dirty.includes(week) || keptWeeks.includes(week)) continue;
      if (Array.from({ length: WEEK_DAYS }, (_, i) => week * WEEK_DAYS + i).every((day) => kept.has(day))) weeks.push(week);
    }
    // A keep a week: each holds the project's lock on PostgreSQL only for its own week.
    for (const week of weeks) {
      const key = JSON.stringify([projectId, filterDim, filterValue, week]);
      if (weeksAsked.has(key)) continue;
      weeksAsked.add(key);
      options
        .keep({ projectId, filterDim, filterValue, days: [], weeks: [week] })
        .catch((error: unknown) => options.onKeepError?.(error))
        .finally(() => weeksAsked.delete(key));
    }
  };

  const top: FilteredTop = async (q, filter, dimension, limit, plan) => {
    const [filterDim, filterValue] = filter;
    const dim: FilterDimension = dimension === 'custom_event' ? 'event_type' : dimension;
    const botKept = q.includeBots ? '' : ` AND is_bot = ${dialect.falseValue}`;
    const sketchOf = options.sketchOf?.() ?? null;
    const days = plan.days;
    const dirty = new Set(days?.dirty ?? []);
    /** The kept rows of the plan's clean days. */
    const keptWhere = (v: Values, clean: NonNullable<DayPlan['days']>) =>
      `project_id = ${v.add(q.projectId)} AND filter_dim = ${v.add(filterDim)} AND filter_value = ${v.add(filterValue)} AND dim = ${v.add(dim)}
       AND day >= ${v.add(clean.first)} AND day < ${v.add(clean.end)}${clean.dirty.length > 0 ? ` AND day NOT IN (${clean.dirty.map((d) => v.add(d)).join(', ')})` : ''}`;

    // Whole weeks of the clean days, none of their days marked: a week kept whole reads its week rows.
    const [weekFirst, weekEnd] = days === null ? [0, 0] : wholeWeeks(days.first, days.end);
    const dirtyWeeks = [...new Set([...dirty].map((day) => Math.floor(day / WEEK_DAYS)))];
    const weekWhere = (v: Values, weeks?: readonly number[]) =>
      `project_id = ${v.add(q.projectId)} AND filter_dim = ${v.add(filterDim)} AND filter_value = ${v.add(filterValue)} AND dim = ${v.add(dim)}
       AND ${weeks === undefined ? `week >= ${v.add(weekFirst)} AND week < ${v.add(weekEnd)}${dirtyWeeks.length > 0 ? ` AND week NOT IN (${dirtyWeeks.map((w) => v.add(w)).join(', ')})` : ''}` : `week IN (${weeks.map((w) => v.add(w)).join(', ')})`}`;
    /**
     * The weeks kept whole: a week's marker, and its seven days' (a process of the version before,
     * beside this one, builds a day again without dropping its week: the week is then not read
     * until this version keeps the day again, whose keep merges the week anew; README, upgrading).
     */
    const keptWeeksSql = (v: Values, weeks?: readonly number[]) =>
      `SELECT week FROM rollup_filtered_weeks w WHERE ${weekWhere(v, weeks)} AND value IS NULL
         AND (SELECT COUNT(*) FROM rollup_filtered d WHERE d.project_id = w.project_id AND d.filter_dim = w.filter_dim AND d.filter_value = w.filter_value
           AND d.dim = w.dim AND d.day >= w.week * ${WEEK_DAYS} AND d.day < w.week * ${WEEK_DAYS} + ${WEEK_DAYS} AND d.value IS NULL) = ${WEEK_DAYS}`;

    // 1. The kept days and weeks and their counts by value, in one snapshot: a day of a week kept
    // whole is counted in the week's rows, not its own.
    const counts = new Map<string, number>();
    const kept = new Set<number>();
    const keptWeeks: number[] = [];
    if (days !== null) {
      const v = new Values(dialect);
      const byWeek = weekFirst < weekEnd;
      const dayRows = (v: Values) =>
        `SELECT value, n FROM rollup_filtered WHERE ${keptWhere(v, days)} AND value IS NOT NULL${botKept}${
          byWeek ? ` AND ${weekOfDaySql('day')} NOT IN (${keptWeeksSql(v)})` : ''
        }`;
      const rows = await run(
        `SELECT 0 AS kind, day, CAST(NULL AS TEXT) AS value, 0 AS n FROM rollup_filtered WHERE ${keptWhere(v, days)} AND value IS NULL
         ${byWeek ? `UNION ALL SELECT 2 AS kind, week, NULL, 0 FROM (${keptWeeksSql(v)}) kept_weeks` : ''}
         UNION ALL
         SELECT 1 AS kind, NULL, value, SUM(n) FROM (${dayRows(v)}${
           byWeek ? ` UNION ALL SELECT value, n FROM rollup_filtered_weeks WHERE ${weekWhere(v)} AND value IS NOT NULL${botKept} AND week IN (${keptWeeksSql(v)})` : ''
         }) kept_rows GROUP BY value`,
        v.list,
      );
      for (const row of rows) {
        const kind = num(row.kind);
        if (kind === 0) kept.add(num(row.day));
        else if (kind === 2) keptWeeks.push(num(row.day));
        else counts.set(String(row.value), num(row.n));
      }
      keepWeeks(q.projectId, filter, weekFirst, weekEnd, dirtyWeeks, kept, keptWeeks);
    }

    // 2. The events of the rest of the range (days not clean, the ends), then of the clean days not kept yet.
    const counted: Array<[string, Group]> = [];
    const bots = q.includeBots ? [0, 1] : [0];
    /** Counts a day's groups (keys `day * 2 + bot flag`) of this report's bot flags. */
    const countDay = (groups: Groups | undefined, day: number) => {
      for (const bot of bots) counted.push(...(groups?.get(day * 2 + bot) ?? []));
    };
    if (plan.raw.length > 0) {
      const v = new Values(dialect);
      // Read with this report's bot flags only: every group counts.
      const groups = readOf(sketchOf !== null, [filter])(await run(eventsSql(v, sketchOf, q.projectId, [filter], plan.raw, [dim], botKept, null), v.list)).groups.get(
        groupsKey(filterDim, filterValue, dim),
      );
      for (const byValue of groups?.values() ?? []) counted.push(...byValue);
    }
    if (days !== null) {
      /** The days counted so far from reads of the events (each once, whoever read it). */
      const have = new Set<number>();
      const countRead = (read: EventsRead) => {
        for (let day = Math.max(read.first, days.first); day < Math.min(read.end, days.end); day++) {
          if (dirty.has(day) || kept.has(day) || have.has(day)) continue;
          have.add(day);
          countDay(read.groups.get(groupsKey(filterDim, filterValue, dim)), day);
        }
      };
      const missing = (day: number) => !dirty.has(day) && !kept.has(day) && !have.has(day);
      // Consecutive days missing, a few at a time: one day first, then as many as the last read
      // suggests fit in about a second (a statement per day costs its own planning and round trip,
      // which at a few thousand events a day was most of a first view). Days another report is
      // reading are passed over, to be taken from its read after this report's own: reports
      // asked at once read different days side by side.
      let size = 1;
      const others = new Set<Promise<EventsRead>>();
      for (let pass = 0; pass < 2; pass++) {
        for (let day = days.first; day < days.end; ) {
          const other = pass === 0 ? reportReading(readingKey(q.projectId, filterDim, filterValue, day)) : undefined;
          if (!missing(day) || other !== undefined) {
            if (other !== undefined) others.add(other);
            day++;
            continue;
          }
          let end = day + 1;
          while (end < days.end && end - day < size && missing(end) && (pass > 0 || reportReading(readingKey(q.projectId, filterDim, filterValue, end)) === undefined)) end++;
          const read = await readDays(q.projectId, [filter], sketchOf, day, end).read;
          countRead(read);
          size = Math.max(1, Math.min(MAX_DAYS_A_READ, Math.floor(((end - day) * READ_AIM_MS) / Math.max(read.ms, 1))));
          day = end;
        }
        // The other reports' reads; the days of one refused (past its budget) are read here, in a second pass.
        for (const other of others) {
          const read = await other.catch(() => null);
          if (read !== null) countRead(read);
        }
        others.clear();
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
      // is idempotent, so they change nothing. The weeks step 1 found kept whole and still kept
      // are read as weeks (one dropped since by a refresh is read as its days left).
      const w = new Values(dialect);
      const valueIn = () => `value IN (${ranked.map(([value]) => w.add(value)).join(', ')})${botKept}`;
      const keptSketches = `SELECT value, ${sketchColumn} AS sketch FROM rollup_filtered WHERE ${keptWhere(w, days)} AND ${valueIn()}${
        keptWeeks.length > 0
          ? ` AND ${weekOfDaySql('day')} NOT IN (${keptWeeksSql(w, keptWeeks)})
         UNION ALL SELECT value, ${sketchColumn} FROM rollup_filtered_weeks WHERE ${weekWhere(w, keptWeeks)} AND ${valueIn()} AND week IN (${keptWeeksSql(w, keptWeeks)})`
          : ''
      }`;
      const union = options.sketchUnion?.() ?? null;
      const sketchRows = await run(
        union === null ? keptSketches : `SELECT value, ${union('sketch')} AS sketch FROM (${keptSketches}) kept_sketches GROUP BY value`,
        w.list,
      );
      for (const row of sketchRows) if (row.sketch instanceof Uint8Array) visitors.get(String(row.value))?.mergeBytes(row.sketch);
    }

    return ranked.map(([value, n]) => ({ value, events: n, visitors: (visitors.get(value) ?? VisitorSketch.empty()).estimate() }));
  };

  const keepDay: FilteredTops['keepDay'] = async (projectId, filters, day) => {
    // A filter whose day a report is reading is kept by that read.
    const others = new Set<Promise<EventsRead>>();
    const own: Filter[] = [];
    for (const filter of filters) {
      const other = reading.get(readingKey(projectId, filter[0], filter[1], day))?.read;
      if (other === undefined) own.push(filter);
      else others.add(other);
    }
    const sketchOf = options.sketchOf?.() ?? null;
    // Without the database's sketches every event of a read comes here as a row: a filter a statement.
    const batches = sketchOf === null ? own.map((filter) => [filter]) : own.length > 0 ? [own] : [];
    for (const batch of batches) {
      const { read, kept } = readDays(projectId, batch, sketchOf, day, day + 1, true);
      await read;
      await kept;
    }
    // Another read's failure is its report's: this turn then leaves those filters' day to a later one.
    for (const other of others) await other.catch(() => undefined);
  };

  return { top, keepDay };
}

/** Runs tasks at most `limit` at a time, in the order they were given. */
function createTurns(limit: number): { take<T>(task: () => Promise<T>): Promise<T> } {
  let running = 0;
  const waiting: Array<() => void> = [];
  // A finished task hands its turn to the first waiting one, or gives it back.
  const next = () => {
    const wake = waiting.shift();
    if (wake === undefined) running--;
    else wake();
  };
  return {
    async take(task) {
      if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
      else running++;
      try {
        return await task();
      } finally {
        next();
      }
    },
  };
}
