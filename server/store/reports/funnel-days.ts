import { type Dialect, type RunQuery, Values } from './dialect.js';
import type { FunnelStepSpec, ReportQuery } from '../report-store.js';
import { type DayPlan, type SourceContext, stepRawRows, stepsSource } from './rollup-queries.js';
import { DAY_MS, daySql } from './rollup-schema.js';
import { rawMask, reachedSteps } from './report-funnel.js';
import { num } from '../shared/row-values.js';

/*
 * Funnels kept per day (docs/decisions.md, "Kept funnels"). A funnel walks each session's events
 * in order, so its counts do not add up from days in general: a session with events on two days
 * is one sequence. But nearly every session lies within one UTC day, and the session summaries
 * list the few that do not (`agg_session_spans`). So the first read of a funnel over a clean day
 * keeps, for that day and funnel, how many of the day's sessions that lie wholly inside it reached
 * each step, and each spanning session's step masks on that day (`rollup_funnels`). A later read
 * sums the days' counts and walks only the spanning sessions, their days' masks joined in day order
 * (days follow each other in time) with their events in the rest of the range (the partial ends
 * and marked days, read from the events as before): a row per day and spanning session, whatever
 * the number of events.
 *
 * Kept rows are part of the daily rollups, like the filtered top lists (`filtered-tops.ts`): kept
 * only while the day is clean at the version the read saw (`report-keep.ts`), deleted by a refresh
 * or an erasure of the day. What can change without touching the day is which of its sessions
 * span days: a late event of a session on another day makes it span. A read so compares, for each
 * kept day, the spanning sessions that reach into it now with those kept, and reads the day again
 * when one is new. A kept spanning session that no longer spans (its other day's events removed)
 * is walked as the others: its masks are still its own.
 *
 * A first read computes its missing days a few at a time (each read within the read budget, and
 * kept as soon as read), from `rollup_steps`, grouped per day and session in the database.
 */

/** A kept day of one funnel, computed from a snapshot that saw the day clean at `version`. */
export interface FunnelDay {
  day: number;
  /** The day's `rollup_versions` version in that snapshot (0: never refreshed since it was created). */
  version: number;
  /** Of the day's sessions that lie wholly inside it, how many reached each step. */
  reached: number[];
  /** Every session that spans days and reaches into the day, with its step masks of the day in order, comma-separated ('' for none). */
  spans: Array<{ sessionId: string; masks: string }>;
}

/** What a funnel hands to the store to keep: days of one project, funnel and bot choice. */
export interface FunnelKeep {
  projectId: string;
  /** The funnel's steps as {@link funnelKey} writes them. */
  funnel: string;
  withBots: boolean;
  days: FunnelDay[];
}

/** Keeps funnel days, each only if the day is not marked and its version is the one given (replacing a day kept already); resolves to the days kept. */
export type KeepFunnel = (keep: FunnelKeep) => Promise<number>;

/** Options of {@link createKeptFunnels}. */
export interface KeptFunnelsOptions {
  keep: KeepFunnel;
  /** A keep that failed: the report was answered; the days are computed again next time. */
  onKeepError?: (error: unknown) => void;
}

/** A funnel over a rollup plan with clean days: how many sessions reached each step. */
export type KeptFunnel = (q: ReportQuery, steps: readonly FunnelStepSpec[], plan: DayPlan, context: (v: Values) => SourceContext) => Promise<number[]>;

/** The key of a funnel's kept rows: its steps, in order. */
export const funnelKey = (steps: readonly FunnelStepSpec[]): string => JSON.stringify(steps.map((step) => [step.kind, step.value]));

/** How long one read of missing days aims to take, ms: well inside the read budget. */
const READ_AIM_MS = 1000;
/** At most this many days in one read. */
const MAX_DAYS_A_READ = 31;

/** A session that spans days, as the session summaries have it. */
interface Span {
  sessionId: string;
  firstDay: number;
  lastDay: number;
}

