import { createHash } from 'node:crypto';
import { type Dialect, type RunQuery, Values } from './dialect.js';
import type { ReportQuery } from '../report-store.js';
import type { DayPlan } from './rollup-queries.js';
import { DAY_MS } from './rollup-schema.js';
import { num } from '../shared/row-values.js';

/*
 * Reports over sessions kept per day (docs/decisions.md, "Kept funnels and sessions"): a funnel
 * (`funnel-days.ts`) and the sessions report with one filter (`session-stats-days.ts`). Each
 * answer adds up over sessions, but a session with events on two days is one session: its events
 * must be taken together. Nearly every session lies within one UTC day, though, and the session
 * summaries list the few that do not (`agg_session_spans_by_end`). So the first read of such a
 * report over a clean day keeps, for that day and report, the day's total over the sessions that
 * lie wholly inside it, each spanning session's piece of the day (what the report takes of its
 * events that day), and a digest of which sessions spanned into the day (`rollup_kept_sessions`).
 * A later read sums the days' totals and takes only the spanning sessions whole, their days'
 * pieces in day order (days follow each other in time) with their pieces of the rest of the
 * range (the partial ends and marked days, read from the events as before): a row per day and
 * spanning session, whatever the number of events.
 *
 * Kept rows are part of the daily rollups, like the filtered top lists (`filtered-tops.ts`): kept
 * only while the day is clean at the version the read saw (`report-keep.ts`), deleted by a refresh
 * or an erasure of the day. What can change without touching the day is which sessions span into
 * it: a late event of a session on another day makes it span, and an event after midnight makes
 * yesterday's sessions span into today. So the answer takes the spanning sessions from the
 * statement that reads the rest of the range, last, and uses a day's total only if the day's
 * digest is of those very sessions; a day whose digest differs is read again after that
 * statement, and the spanning sessions listed again, until every day's digest is of the sessions
 * last listed (at most a few rounds; then the report is read another way). Sessions only come to
 * span, so a session that spanned in the raw statement spans in the last list too, and none is
 * both in a day's total and taken whole.
 *
 * A first read computes its missing days a few at a time (each read within the read budget, and
 * kept as soon as read).
 */

/** A kept day of one report, computed from a snapshot that saw the day clean at `version`. */
export interface SessionDay {
  day: number;
  /** The day's `rollup_versions` version in that snapshot (0: never refreshed since it was created). */
  version: number;
  /** The report's numbers over the day's sessions that lie wholly inside it. */
  total: number[];
  /** The sessions that span days and have a piece that day, with it. */
  spans: Array<{ sessionId: string; piece: string }>;
  /** {@link spanDigest} of every session that spans days and reaches into the day. */
  spanDigest: string;
}

/** What a report hands to the store to keep: days of one project, report and bot choice. */
export interface SessionDaysKeep {
  projectId: string;
  /** The report's key ({@link SessionDaysSpec.key}). */
  report: string;
  withBots: boolean;
  days: SessionDay[];
}

/** Keeps report days, each only if the day is not marked and its version is the one given (replacing a day kept already); resolves to the days kept. */
export type KeepSessionDays = (keep: SessionDaysKeep) => Promise<number>;

/**
 * What a report over sessions is: a sum over its sessions of what each adds, a session being the
 * pieces it has on the days of the range.
 */
export interface SessionDaysSpec {
  /** The key of the report's kept rows (the bot choice apart). */
  key: string;
  /** How many numbers the answer has. */
  size: number;
  /**
   * The spanning sessions as the report's rows name them: a statement over `spans` (the name of a
   * relation of their `session_id`s) giving `key` (what {@link dayPieces} joins on) and `text`
   * (the session id); values through `v`. By default the ids themselves.
   */
  spanList?(v: Values, spans: string): string;
  /**
   * The statement of each session's piece per clean day of `[first, end)`: `day, spanning` (1 for
   * a session in `list`, the name of the relation of {@link spanList}, else 0: {@link flagListed}),
   * `session_id` (as text, where spanning), `piece` (text), and whatever else {@link fold} reads;
   * values added through `v` in the order of the text.
   */
  dayPieces(v: Values, first: number, end: number, list: string): string;
  /** Each session's piece per day of the range's other parts (the plan's `raw`): `day, session_id, piece`; null when it has none. */
  rawPieces(v: Values): string | null;
  /** A statement over `g1`, the rows of {@link dayPieces} of sessions that lie wholly inside a day, giving `day, piece, n`: read by {@link addFolded}. No values. */
  fold: string;
  /** Adds a row of {@link fold} to its day's total. */
  addFolded(total: number[], piece: string, n: number): void;
  /** Adds a session taken whole to the answer: its pieces in day order. */
  addWhole(answer: number[], pieces: readonly string[]): void;
}

