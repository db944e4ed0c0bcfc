import { createHash } from 'node:crypto';
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
 * list the few that do not (`agg_session_spans_by_end`). So the first read of a funnel over a
 * clean day keeps, for that day and funnel, how many of the day's sessions that lie wholly inside
 * it reached each step, each spanning session's step masks on that day, and a digest of which
 * sessions spanned into the day (`rollup_funnels`). A later read sums the days' counts and walks
 * only the spanning sessions, their days' masks joined in day order (days follow each other in
 * time) with their events in the rest of the range (the partial ends and marked days, read from
 * the events as before): a row per day and spanning session, whatever the number of events.
 *
 * Kept rows are part of the daily rollups, like the filtered top lists (`filtered-tops.ts`): kept
 * only while the day is clean at the version the read saw (`report-keep.ts`), deleted by a refresh
 * or an erasure of the day. What can change without touching the day is which sessions span into
 * it: a late event of a session on another day makes it span, and an event after midnight makes
 * today's sessions of yesterday span. So the answer takes the spanning sessions from the statement
 * that reads the rest of the range, last, and uses a day's counts only if the day's digest is of
 * those very sessions; a day whose digest differs is read again, after that statement, so that
 * whatever spans in the one snapshot spans in the other too (sessions only come to span), and no
 * session is both counted in a day and walked.
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
  /** The sessions that span days and have a step that day, with their step masks of the day in order, comma-separated. */
  spans: Array<{ sessionId: string; masks: string }>;
  /** {@link spanDigest} of every session that spans days and reaches into the day. */
  spanDigest: string;
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

/**
 * A digest of a set of session ids: their count and a hash of them in order. A kept day holds this
 * rather than the ids of sessions that have no step that day: an erasure or retention reaches the
 * days with the user's events, not every day a session's span covers.
 */