/** Funnels over `run` that keep what they compute per day through `options.keep`. */
export function createKeptFunnels(dialect: Dialect, run: RunQuery, options: KeptFunnelsOptions): KeptFunnel {
  /** The sessions that span days and reach into `[first, end)` (days), through the summaries' partial index. */
  const spansSql = (v: Values, projectId: string, first: number, end: number): string =>
    `SELECT session_id, first_ts, last_ts FROM agg_session_state
     WHERE project_id = ${v.add(projectId)} AND first_ts / ${DAY_MS} <> last_ts / ${DAY_MS} AND first_ts < ${end * DAY_MS} AND last_ts >= ${first * DAY_MS}`;
  const spanOf = (row: Record<string, unknown>): Span => ({
    sessionId: String(row.session_id),
    firstDay: Math.floor(num(row.first_ts) / DAY_MS),
    lastDay: Math.floor(num(row.last_ts) / DAY_MS),
  });
  /** Each session's masks per day, in time and then byte order of the event id: `day, session_id, masks`. */
  const masksByDay = (source: string) =>
    `SELECT day, session_id, ${dialect.orderedConcat('mask', `timestamp, ${dialect.byteOrder('event_id')}`)} AS masks
     FROM (SELECT ${daySql('timestamp')} AS day, session_id, timestamp, event_id, mask FROM (${source}) r) r GROUP BY day, session_id`;

  /**
   * Reads the clean days `[first, end)` from `rollup_steps`, with the days' versions and marks in
   * the same snapshot, and hands the days that were clean to the store to keep.
   */
  const readDays = async (q: ReportQuery, steps: readonly FunnelStepSpec[], first: number, end: number, context: (v: Values) => SourceContext) => {
    const v = new Values(dialect);
    const s = context(v);
    // Values are added in the order of the text (SQLite's placeholders are positional).
    const spans = spansSql(v, q.projectId, first, end);
    const source = stepsSource(q, { days: { first, end, dirty: [] }, raw: [] }, s, steps, () => '');
    const state = (kind: number, table: string, version: string) =>
      `SELECT ${kind}, day, NULL, NULL, ${version}, NULL, NULL FROM ${table} WHERE project_id = ${v.add(q.projectId)} AND day >= ${v.add(first)} AND day < ${v.add(end)}`;
    // Kinds: 0 the day's sessions wholly inside it, by masks; 1 a spanning session's masks of a
    // day; 2 a spanning session; 3 a day's version; 4 a day's mark. Membership as IN, which
    // SQLite indexes on the fly and PostgreSQL hashes.
    const rows = await run(
      `WITH sp AS MATERIALIZED (${spans}), g AS MATERIALIZED (${masksByDay(source)})
       SELECT 0 AS kind, day, CAST(NULL AS TEXT) AS session_id, masks, COUNT(*) AS n, CAST(NULL AS BIGINT) AS first_ts, CAST(NULL AS BIGINT) AS last_ts
         FROM g WHERE session_id NOT IN (SELECT session_id FROM sp) GROUP BY day, masks
       UNION ALL SELECT 1, day, session_id, masks, 1, NULL, NULL FROM g WHERE session_id IN (SELECT session_id FROM sp)
       UNION ALL SELECT 2, NULL, session_id, NULL, 0, first_ts, last_ts FROM sp
       UNION ALL ${state(3, 'rollup_versions', 'version')}
       UNION ALL ${state(4, 'rollup_dirty', '0')}`,
      v.list,
    );
    const days = new Map<number, FunnelDay>();
    const versions = new Map<number, number>();
    const marked = new Set<number>();
    const spanRows: Span[] = [];
    const dayOf = (day: number) => {
      let kept = days.get(day);
      if (kept === undefined) days.set(day, (kept = { day, version: 0, reached: steps.map(() => 0), spans: [] }));
      return kept;
    };
    const spanMasks = new Map<string, string>();
    for (const row of rows) {
      const kind = num(row.kind);
      if (kind === 0) {
        const kept = dayOf(num(row.day));
        const depth = reachedSteps(String(row.masks), steps.length);
        for (let k = 0; k < depth; k++) kept.reached[k]! += num(row.n);
      } else if (kind === 1) spanMasks.set(`${num(row.day)} ${String(row.session_id)}`, String(row.masks));
      else if (kind === 2) spanRows.push(spanOf(row));
      else if (kind === 3) versions.set(num(row.day), num(row.n));
      else marked.add(num(row.day));
    }
    const read: FunnelDay[] = [];
    for (let day = first; day < end; day++) {
      const kept = dayOf(day);
      kept.version = versions.get(day) ?? 0;
      for (const span of spanRows) {
        if (span.firstDay <= day && day <= span.lastDay) kept.spans.push({ sessionId: span.sessionId, masks: spanMasks.get(`${day} ${span.sessionId}`) ?? '' });
      }
      read.push(kept);
    }
    const clean = read.filter((day) => !marked.has(day.day));
    if (clean.length > 0) {
      options.keep({ projectId: q.projectId, funnel: funnelKey(steps), withBots: q.includeBots, days: clean }).catch((error: unknown) => options.onKeepError?.(error));
    }
    return read;
  };

  return async (q, steps, plan, context) => {
    const days = plan.days as NonNullable<DayPlan['days']>;
    const dirty = new Set(days.dirty);
    /** Each walked session's masks by day (the spanning sessions and those of the raw parts). */
    const walked = new Map<string, Map<number, string>>();
    const walk = (sessionId: string, day: number, masks: string) => {
      let byDay = walked.get(sessionId);
      if (byDay === undefined) walked.set(sessionId, (byDay = new Map()));
      byDay.set(day, masks);
    };
    const reached = steps.map(() => 0);
    const countDay = (day: FunnelDay) => {
      day.reached.forEach((n, k) => (reached[k]! += n));
      for (const span of day.spans) walk(span.sessionId, day.day, span.masks);
    };

    // 1. The kept days and the spanning sessions that reach into the clean days, in one snapshot.
    const v = new Values(dialect);
    const keptSql = `SELECT 0 AS kind, day, session_id, masks, reached, CAST(NULL AS BIGINT) AS first_ts, CAST(NULL AS BIGINT) AS last_ts FROM rollup_funnels
       WHERE project_id = ${v.add(q.projectId)} AND funnel = ${v.add(funnelKey(steps))} AND with_bots = ${v.add(q.includeBots ? 1 : 0)}
         AND day >= ${v.add(days.first)} AND day < ${v.add(days.end)}`;
    const rows = await run(`${keptSql}
 UNION ALL SELECT 1, NULL, session_id, NULL, NULL, first_ts, last_ts FROM (${spansSql(v, q.projectId, days.first, days.end)}) sp`, v.list);
    const kept = new Map<number, FunnelDay>();
    const spanRows: Span[] = [];
    for (const row of rows) {
      if (num(row.kind) === 1) {
        spanRows.push(spanOf(row));
        continue;
      }
      const day = num(row.day);
      if (dirty.has(day)) continue;
      let k = kept.get(day);
      if (k === undefined) kept.set(day, (k = { day, version: 0, reached: [], spans: [] }));
      if (row.session_id === null || row.session_id === undefined) k.reached = String(row.reached).split(',').map(Number);
      else k.spans.push({ sessionId: String(row.session_id), masks: String(row.masks ?? '') });
    }
    // A kept day holds every session that spans into it now, or is read again.
    const keptSpans = new Map([...kept.values()].map((day) => [day.day, new Set(day.spans.map((span) => span.sessionId))]));
    for (const span of spanRows) {
      for (let day = Math.max(span.firstDay, days.first); day <= Math.min(span.lastDay, days.end - 1); day++) {
        if (keptSpans.get(day)?.has(span.sessionId) === false) kept.delete(day);
      }
    }
    for (const day of kept.values()) if (day.reached.length === steps.length) countDay(day);
    const missing = (day: number) => !dirty.has(day) && kept.get(day)?.reached.length !== steps.length;

    // 2. The clean days not kept: consecutive ones, one day first, then as many as the last read
    // suggests fit in about a second.
    let size = 1;
    for (let day = days.first; day < days.end; ) {
      if (!missing(day)) {
        day++;
        continue;
      }
      let end = day + 1;
      while (end < days.end && end - day < size && missing(end)) end++;
      const started = performance.now();
      for (const read of await readDays(q, steps, day, end, context)) countDay(read);
      size = Math.max(1, Math.min(MAX_DAYS_A_READ, Math.floor(((end - day) * READ_AIM_MS) / Math.max(performance.now() - started, 1))));
      day = end;
    }

    // 3. The rest of the range from the events, each session's masks per day.
    if (plan.raw.length > 0) {
      const w = new Values(dialect);
      const s = context(w);
      const mask = rawMask(steps, s);
      const raw = plan.raw.map(([from, to]) => stepRawRows(s, from, to, mask)).join('\n UNION ALL ');
      for (const row of await run(masksByDay(raw), w.list)) walk(String(row.session_id), num(row.day), String(row.masks));
    }

    // The walked sessions: their masks of every day, in day order.
    for (const byDay of walked.values()) {
      const masks = [...byDay.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, m]) => m)
        .filter((m) => m !== '')
        .join(',');
      if (masks === '') continue;
      const depth = reachedSteps(masks, steps.length);
      for (let k = 0; k < depth; k++) reached[k]!++;
    }
    return reached;
  };
}
