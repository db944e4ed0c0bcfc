import type { ReportQuery, VariantResult } from '../report-store.js';
import { type Dialect, type RunQuery, Values } from './dialect.js';
import { type ExposureGaps, ExposureGapsBuilder, type GapConversion, type GapExposure, type GapTail, MAX_VARIANTS, answerExposureGaps } from './exposure-gaps.js';
import type { DayPlan } from './rollup-queries.js';
import { DAY_MS } from './rollup-schema.js';
import { num } from '../shared/row-values.js';

/*
 * The experiment report's cells (`exposure-gaps.ts`), kept in memory per experiment, conversion,
 * kind of visitor and bots (docs/decisions.md, "The experiment report's kept cells"); and the
 * experiments list's, built the same way with each experiment counted as a variant of one.
 *
 * - A report finding none answers from the rollups as before and, if they found exposures (or
 *   failed: past the read budget, say), starts a build in the background (one at a time): the rollups' exposure rows of the
 *   experiment and conversion rows of the event type over 90 days (or from the report's first
 *   day) up to yesterday, read a few days at a time, each piece with its days' refresh versions
 *   and marks in the same snapshot.
 * - A report over whole days from one the cells hold reads the versions and marks of its days the
 *   cells hold. The cells answer for its days up to the first one marked (a late event, an
 *   erasure, retention: each marks the days it changes; or marked when the cells were built) or
 *   refreshed since the build: only a range's own days matter, and a range's first days are a
 *   range of their own. The rest is its tail, read as every report reads it (rollups, and the
 *   events of marked days and today), a row per visitor, with the versions of the cells' days
 *   again in the same statement (changed in between: answered from the rollups). A tail of more
 *   than two whole days (an early day changed) is answered from the rollups instead, which add it
 *   up in the database.
 * - A day refreshed since the build, or a day passed since it, starts a new build; the cells in
 *   hand answer meanwhile. Yesterday, which late events of the night refresh again and again,
 *   starts one at most once an hour.
 * - A report starting before the cells, within a day (its first hours are in no cell) or today is
 *   answered from the rollups; one starting before the cells starts a build from its first day.
 *
 * Cells live in this process only: another process's erasure is seen through the marks and
 * versions, like its own. They take a few megabytes at ten million events; past `maxBytes` the
 * least recently read go, and cells larger than that alone are given up until the next day.
 */

/** How a report reads its rows of exposures and conversions, a row per visitor (`report-queries.ts`). */
export interface ExperimentRowsSql {
  /** `variant, visitor, visitor_key, first`: a row per variant and visitor exposed in the plan's range. */
  exposures(q: ReportQuery, plan: DayPlan, v: Values, experiment: string): string;
  /** `variant, visitor, visitor_key, first`: a row per experiment (as `variant`, named) and visitor exposed; `first` 0. */
  experiments(q: ReportQuery, plan: DayPlan, v: Values): string;
  /** `visitor, visitor_key, last`: a row per visitor with the event type in the plan's range. */
  conversions(q: ReportQuery, plan: DayPlan, v: Values, conversion: string): string;
}

/** Options of {@link createKeptExposureGaps}. */
export interface KeptExposureGapsOptions {
  /** Runs a report's statement. */
  run: RunQuery;
  /** Runs a build's read (on SQLite the background reader, where it does not queue with the reports'). */
  runBackground: RunQuery;
  rows: ExperimentRowsSql;
  /** The clock, ms (tests move it). */
  now?: () => number;
  /** The bytes of cells kept at most; the least recently read go first. */
  maxBytes?: number;
  /** A build failed (the report was answered). */
  onKeepError?: (error: unknown) => void;
}

/** The experiment report's kept cells. */
export interface KeptExposureGaps {
  /**
   * The report from the cells, or from `fallback` (the rollups) when none fit; then a build may
   * start, if the fallback found exposures. `experiment` null: the experiments list, every
   * experiment with a name counted as one variant named after it (`conversion` null).
   */
  answer(q: ReportQuery, plan: DayPlan, experiment: string | null, conversion: string | null, fallback: () => Promise<VariantResult[]>): Promise<VariantResult[]>;
  /** Resolves once the builds started so far have kept their cells or given up. */
  settled(): Promise<void>;
}