export function spanDigest(sessionIds: Iterable<string>): string {
  const sorted = [...sessionIds].sort();
  return sorted.length === 0 ? '0' : `${sorted.length}:${createHash('sha256').update(sorted.join('\n')).digest('base64url').slice(0, 22)}`;
}

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
  /**
   * The sessions that span days and reach into `[first, end)` (days): a seek from the first day's
   * start in the partial index by end (by start, it would pass over every earlier spanning session).
   */
  const spansSql = (v: Values, projectId: string, first: number, end: number): string =>
    `SELECT session_id, first_ts, last_ts FROM agg_session_state
     WHERE project_id = ${v.add(projectId)} AND first_ts / ${DAY_MS} <> last_ts / ${DAY_MS} AND last_ts >= ${first * DAY_MS} AND +first_ts < ${end * DAY_MS}`;
  const spanOf = (row: Record<string, unknown>): Span => ({
    sessionId: String(row.session_id),
    firstDay: Math.floor(num(row.first_ts) / DAY_MS),
    lastDay: Math.floor(num(row.last_ts) / DAY_MS),
  });
  /** The ids of `spans` that reach into `day`. */
  const spanning = (spans: readonly Span[], day: number) => spans.filter((span) => span.firstDay <= day && day <= span.lastDay).map((span) => span.sessionId);
  /** Each session's masks per day, in time and then byte order of the event id: `day, session_id, masks`. */
  const masksByDay = (source: string) =>
    `SELECT day, session_id, ${dialect.orderedConcat('mask', `timestamp, ${dialect.byteOrder('event_id')}`)} AS masks
     FROM (SELECT ${daySql('timestamp')} AS day, session_id, timestamp, event_id, mask FROM (${source}) r) r GROUP BY day, session_id`;
  /** The partial index of spans is read by PostgreSQL only when told to (`postgres-read-run.ts`). */
  const hints = { indexesOnly: true };

  /**
   * Reads the clean days `[first, end)` from `rollup_steps`, with the sessions spanning into them
   * and the days' versions and marks in the same snapshot, and hands the days that were clean to
   * the store to keep.
   */
  const readDays = async (q: ReportQuery, steps: readonly FunnelStepSpec[], first: number, end: number, context: (v: Values) => SourceContext) => {
    const v = new Values(dialect);
    const s = context(v);
    // Values are added in the order of the text (SQLite's placeholders are positional).
    const spansText = spansSql(v, q.projectId, first, end);
    const source = stepsSource(q, { days: { first, end, dirty: [] }, raw: [] }, s, steps, () => '');
    const state = (kind: number, table: string, version: string) =>
      `SELECT ${kind}, day, NULL, NULL, ${version}, NULL, NULL FROM ${table} WHERE project_id = ${v.add(q.projectId)} AND day >= ${v.add(first)} AND day < ${v.add(end)}`;
    // Kinds: 0 the day's sessions wholly inside it, by masks; 1 a spanning session's masks of a
    // day; 2 a spanning session; 3 a day's version; 4 a day's mark. Membership as IN, which
    // SQLite indexes on the fly and PostgreSQL hashes.
    const rows = await run(
      `WITH sp AS MATERIALIZED (${spansText}), g AS MATERIALIZED (${masksByDay(source)})
       SELECT 0 AS kind, day, CAST(NULL AS TEXT) AS session_id, masks, COUNT(*) AS n, CAST(NULL AS BIGINT) AS first_ts, CAST(NULL AS BIGINT) AS last_ts
         FROM g WHERE session_id NOT IN (SELECT session_id FROM sp) GROUP BY day, masks
       UNION ALL SELECT 1, day, session_id, masks, 1, NULL, NULL FROM g WHERE session_id IN (SELECT session_id FROM sp)
       UNION ALL SELECT 2, NULL, session_id, NULL, 0, first_ts, last_ts FROM sp
       UNION ALL ${state(3, 'rollup_versions', 'version')}
       UNION ALL ${state(4, 'rollup_dirty', '0')}`,
      v.list,
      hints,
    );
    const read = new Map<number, FunnelDay>();
    for (let day = first; day < end; day++) read.set(day, { day, version: 0, reached: steps.map(() => 0), spans: [], spanDigest: '' });
    const marked = new Set<number>();
    const spans: Span[] = [];
    for (const row of rows) {
      const kind = num(row.kind);
      const day = read.get(num(row.day));
      if (kind === 0 && day !== undefined) {
        const depth = reachedSteps(String(row.masks), steps.length);
        for (let k = 0; k < depth; k++) day.reached[k]! += num(row.n);
      } else if (kind === 1 && day !== undefined) day.spans.push({ sessionId: String(row.session_id), masks: String(row.masks) });
      else if (kind === 2) spans.push(spanOf(row));
      else if (kind === 3 && day !== undefined) day.version = num(row.n);
      else if (kind === 4) marked.add(num(row.day));
    }
    for (const day of read.values()) day.spanDigest = spanDigest(spanning(spans, day.day));
    const clean = [...read.values()].filter((day) => !marked.has(day.day));
    if (clean.length > 0) {
      options.keep({ projectId: q.projectId, funnel: funnelKey(steps), withBots: q.includeBots, days: clean }).catch((error: unknown) => options.onKeepError?.(error));
    }
    return [...read.values()];
  };

  /** Reads the days for which `want` holds in `[first, end)`: consecutive ones, one day first, then as many as the last read suggests fit in about a second. */
  const readWanted = async (
    q: ReportQuery,
    steps: readonly FunnelStepSpec[],
    [first, end]: readonly [number, number],
    want: (day: number) => boolean,
    context: (v: Values) => SourceContext,
  ): Promise<FunnelDay[]> => {
    const out: FunnelDay[] = [];
    let size = 1;
    for (let day = first; day < end; ) {
      if (!want(day)) {
        day++;
        continue;
      }
      let stop = day + 1;
      while (stop < end && stop - day < size && want(stop)) stop++;
      const started = performance.now();
      out.push(...(await readDays(q, steps, day, stop, context)));
      size = Math.max(1, Math.min(MAX_DAYS_A_READ, Math.floor(((stop - day) * READ_AIM_MS) / Math.max(performance.now() - started, 1))));
      day = stop;
    }
    return out;
  };

  return async (q, steps, plan, context) => {
    const days = plan.days as NonNullable<DayPlan['days']>;
    const dirty = new Set(days.dirty);
    const range = [days.first, days.end] as const;

    // 1. The kept days.
    const byDay = new Map<number, FunnelDay>();
    const v = new Values(dialect);
    const keptRows = await run(
      `SELECT day, session_id, masks, reached, spans FROM rollup_funnels
       WHERE project_id = ${v.add(q.projectId)} AND funnel = ${v.add(funnelKey(steps))} AND with_bots = ${v.add(q.includeBots ? 1 : 0)}
         AND day >= ${v.add(days.first)} AND day < ${v.add(days.end)}`,
      v.list,
    );
    for (const row of keptRows) {
      const day = num(row.day);
      if (dirty.has(day)) continue;
      let kept = byDay.get(day);
      if (kept === undefined) byDay.set(day, (kept = { day, version: 0, reached: [], spans: [], spanDigest: '' }));
      if (row.session_id === null || row.session_id === undefined) {
        kept.reached = String(row.reached).split(',').map(Number);
        kept.spanDigest = String(row.spans);
      } else kept.spans.push({ sessionId: String(row.session_id), masks: String(row.masks) });
    }
    const have = (day: number) => byDay.get(day)?.reached.length === steps.length;

    // 2. The clean days not kept.
    for (const day of await readWanted(q, steps, range, (d) => !dirty.has(d) && !have(d), context)) byDay.set(day.day, day);

    // 3. The rest of the range from the events, each session's masks per day, and the sessions
    // spanning into the clean days, in one snapshot; then the days whose spanning sessions were
    // others, again.
    const w = new Values(dialect);
    const s = context(w);
    const parts: string[] = [];
    if (plan.raw.length > 0) {
      const mask = rawMask(steps, s);
      const raw = plan.raw.map(([from, to]) => stepRawRows(s, from, to, mask)).join('\n UNION ALL ');
      parts.push(`SELECT 0 AS kind, day, session_id, masks, CAST(NULL AS BIGINT) AS first_ts, CAST(NULL AS BIGINT) AS last_ts FROM (${masksByDay(raw)}) r`);
    }
    parts.push(`SELECT 1 AS kind, NULL, session_id, NULL, first_ts, last_ts FROM (${spansSql(w, q.projectId, days.first, days.end)}) sp`);
    const walked = new Map<string, Map<number, string>>();
    const walk = (sessionId: string, day: number, masks: string) => {
      let sessionDays = walked.get(sessionId);
      if (sessionDays === undefined) walked.set(sessionId, (sessionDays = new Map()));
      sessionDays.set(day, masks);
    };
    const spans: Span[] = [];
    for (const row of await run(parts.join('\n UNION ALL '), w.list, hints)) {
      if (num(row.kind) === 1) spans.push(spanOf(row));
      else walk(String(row.session_id), num(row.day), String(row.masks));
    }
    const current = (day: number) => byDay.get(day)?.spanDigest === spanDigest(spanning(spans, day));
    for (const day of await readWanted(q, steps, range, (d) => !dirty.has(d) && !current(d), context)) byDay.set(day.day, day);

    // The days' counts, and the walked sessions: their masks of every day, in day order.
    const reached = steps.map(() => 0);
    for (const day of byDay.values()) {
      day.reached.forEach((n, k) => (reached[k]! += n));
      for (const span of day.spans) walk(span.sessionId, day.day, span.masks);
    }
    for (const sessionDays of walked.values()) {
      const masks = [...sessionDays.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, m]) => m)
        .join(',');
      const depth = reachedSteps(masks, steps.length);
      for (let k = 0; k < depth; k++) reached[k]!++;
    }
    return reached;
  };
}
