import { type Dialect, type RunQuery, Values } from './dialect.js';
import type { ReportQuery } from '../report-store.js';
import type { DayPlan } from './rollup-queries.js';
import { DAY_MS } from './rollup-schema.js';
import { LONG_SESSION_MS } from '../aggregates/session-moves.js';
import { num } from '../shared/row-values.js';

/*
 * Reports over sessions kept per day (docs/decisions.md, "Kept funnels and sessions"): a funnel
 * (`funnel-days.ts`) and the sessions report with one filter (`session-stats-days.ts`). Each
 * answer adds up over sessions, but a session with events on two days is one session: its events
 * must be taken together. Nearly every session lies within one UTC day, though, and the session
 * summaries list the few that do not (`agg_session_spans_by_end`). So the first read of such a
 * report over a clean day keeps, for that day and report, the day's total over the sessions that
 * lie wholly inside it, each spanning session's piece of the day (what the report takes of its
 * events that day), and how many sessions lay wholly inside the day (`rollup_kept_sessions`).
 * A read then takes the spanning sessions inside its range whole, their days' pieces in day order
 * (days follow each other in time), and keeps their totals per first and last day
 * (`rollup_kept_spans`). A later read sums the days' totals and the spans' and takes whole only
 * the sessions crossing its two ends, with their pieces of the rest of the range (the partial ends
 * and marked days, read from the events as before): a row per day and span of days, and per
 * session active at two midnights, whatever the number of events and of days.
 *
 * Kept rows are part of the daily rollups, like the filtered top lists (`filtered-tops.ts`): kept
 * only while their days are clean at the versions the read saw (`report-keep.ts`), deleted by a
 * refresh of their days or an erasure. What can change without touching a day is which sessions
 * lie wholly inside it or span from one day to another: a late event of a session on another day
 * makes it span further, and an event after midnight makes yesterday's sessions span into today.
 * The session summaries count the sessions per first and last day at ingest
 * (`agg_session_days`), so a kept day or span is taken only while its count of sessions is the
 * count now, read in the one statement that reads everything else of the answer: a session leaves
 * a count without marking the day, and every way into one marks a day of it (a new or longer
 * session has an event there; an erasure marks the days on which the sessions it touches have
 * events, their first and last among them; retention marks the day a session across its cut-off
 * now starts on). A day marked since the range was planned is read
 * from the events, as a marked day is. A day
 * whose count differs is read again and checked again (at most a few rounds; then the report is
 * read another way); a span whose count differs has its sessions taken whole, and is kept anew.
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
  /** How many sessions lay wholly inside the day in that snapshot, every event counted (`agg_session_days`). */
  sessions: number;
}

/** A report's total over the sessions that span from one day to another, computed from days clean at `versions`. */
export interface SessionSpanTotal {
  first: number;
  last: number;
  /** How many sessions spanned from `first` to `last` in that snapshot, every event counted. */
  sessions: number;
  /** The versions of the days from `first` to `last`, in order. */
  versions: number[];
  total: number[];
}

/** What a report hands to the store to keep: days of one project, report and bot choice, and totals of sessions spanning days. */
export interface SessionDaysKeep {
  projectId: string;
  /** The report's key ({@link SessionDaysSpec.key}). */
  report: string;
  withBots: boolean;
  days: SessionDay[];
  /** Each kept only if none of its days is marked and each day's version is the one given (replacing one kept already). */
  spans?: SessionSpanTotal[];
}

/** Keeps report days, each only if the day is not marked and its version is the one given (replacing a day kept already), and spans the same way; resolves to the rows kept. */
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
  /** Each session's piece per day of `raw`, the range's parts read from the events: `day, session_id, piece`; null when there are none. */
  rawPieces(v: Values, raw: ReadonlyArray<readonly [number, number]>): string | null;
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
/** Rounds of reading again the days whose sessions changed, before the report gives up. */
const ROUNDS = 3;

/**
 * The count of sessions wholly inside a kept day, as its row holds it (`spans`: `c` and the number,
 * as the keeps in `report-keep.ts` write it); NaN for a row of a version before, which held a digest there.
 */
const sessionsOf = (text: string): number => (text.startsWith('c') ? Number(text.slice(1)) : Number.NaN);