/** Options of {@link createSessionDays}. */
export interface SessionDaysOptions {
  keep: KeepSessionDays;
  /** A keep that failed: the report was answered; the days are computed again next time. */
  onKeepError?: (error: unknown) => void;
  /** Runs the reads of {@link SessionDays.keepDay} (the background's), by default `run`. */
  runBackground?: RunQuery;
}

/** Reports over sessions kept per day. */
export interface SessionDays {
  /**
   * A report over sessions on a rollup plan with clean days; null when sessions kept coming to span
   * days while it read (the range is then read another way).
   */
  read(q: ReportQuery, spec: SessionDaysSpec, plan: DayPlan): Promise<number[] | null>;
  /**
   * Reads one clean day of a report and keeps it, as its first read would, ahead of it
   * (`filtered-ahead.ts`); settles once kept (a keep that failed went to `onKeepError`).
   */
  keepDay(q: ReportQuery, spec: SessionDaysSpec, day: number): Promise<void>;
}

/**
 * A digest of a set of session ids: their count and a hash of them in order. A kept day holds this
 * rather than the ids of sessions that have no event that day: an erasure or retention reaches the
 * days with the user's events, not every day a session's span covers.
 */
export function spanDigest(sessionIds: Iterable<string>): string {
  const sorted = [...sessionIds].sort();
  return sorted.length === 0 ? '0' : `${sorted.length}:${createHash('sha256').update(sorted.join('\n')).digest('base64url').slice(0, 22)}`;
}

/**
 * For {@link SessionDaysSpec.dayPieces}: the rows of `rows` (a relation with a key column `key`)
 * flagged 1 in `spanning` when their key is in `list` (the name of a relation of `key, text`), else
 * 0, with the list's `text` for it as `listed` (null when not in it), as the dialect tests
 * membership best.
 */
export function flagListed(dialect: Dialect, rows: string, key: string, list: string): string {
  if (dialect.listMembership === 'join') {
    return `SELECT r.*, CASE WHEN l.key IS NULL THEN 0 ELSE 1 END AS spanning, l.text AS listed FROM ${rows} r LEFT JOIN ${list} l ON l.key = r.${key}`;
  }
  const listed = `r.${key} IN (SELECT key FROM ${list})`;
  return `SELECT r.*, CASE WHEN ${listed} THEN 1 ELSE 0 END AS spanning,
    CASE WHEN ${listed} THEN (SELECT l.text FROM ${list} l WHERE l.key = r.${key}) END AS listed FROM ${rows} r`;
}

/** How long one read of missing days aims to take, ms: well inside the read budget. */
const READ_AIM_MS = 1000;
/** At most this many days in one read. */
const MAX_DAYS_A_READ = 31;
/** Rounds of reading again the days whose spanning sessions changed, before the report gives up. */
const ROUNDS = 3;

/** A session that spans days, as the session summaries have it. */
interface Span {
  sessionId: string;
  firstDay: number;
  lastDay: number;
}