/** The days the cells cover from the newest back, at least (the dashboard's longest range). */
const SPAN_DAYS = 90;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** A build's first piece: days read at once, doubled while pieces hold fewer than a quarter of {@link PIECE_ROWS}, halved past it. */
const FIRST_SPAN_DAYS = 4;
const MAX_SPAN_DAYS = 8;
const PIECE_ROWS = 20_000;
/** Whole days of a range the cells may leave to the tail (a marked yesterday, say); past it the rollups answer. */
const MAX_TAIL_DAYS = 2;
/** How often the cells are built again for a refresh of yesterday alone. */
const YESTERDAY_REBUILD_MS = 3_600_000;
/** The version kept for a day marked when the cells were built: no refresh version equals it. */
const MARKED = -1;

interface Kept {
  gaps: ExposureGaps;
  /** When the build started, ms. */
  builtAt: number;
  /** The cells hold days [first, last]. */
  first: number;
  last: number;
  /** Each day's refresh version when the cells were built (absent: none, 0). */
  versions: Map<number, number>;
}

/** The kept cells of one store. */
export function createKeptExposureGaps(dialect: Dialect, options: KeptExposureGapsOptions): KeptExposureGaps {
  const now = options.now ?? Date.now;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  /** In order of last use, the most recent last. */
  const kept = new Map<string, Kept>();
  const building = new Map<string, Promise<void>>();
  /** Builds run one after the other: each holds its map of visitors while it reads. */
  let queue: Promise<void> = Promise.resolve();
  /** Cells larger than `maxBytes` alone, by the last day of the build that found it out. */
  const tooLarge = new Map<string, number>();

  const keyOf = (q: ReportQuery, experiment: string | null, conversion: string | null) =>
    JSON.stringify([q.projectId, experiment, conversion, q.visitorKey, q.includeBots]);

  /** What an entry takes: its cells, its versions and a fixed overhead. */
  const bytesOf = (entry: Kept) => entry.gaps.bytes + entry.versions.size * 16 + 1024;

  const build = (key: string, q: ReportQuery, experiment: string | null, conversion: string | null, first: number, last: number) => {
    if (building.has(key) || last < first || tooLarge.get(key) === last) return;
    const done = queue
      .then(() => buildCells(q, experiment, conversion, first, last))
      .then((cells) => {
        if (cells === null) {
          // Not tried again until the next day: the same days would be as large.
          for (const [other, day] of tooLarge) if (day < last) tooLarge.delete(other);
          tooLarge.set(key, last);
          kept.delete(key);
          return;
        }
        kept.delete(key);
        kept.set(key, cells);
        let bytes = 0;
        for (const entry of kept.values()) bytes += bytesOf(entry);
        for (const [old, entry] of kept) {
          if (bytes <= maxBytes || old === key) break;
          kept.delete(old);
          bytes -= bytesOf(entry);
        }
      })
      .catch((error: unknown) => options.onKeepError?.(error))
      .finally(() => building.delete(key));
    building.set(key, done);
    queue = done;
  };

  /**
   * The cells over days [first, last], read a few days at a time (each piece a snapshot of its
   * days, with their versions and marks), so that no read returns more rows than a few days
   * hold and the server's event loop runs between them; null once they would take more than
   * `maxBytes` alone.
   */
  const buildCells = async (q: ReportQuery, experiment: string | null, conversion: string | null, first: number, last: number): Promise<Kept | null> => {
    const started = now();
    const builder = new ExposureGapsBuilder();
    const versions = new Map<number, number>();
    let span = FIRST_SPAN_DAYS;
    for (let from = first; from <= last; ) {
      const to = Math.min(last, from + span - 1);
      const rows = await options.runBackground(...daysSql(q, experiment, conversion, from, to));
      let at = 0;
      for (let day = from; day <= to; day++) {
        const exposures: GapExposure[] = [];
        const conversions: GapConversion[] = [];
        for (; at < rows.length && num((rows[at] as Record<string, unknown>).day) === day; at++) {
          const row = rows[at] as Record<string, unknown>;
          const kind = num(row.kind);
          if (kind === 0) exposures.push({ variant: String(row.variant), visitor: num(row.visitor), first: num(row.t) });
          else if (kind === 1) conversions.push({ visitor: num(row.visitor), last: num(row.t) });
          else if (kind === 2) versions.set(day, num(row.t));
          // A day marked in its snapshot has rollups a refresh will replace: no range over it is
          // answered until the cells are built again after that refresh (its version then differs).
          else versions.set(day, MARKED);
        }
        builder.addDay(day, exposures, conversions);
      }
      if (builder.bytes > maxBytes || builder.variants > MAX_VARIANTS) return null;
      from = to + 1;
      span = rows.length < PIECE_ROWS / 4 ? Math.min(span * 2, MAX_SPAN_DAYS) : rows.length > PIECE_ROWS ? Math.max(1, span >> 1) : span;
    }
    return { gaps: await builder.finish(), builtAt: started, first, last, versions };
  };

  /** A piece of a build: days [from, to]'s exposures, conversions, versions and marks, in order of day and kind. */
  const daysSql = (q: ReportQuery, experiment: string | null, conversion: string | null, from: number, to: number): [string, unknown[]] => {
    const v = new Values(dialect);
    const visitor = q.visitorKey === 'hash' ? 'visitor_hash' : 'visitor';
    const days = () => `project_id = ${v.add(q.projectId)} AND day >= ${v.add(from)} AND day <= ${v.add(to)}`;
    const bots = q.includeBots ? '' : ` AND is_bot = ${dialect.falseValue}`;
    // The list counts each experiment as a variant of one experiment.
    const variant = experiment === null ? 'experiment' : 'variant';
    const parts = [
      `SELECT 0 AS kind, variant, visitor, day, t FROM (SELECT ${variant} AS variant, ${visitor} AS visitor, day, MIN(first_ts) AS t FROM rollup_exposures
        WHERE ${days()} AND ${experiment === null ? "experiment <> ''" : `experiment = ${v.add(experiment)}`}${bots} AND ${visitor} IS NOT NULL
        GROUP BY ${variant}, ${visitor}, day) x`,
    ];
    if (conversion !== null) {
      // Day by day (`rollup-queries.ts` says why), both values of is_bot named so each day is one
      // seek. (Values are added in the order of the text, for SQLite's positional `?`.)
      const project = v.add(q.projectId);
      const list: string[] = [];
      for (let day = from; day <= to; day++) list.push(v.add(day));
      const isBot = q.includeBots ? `is_bot IN (${dialect.falseValue}, ${dialect.trueValue})` : `is_bot = ${dialect.falseValue}`;
      parts.push(`SELECT 1, CAST(NULL AS TEXT), visitor, day, t FROM (SELECT ${visitor} AS visitor, day, MAX(last_ts) AS t FROM rollup_values
        WHERE project_id = ${project} AND dim = 'event_type' AND day IN (${list.join(', ')}) AND ${isBot} AND value = ${v.add(conversion)}
          AND ${visitor} IS NOT NULL GROUP BY ${visitor}, day) c`);
    }
    parts.push(...dayStateParts(v, q.projectId, from, to, (kind, version) => `${kind}, CAST(NULL AS TEXT), CAST(NULL AS BIGINT), day, ${version}`));
    return [`SELECT * FROM (${parts.join('\n  UNION ALL ')}) r ORDER BY day, kind`, v.list];
  };

  return {
    async answer(q, plan, experiment, conversion, fallback) {
      const newest = Math.floor(now() / DAY_MS) - 1;
      // Cells hold no part of a range that starts within a day or after them.
      if (plan.days === null || q.from !== plan.days.first * DAY_MS || plan.days.first > newest) return fallback();
      const key = keyOf(q, experiment, conversion);
      const a = plan.days.first;
      const b = plan.days.end - 1;
      // The cells span 90 days back from the newest, or from the range's first day if earlier.
      const first = Math.min(a, newest - SPAN_DAYS + 1);
      const cells = kept.get(key);
      if (cells === undefined || cells.first > a) {
        let answer: VariantResult[];
        try {
          answer = await fallback();
        } catch (error) {
          // Past the read budget, say: the cells are what the next read needs.
          build(key, q, experiment, conversion, first, newest);
          throw error;
        }
        if (answer.length > 0) build(key, q, experiment, conversion, first, newest);
        return answer;
      }
      kept.delete(key);
      kept.set(key, cells);
      let tail: GapTail | null;
      let end: number;
      try {
        const current = await currentDays(q, cells, a, Math.min(b, cells.last));
        end = current.end;
        // A day refreshed since the build: the cells stay for the days before it, and are built
        // again; for yesterday, which late events of the night refresh again and again, at most
        // once an hour (meanwhile it is read as the tail: a day's visitors).
        const rebuild = current.changed && (end + 1 < newest || now() - cells.builtAt >= YESTERDAY_REBUILD_MS);
        if (rebuild || cells.last < newest) build(key, q, experiment, conversion, first, newest);
        // More than a few whole days in the tail (an early day changed): the rollups add them up
        // in the database rather than a row per visitor here.
        if (b - end > MAX_TAIL_DAYS) return fallback();
        tail = await readTail(q, plan, experiment, conversion, cells, a, end);
      } catch (error) {
        // The rollups answer whatever went wrong here; a failed read of theirs fails the report.
        options.onKeepError?.(error);
        return fallback();
      }
      // A day changed between the two reads: the rollups answer.
      if (tail === null) return fallback();
      return answerExposureGaps(cells.gaps, a, end, tail, conversion !== null);
    },

    async settled() {
      while (building.size > 0) await Promise.all(building.values());
    },
  };

  /**
   * The days [a, last] the cells answer for: up to the first day marked (now, or when the cells
   * were built) or refreshed since the build, which the tail reads instead with every day after
   * it; `changed` when a refresh was the reason (only that first day is looked at: a refreshed day
   * after a marked one starts a build once the marked one is refreshed, or a day has passed).
   */
  async function currentDays(q: ReportQuery, cells: Kept, a: number, last: number): Promise<{ end: number; changed: boolean }> {
    if (last < a) return { end: last, changed: false };
    const v = new Values(dialect);
    const rows = await options.run(dayStateParts(v, q.projectId, a, last, (kind, version) => `${kind} AS kind, day, ${version} AS t`).join('\n UNION ALL '), v.list);
    const stale = firstStale(cells, rows, a, last);
    return stale === null ? { end: last, changed: false } : { end: stale.day - 1, changed: stale.refreshed };
  }

  /**
   * The tail of a report after day `end` and, in the same snapshot, the versions and marks of its
   * days [a, end]; null when one of those days changed since {@link currentDays} read them.
   */
  async function readTail(
    q: ReportQuery,
    plan: DayPlan,
    experiment: string | null,
    conversion: string | null,
    cells: Kept,
    a: number,
    end: number,
  ): Promise<GapTail | null> {
    const days = plan.days as NonNullable<DayPlan['days']>;
    const from = Math.max(a, end + 1);
    const dirty = days.dirty.filter((day) => day >= from);
    const tailPlan: DayPlan = {
      days: from < days.end && dirty.length < days.end - from ? { first: from, end: days.end, dirty } : null,
      // A raw range may run across `from` (a marked day before it joined to the next): clipped.
      raw: plan.raw.filter(([, stop]) => stop > from * DAY_MS).map(([start, stop]) => [Math.max(start, from * DAY_MS), stop]),
    };
    const tailQ: ReportQuery = { ...q, from: from * DAY_MS };
    const v = new Values(dialect);
    const parts: string[] = [];
    const hasTail = tailPlan.days !== null || tailPlan.raw.length > 0;
    if (hasTail) {
      const exposures = experiment === null ? options.rows.experiments(tailQ, tailPlan, v) : options.rows.exposures(tailQ, tailPlan, v, experiment);
      parts.push(`SELECT 0 AS kind, variant, visitor, visitor_key, CAST(first AS BIGINT) AS t, CAST(NULL AS BIGINT) AS day FROM (${exposures}) x`);
      if (conversion !== null) {
        parts.push(`SELECT 1, CAST(NULL AS TEXT), visitor, visitor_key, last, CAST(NULL AS BIGINT) FROM (${options.rows.conversions(tailQ, tailPlan, v, conversion)}) c`);
      }
    }
    if (end >= a) {
      // Named in full: this may be the union's first part, which names the columns.
      parts.push(
        ...dayStateParts(v, q.projectId, a, end, (kind, version) => `${kind} AS kind, CAST(NULL AS TEXT) AS variant, CAST(NULL AS BIGINT) AS visitor, CAST(NULL AS TEXT) AS visitor_key, ${version} AS t, day`),
      );
    }
    if (parts.length === 0) return { exposures: [], conversions: [] };
    const rows = await options.run(parts.join('\n  UNION ALL '), v.list);
    if (firstStale(cells, rows, a, end) !== null) return null;
    const tail: { exposures: Array<GapTail['exposures'][number]>; conversions: Array<GapTail['conversions'][number]> } = { exposures: [], conversions: [] };
    for (const row of rows) {
      const kind = num(row.kind);
      const visitor = row.visitor === null || row.visitor === undefined ? null : num(row.visitor);
      const key = row.visitor_key === null || row.visitor_key === undefined ? null : String(row.visitor_key);
      if (kind === 0) tail.exposures.push({ variant: String(row.variant), visitor, key, first: num(row.t) });
      else if (kind === 1) tail.conversions.push({ visitor, key, last: num(row.t) });
    }
    return tail;
  }
}