/** Reports over sessions over `run`, keeping what they compute per day through `options.keep`. */
export function createSessionDays(dialect: Dialect, run: RunQuery, options: SessionDaysOptions): SessionDays {
  /**
   * The sessions that span days and reach into `[first, end)` (days): a seek from the first day's
   * start in the partial index by end (by start, it would pass over every earlier spanning session).
   */
  const spansSql = (v: Values, projectId: string, first: number, end: number): string =>
    `SELECT session_id, first_ts, last_ts FROM agg_session_state
     WHERE project_id = ${v.add(projectId)} AND first_ts / ${DAY_MS} <> last_ts / ${DAY_MS} AND last_ts >= ${first * DAY_MS} AND +first_ts < ${end * DAY_MS}`;
  /** The partial indexes of spans are read by PostgreSQL only when told to (`postgres-read-run.ts`). */
  const hints = { indexesOnly: true };

  /**
   * Reads the clean days `[first, end)`, with the sessions spanning into them, how many lie wholly
   * inside each, and the days' versions and marks in the same snapshot, and hands the days that
   * were clean to the store to keep.
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
    // spanning session's piece of a day; 2 a day's version; 3 a day's mark; 4 how many sessions
    // lie wholly inside a day.
    const rows = await via(
      `WITH sp AS MATERIALIZED (${spans}), sk AS MATERIALIZED (${list}), g AS MATERIALIZED (${pieces}),
         g1 AS (SELECT * FROM g WHERE spanning = 0)
       SELECT 0 AS kind, day, CAST(NULL AS TEXT) AS session_id, piece, CAST(n AS BIGINT) AS n FROM (${spec.fold}) f
       UNION ALL SELECT 1, day, session_id, piece, 0 FROM g WHERE spanning = 1
       UNION ALL ${state(2, 'rollup_versions', 'version')}
       UNION ALL ${state(3, 'rollup_dirty', '0')}
       UNION ALL SELECT 4, day, NULL, NULL, CAST(SUM(sessions) AS BIGINT) FROM agg_session_days
         WHERE project_id = ${v.add(q.projectId)} AND with_bots = 1 AND day >= ${first} AND day < ${end} AND last_day = day GROUP BY day`,
      v.list,
      hints,
    );
    const read = new Map<number, SessionDay>();
    for (let day = first; day < end; day++) read.set(day, { day, version: 0, total: Array.from({ length: spec.size }, () => 0), spans: [], sessions: 0 });
    const marked = new Set<number>();
    for (const row of rows) {
      const kind = num(row.kind);
      const day = read.get(num(row.day));
      if (kind === 0 && day !== undefined) spec.addFolded(day.total, String(row.piece), num(row.n));
      else if (kind === 1 && day !== undefined) day.spans.push({ sessionId: String(row.session_id), piece: String(row.piece) });
      else if (kind === 2 && day !== undefined) day.version = num(row.n);
      else if (kind === 3) marked.add(num(row.day));
      else if (kind === 4 && day !== undefined) day.sessions = num(row.n);
    }
    const clean = [...read.values()].filter((day) => !marked.has(day.day));
    const kept = clean.length === 0 ? Promise.resolve() : handOn({ projectId: q.projectId, report: spec.key, withBots: q.includeBots, days: clean });
    return { days: [...read.values()], kept };
  };

  /** Hands rows to the store to keep; settles once kept (a keep that failed went to `onKeepError`). */
  const handOn = (keep: SessionDaysKeep): Promise<void> =>
    options.keep(keep).then(
      () => undefined,
      (error: unknown) => options.onKeepError?.(error),
    );

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

  /**
   * One snapshot of what a range of whole days `[first, end)` needs beside its days' totals: the
   * spans kept and still true, the sessions to take whole (those crossing the range's two ends, and
   * those of spans not kept or no longer true) with their kept pieces, the rest of the range's
   * pieces, and the counts, versions and marks the days and spans are checked against.
   */
  const snapshotSql = (
    v: Values,
    q: ReportQuery,
    spec: SessionDaysSpec,
    [first, end]: readonly [number, number],
    dirty: ReadonlySet<number>,
    raw: ReadonlyArray<readonly [number, number]>,
  ): string => {
    const bots = q.includeBots ? 1 : 0;
    const [start, stop] = [first * DAY_MS, end * DAY_MS];
    // The sessions per first and last day of the range (every event counted): the spans' counts, and the days'.
    const counts = `SELECT day AS a, last_day AS b, CAST(SUM(sessions) AS BIGINT) AS n FROM agg_session_days
      WHERE project_id = ${v.add(q.projectId)} AND with_bots = 1 AND day >= ${first} AND day < ${end} AND last_day < ${end} GROUP BY day, last_day`;
    const keptSpans = `SELECT first_day AS a, last_day AS b, sessions, versions, total FROM rollup_kept_spans
      WHERE project_id = ${v.add(q.projectId)} AND report = ${v.add(spec.key)} AND with_bots = ${bots} AND first_day >= ${first} AND last_day < ${end}`;
    // A span kept is true while its count and its days' versions are the same and none of its days
    // is marked now or was when the range was planned (those days' pieces come from the events).
    const plannedDirty = [...dirty].map((day) => ` OR (c.a <= ${day} AND c.b >= ${day})`).join('');
    const checked = `SELECT c.a, c.b, c.n, k.total, CASE WHEN k.sessions = c.n
        AND k.versions = COALESCE((SELECT SUM(r.version) FROM rollup_versions r WHERE r.project_id = ${v.add(q.projectId)} AND r.day >= c.a AND r.day <= c.b), 0)
        AND NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.project_id = ${v.add(q.projectId)} AND d.day >= c.a AND d.day <= c.b)
        AND NOT (1 = 0${plannedDirty}) THEN 1 ELSE 0 END AS ok
      FROM cs c LEFT JOIN ks k ON k.a = c.a AND k.b = c.b WHERE c.b > c.a AND c.n > 0`;
    // The sessions taken whole: those crossing either end (through the midnights they cross, and
    // those of 30 days or more through their own index, as the sessions report finds them), and
    // those of each span not taken from its kept row, a seek per span in the partial index by end.
    // CROSS JOIN keeps SQLite's order (the few spans first): it read every session of the project
    // for them (0.7 s at thirty million events), and then every kept piece of the range.
    const crossing = `(s.first_ts < ${start} AND s.last_ts >= ${start} OR s.first_ts < ${stop} AND s.last_ts >= ${stop})`;
    const listed = `SELECT s.session_id, s.first_ts, s.last_ts FROM agg_session_state s
        WHERE s.project_id = ${v.add(q.projectId)} AND s.session_id IN (SELECT session_id FROM agg_session_midnights WHERE project_id = ${v.add(q.projectId)} AND day IN (${first}, ${end})) AND ${crossing}
      UNION SELECT s.session_id, s.first_ts, s.last_ts FROM agg_session_state s
        WHERE s.project_id = ${v.add(q.projectId)} AND s.last_ts - s.first_ts >= ${LONG_SESSION_MS} AND s.first_ts < ${stop} AND ${crossing}
      UNION SELECT s.session_id, s.first_ts, s.last_ts FROM pv CROSS JOIN agg_session_state s
        WHERE pv.ok = 0 AND s.project_id = ${v.add(q.projectId)} AND s.first_ts / ${DAY_MS} <> s.last_ts / ${DAY_MS}
        AND s.last_ts >= pv.b * ${DAY_MS} AND s.last_ts < (pv.b + 1) * ${DAY_MS} AND s.first_ts >= pv.a * ${DAY_MS} AND s.first_ts < (pv.a + 1) * ${DAY_MS}`;
    const kept = (columns: string, where: string) =>
      `SELECT ${columns} FROM rollup_kept_sessions k WHERE k.project_id = ${v.add(q.projectId)} AND k.report = ${v.add(spec.key)} AND k.with_bots = ${bots} AND ${where} AND k.day >= ${first} AND k.day < ${end}`;
    const state = (kind: number, table: string, version: string) =>
      `SELECT ${kind}, day, NULL, NULL, ${version}, NULL FROM ${table} WHERE project_id = ${v.add(q.projectId)} AND day >= ${first} AND day < ${end}`;
    // Kinds: 0 a kept day (its count as `session_id`, its total as `piece`); 1 a span kept and
    // true (`day` to `x`); 2 a span to take whole (`day` to `x`, `y` sessions); 3 a day's count of
    // sessions wholly inside it; 4 a day's version; 5 a day's mark; 6 a session taken whole (its
    // first and last time); 7 its kept piece of a day; 8 a piece of the rest of the range.
    const parts = [
      `WITH cs AS MATERIALIZED (${counts}), ks AS MATERIALIZED (${keptSpans}), pv AS MATERIALIZED (${checked}), ls AS MATERIALIZED (${listed})
       ${kept('0 AS kind, k.day, k.spans AS session_id, k.total AS piece, CAST(NULL AS BIGINT) AS x, CAST(NULL AS BIGINT) AS y', 'k.session_id IS NULL')}`,
      'SELECT 1, a, NULL, total, b, NULL FROM pv WHERE ok = 1',
      'SELECT 2, a, NULL, NULL, b, n FROM pv WHERE ok = 0',
      'SELECT 3, a, NULL, NULL, n, NULL FROM cs WHERE a = b',
      state(4, 'rollup_versions', 'version'),
      state(5, 'rollup_dirty', '0'),
      'SELECT 6, NULL, session_id, NULL, first_ts, last_ts FROM ls',
      `SELECT 7, k.day, k.session_id, k.piece, NULL, NULL FROM ls CROSS JOIN rollup_kept_sessions k
         WHERE k.project_id = ${v.add(q.projectId)} AND k.report = ${v.add(spec.key)} AND k.with_bots = ${bots} AND k.session_id = ls.session_id AND k.day >= ${first} AND k.day < ${end}`,
    ];
    const rawPieces = spec.rawPieces(v, raw);
    if (rawPieces !== null) parts.push(`SELECT 8, day, session_id, piece, NULL, NULL FROM (${rawPieces}) r`);
    return parts.join('\n UNION ALL ');
  };

  const read: SessionDays['read'] = async (q, spec, plan) => {
    const days = plan.days as NonNullable<DayPlan['days']>;
    const range = [days.first, days.end] as const;
    // The days read from the events: the plan's marked days, and those found marked since.
    const dirty = new Set(days.dirty);
    const raw = [...plan.raw];
    /** Days this read computed, each from a snapshot of its own. */
    const fresh = new Map<number, SessionDay>();
    for (let round = 0; ; round++) {
      const v = new Values(dialect);
      const rows = await run(snapshotSql(v, q, spec, range, dirty, raw), v.list, hints);
      const keptDays = new Map<number, { sessions: number; total: number[] }>();
      const counts = new Map<number, number>();
      const versions = new Map<number, number>();
      const marked = new Set<number>();
      const listed = new Map<string, { first: number; last: number }>();
      const keptPieces: Array<[day: number, sessionId: string, piece: string]> = [];
      const rawPieces: Array<[day: number, sessionId: string, piece: string]> = [];
      const toTake: Array<{ first: number; last: number; sessions: number }> = [];
      const answer = Array.from({ length: spec.size }, () => 0);
      for (const row of rows) {
        const kind = num(row.kind);
        if (kind === 0) keptDays.set(num(row.day), { sessions: sessionsOf(String(row.session_id)), total: String(row.piece).split(',').map(Number) });
        else if (kind === 1) String(row.piece).split(',').forEach((n, k) => (answer[k]! += Number(n)));
        else if (kind === 2) toTake.push({ first: num(row.day), last: num(row.x), sessions: num(row.y) });
        else if (kind === 3) counts.set(num(row.day), num(row.x));
        else if (kind === 4) versions.set(num(row.day), num(row.x));
        else if (kind === 5) marked.add(num(row.day));
        else if (kind === 6) listed.set(String(row.session_id), { first: Math.floor(num(row.x) / DAY_MS), last: Math.floor(num(row.y) / DAY_MS) });
        else if (kind === 7) keptPieces.push([num(row.day), String(row.session_id), String(row.piece)]);
        else if (kind === 8) rawPieces.push([num(row.day), String(row.session_id), String(row.piece)]);
      }

      // A day marked since the plan may hold a session that came to lie inside it while another
      // left (the count the same): it is read from the events, as the plan would have had it.
      const markedSince = [...marked].filter((day) => !dirty.has(day));
      if (markedSince.length > 0) {
        if (round === ROUNDS) return null;
        for (const day of markedSince) {
          dirty.add(day);
          raw.push([day * DAY_MS, (day + 1) * DAY_MS]);
        }
        raw.sort((a, b) => a[0] - b[0]);
        continue;
      }
      // Each clean day's total, from its kept row or from this read's own, if it is over the very
      // sessions that lie wholly inside the day now: a session that came to span since (a late
      // event on another day, an event after midnight) leaves the count, and one that came to lie
      // inside the day marks it.
      const from = new Map<number, 'kept' | SessionDay>();
      const stale: number[] = [];
      for (let day = days.first; day < days.end; day++) {
        if (dirty.has(day)) continue;
        const sessions = counts.get(day) ?? 0;
        const own = fresh.get(day);
        if (keptDays.get(day)?.sessions === sessions) from.set(day, 'kept');
        else if (own !== undefined && own.sessions === sessions && own.version === (versions.get(day) ?? 0)) from.set(day, own);
        else stale.push(day);
      }
      if (stale.length > 0) {
        if (round === ROUNDS) return null;
        const again = new Set(stale);
        for (const day of await readWanted(q, spec, range, (d) => again.has(d))) fresh.set(day.day, day);
        continue;
      }

      // The sessions taken whole: every piece of the rest of the range, and the day pieces of those listed.
      const whole = new Map<string, Map<number, string>>();
      const take = (sessionId: string, day: number, piece: string) => {
        let sessionDays = whole.get(sessionId);
        if (sessionDays === undefined) whole.set(sessionId, (sessionDays = new Map()));
        sessionDays.set(day, piece);
      };
      for (const [day, sessionId, piece] of rawPieces) take(sessionId, day, piece);
      for (const [day, sessionId, piece] of keptPieces) if (from.get(day) === 'kept') take(sessionId, day, piece);
      for (const [day, source] of from) {
        if (source === 'kept') {
          keptDays.get(day)?.total.forEach((n, k) => (answer[k]! += n));
          continue;
        }
        source.total.forEach((n, k) => (answer[k]! += n));
        for (const span of source.spans) if (listed.has(span.sessionId)) take(span.sessionId, day, span.piece);
      }

      // Spans wholly inside clean days, all of whose sessions were listed, are kept for the next read.
      const spanKeys = new Map<string, { span: SessionSpanTotal; found: number }>();
      for (const { first, last, sessions } of toTake) {
        let clean = true;
        for (let day = first; day <= last && clean; day++) clean = from.has(day) && !marked.has(day);
        if (!clean) continue;
        const versionsOf = Array.from({ length: last - first + 1 }, (_, k) => versions.get(first + k) ?? 0);
        spanKeys.set(`${first}:${last}`, { span: { first, last, sessions, versions: versionsOf, total: Array.from({ length: spec.size }, () => 0) }, found: 0 });
      }
      const spanOf = (sessionId: string) => {
        const span = listed.get(sessionId);
        return span === undefined ? undefined : spanKeys.get(`${span.first}:${span.last}`);
      };
      // A session with no piece (no event of the report in the range) adds nothing, but counts for its span's total.
      for (const sessionId of listed.keys()) {
        const kept = spanOf(sessionId);
        if (kept !== undefined) kept.found++;
      }
      for (const [sessionId, sessionDays] of whole) {
        const pieces = [...sessionDays.entries()].sort((a, b) => a[0] - b[0]).map(([, piece]) => piece);
        spec.addWhole(spanOf(sessionId)?.span.total ?? answer, pieces);
      }
      const spans: SessionSpanTotal[] = [];
      for (const { span } of spanKeys.values()) {
        span.total.forEach((n, k) => (answer[k]! += n));
        if (spanKeys.get(`${span.first}:${span.last}`)?.found === span.sessions) spans.push(span);
      }
      if (spans.length > 0) void handOn({ projectId: q.projectId, report: spec.key, withBots: q.includeBots, days: [], spans });
      return answer;
    }
  };

  return {
    read,
    async keepDay(q, spec, day) {
      await (await readDays(q, spec, day, day + 1, options.runBackground)).kept;
    },
  };
}