/** Reports over sessions over `run`, keeping what they compute per day through `options.keep`. */
export function createSessionDays(dialect: Dialect, run: RunQuery, options: SessionDaysOptions): SessionDays {
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
  /** The partial index of spans is read by PostgreSQL only when told to (`postgres-read-run.ts`). */
  const hints = { indexesOnly: true };

  /**
   * Reads the clean days `[first, end)`, with the sessions spanning into them and the days'
   * versions and marks in the same snapshot, and hands the days that were clean to the store to keep.
   */
  const readDays = async (q: ReportQuery, spec: SessionDaysSpec, first: number, end: number, via: RunQuery = run) => {
    const v = new Values(dialect);
    // Values are added in the order of the text (SQLite's placeholders are positional).
    const spans = spansSql(v, q.projectId, first, end);
    const list = spec.spanList?.(v, 'sp') ?? 'SELECT session_id AS key, session_id AS text FROM sp';
    const pieces = spec.dayPieces(v, first, end, 'sk');
    const state = (kind: number, table: string, version: string) =>
      `SELECT ${kind}, day, NULL, NULL, ${version} FROM ${table} WHERE project_id = ${v.add(q.projectId)} AND day >= ${v.add(first)} AND day < ${v.add(end)}`;
    // Kinds: 0 a day's total over the sessions wholly inside it, as the report folds them; 1 a
    // spanning session's piece of a day; 2 a spanning session (its first and last times in `day`
    // and `n`); 3 a day's version; 4 a day's mark.
    const rows = await via(
      `WITH sp AS MATERIALIZED (${spans}), sk AS MATERIALIZED (${list}), g AS MATERIALIZED (${pieces}),
         g1 AS (SELECT * FROM g WHERE spanning = 0)
       SELECT 0 AS kind, day, CAST(NULL AS TEXT) AS session_id, piece, CAST(n AS BIGINT) AS n FROM (${spec.fold}) f
       UNION ALL SELECT 1, day, session_id, piece, 0 FROM g WHERE spanning = 1
       UNION ALL SELECT 2, first_ts, session_id, NULL, last_ts FROM sp
       UNION ALL ${state(3, 'rollup_versions', 'version')}
       UNION ALL ${state(4, 'rollup_dirty', '0')}`,
      v.list,
      hints,
    );
    const read = new Map<number, SessionDay>();
    for (let day = first; day < end; day++) read.set(day, { day, version: 0, total: Array.from({ length: spec.size }, () => 0), spans: [], spanDigest: '' });
    const marked = new Set<number>();
    const spanRows: Span[] = [];
    for (const row of rows) {
      const kind = num(row.kind);
      const day = read.get(num(row.day));
      if (kind === 0 && day !== undefined) spec.addFolded(day.total, String(row.piece), num(row.n));
      else if (kind === 1 && day !== undefined) day.spans.push({ sessionId: String(row.session_id), piece: String(row.piece) });
      else if (kind === 2) spanRows.push(spanOf({ session_id: row.session_id, first_ts: row.day, last_ts: row.n }));
      else if (kind === 3 && day !== undefined) day.version = num(row.n);
      else if (kind === 4) marked.add(num(row.day));
    }
    for (const day of read.values()) day.spanDigest = spanDigest(spanning(spanRows, day.day));
    const clean = [...read.values()].filter((day) => !marked.has(day.day));
    const kept =
      clean.length === 0
        ? Promise.resolve()
        : options.keep({ projectId: q.projectId, report: spec.key, withBots: q.includeBots, days: clean }).then(
            () => undefined,
            (error: unknown) => options.onKeepError?.(error),
          );
    return { days: [...read.values()], kept };
  };

  /** Reads the days of `[first, end)` for which `want` holds: consecutive ones, one day first, then as many as the last read suggests fit in about a second. */
  const readWanted = async (q: ReportQuery, spec: SessionDaysSpec, [first, end]: readonly [number, number], want: (day: number) => boolean): Promise<SessionDay[]> => {
    const out: SessionDay[] = [];
    let size = 1;
    for (let day = first; day < end; ) {
      if (!want(day)) {
        day++;
        continue;
      }
      let stop = day + 1;
      while (stop < end && stop - day < size && want(stop)) stop++;
      const started = performance.now();
      out.push(...(await readDays(q, spec, day, stop)).days);
      size = Math.max(1, Math.min(MAX_DAYS_A_READ, Math.floor(((stop - day) * READ_AIM_MS) / Math.max(performance.now() - started, 1))));
      day = stop;
    }
    return out;
  };

  const read: SessionDays['read'] = async (q, spec, plan) => {
    const days = plan.days as NonNullable<DayPlan['days']>;
    const dirty = new Set(days.dirty);
    const range = [days.first, days.end] as const;

    // 1. The kept days.
    const byDay = new Map<number, SessionDay>();
    const v = new Values(dialect);
    const keptRows = await run(
      `SELECT day, session_id, piece, total, spans FROM rollup_kept_sessions
       WHERE project_id = ${v.add(q.projectId)} AND report = ${v.add(spec.key)} AND with_bots = ${v.add(q.includeBots ? 1 : 0)}
         AND day >= ${v.add(days.first)} AND day < ${v.add(days.end)}`,
      v.list,
    );
    for (const row of keptRows) {
      const day = num(row.day);
      if (dirty.has(day)) continue;
      let kept = byDay.get(day);
      if (kept === undefined) byDay.set(day, (kept = { day, version: 0, total: [], spans: [], spanDigest: '' }));
      if (row.session_id === null || row.session_id === undefined) {
        kept.total = String(row.total).split(',').map(Number);
        kept.spanDigest = String(row.spans);
      } else kept.spans.push({ sessionId: String(row.session_id), piece: String(row.piece) });
    }
    const have = (day: number) => byDay.get(day)?.total.length === spec.size;

    // 2. The clean days not kept.
    for (const day of await readWanted(q, spec, range, (d) => !dirty.has(d) && !have(d))) byDay.set(day.day, day);

    // 3. The rest of the range, each session's piece per day, and the sessions spanning into the
    // clean days, in one snapshot; then the days whose spanning sessions were others, again.
    const w = new Values(dialect);
    const parts: string[] = [];
    const raw = spec.rawPieces(w);
    if (raw !== null) parts.push(`SELECT 0 AS kind, day, session_id, piece, CAST(NULL AS BIGINT) AS first_ts, CAST(NULL AS BIGINT) AS last_ts FROM (${raw}) r`);
    parts.push(`SELECT 1 AS kind, NULL, session_id, NULL, first_ts, last_ts FROM (${spansSql(w, q.projectId, days.first, days.end)}) sp`);
    const whole = new Map<string, Map<number, string>>();
    const take = (sessionId: string, day: number, piece: string) => {
      let sessionDays = whole.get(sessionId);
      if (sessionDays === undefined) whole.set(sessionId, (sessionDays = new Map()));
      sessionDays.set(day, piece);
    };
    const firstSpans: Span[] = [];
    for (const row of await run(parts.join('\n UNION ALL '), w.list, hints)) {
      if (num(row.kind) === 1) firstSpans.push(spanOf(row));
      else take(String(row.session_id), num(row.day), String(row.piece));
    }
    // A day read again has a snapshot of its own, later: a session may have come to span since,
    // into a day that was current. So the spanning sessions are listed again after each round, and
    // every day checked against them, until none has changed.
    let spans = firstSpans;
    for (let round = 0; ; round++) {
      const current = (day: number) => byDay.get(day)?.spanDigest === spanDigest(spanning(spans, day));
      const again = await readWanted(q, spec, range, (d) => !dirty.has(d) && !current(d));
      if (again.length === 0) break;
      if (round === ROUNDS) return null;
      for (const day of again) byDay.set(day.day, day);
      const u = new Values(dialect);
      spans = (await run(spansSql(u, q.projectId, days.first, days.end), u.list, hints)).map(spanOf);
    }

    // The days' totals, and the sessions taken whole: their pieces of every day, in day order.
    const answer = Array.from({ length: spec.size }, () => 0);
    for (const day of byDay.values()) {
      day.total.forEach((n, k) => (answer[k]! += n));
      for (const span of day.spans) take(span.sessionId, day.day, span.piece);
    }
    for (const sessionDays of whole.values()) {
      spec.addWhole(
        answer,
        [...sessionDays.entries()].sort((a, b) => a[0] - b[0]).map(([, piece]) => piece),
      );
    }
    return answer;
  };

  return {
    read,
    async keepDay(q, spec, day) {
      await (await readDays(q, spec, day, day + 1, options.runBackground)).kept;
    },
  };
}