/**
 * The first of the cells' days [a, last] they cannot answer for, given the versions and marks
 * read now (rows of `kind` 2 and 3 with `day` and `t`, as {@link dayStateParts} names them; other
 * rows are passed over): marked now or when the cells were built, or refreshed since the build;
 * `refreshed` when a refresh was the reason. Null when they answer for every one.
 */
function firstStale(cells: Kept, rows: ReadonlyArray<Record<string, unknown>>, a: number, last: number): { day: number; refreshed: boolean } | null {
  const versions = new Map<number, number>();
  const marked = new Set<number>();
  for (const row of rows) {
    const kind = num(row.kind);
    if (kind === 2) versions.set(num(row.day), num(row.t));
    else if (kind === 3) marked.add(num(row.day));
  }
  for (let day = a; day <= last; day++) {
    const built = cells.versions.get(day) ?? 0;
    const version = versions.get(day) ?? 0;
    if (marked.has(day) || built === MARKED) return { day, refreshed: !marked.has(day) && version !== built };
    if (version !== built) return { day, refreshed: true };
  }
  return null;
}

/**
 * The two parts of a UNION that read the refresh versions (kind 2, `version` the version) and
 * the marks (kind 3, `version` null) of a project's days [first, last], each select list written
 * by `columns` for the statement's shape; values added in the order of the text.
 */
function dayStateParts(v: Values, projectId: string, first: number, last: number, columns: (kind: 2 | 3, version: string) => string): string[] {
  const range = () => `project_id = ${v.add(projectId)} AND day >= ${v.add(first)} AND day <= ${v.add(last)}`;
  return [
    `SELECT ${columns(2, 'CAST(version AS BIGINT)')} FROM rollup_versions WHERE ${range()}`,
    `SELECT ${columns(3, 'CAST(NULL AS BIGINT)')} FROM rollup_dirty WHERE ${range()}`,
  ];
}
