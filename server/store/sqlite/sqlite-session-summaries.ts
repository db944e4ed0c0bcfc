import type Database from 'better-sqlite3';
import type { SessionGroup } from '../aggregates/aggregate-batch.js';

/*
 * The session summaries on SQLite (docs/decisions.md, "Session summaries"): one state row per
 * session (`agg_session_state`) and, per UTC day, the sums of the sessions that lie wholly inside
 * that day (`agg_session_days`), kept by the group commit from the state's change: the old
 * state's share is taken out and the new one's put in, so no day is ever summed again from its
 * sessions. Each is kept twice, for the two ways reports count: every event (`with_bots` 1) and
 * the events of humans only (`with_bots` 0), because a session's span, and so the day it lies in,
 * depends on which of its events are counted.
 *
 * It runs in the writer thread, which receives it as source text, so it stays self-contained:
 * nothing from outside its body and parameters but erased types. 86,400,000 and 3,600,000 are a
 * day and an hour in ms.
 */

/** What the summaries offer the group commit, the erasure and retention, inside their transactions. */
export interface SqliteSessionSummaries {
  /** Adds a commit's session groups (per hour and bot flag) to the states and the day sums. */
  add(groups: readonly SessionGroup[]): void;
  /**
   * Counts the named sessions of a project again from their hour rows (`agg_sessions`), after an
   * erasure or retention changed those: the day sums lose what the old states gave them and get
   * what the new ones give; a session with no hour row left is forgotten.
   */
  recount(projectId: string, sessions: Iterable<string>): void;
}

/** Prepares the session summaries on `db`, whose schema holds their tables (`aggregate-schema.ts`). */
export function prepareSqliteSessionSummaries(db: Database.Database): SqliteSessionSummaries {
  const dayMs = 86_400_000;
  const hourMs = 3_600_000;
  /** One counting of a session: its first and last time and page views; null without events. */
  type Span = { first: number; last: number; events: number; pageViews: number } | null;
  /** A session's two countings: `[humans only, every event]`, the index being `with_bots`. */
  type State = [Span, Span];
  const read = db.prepare<unknown[]>(
    'SELECT h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views FROM agg_session_state WHERE project_id = ? AND session_id = ?',
  );
  const write = db.prepare<unknown[]>(
    `INSERT OR REPLACE INTO agg_session_state (project_id, session_id, h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const forget = db.prepare<unknown[]>('DELETE FROM agg_session_state WHERE project_id = ? AND session_id = ?');
  const addToDay = db.prepare<unknown[]>(
    `INSERT INTO agg_session_days (project_id, day, with_bots, sessions, bounces, duration, page_views) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, day, with_bots) DO UPDATE SET sessions = sessions + excluded.sessions, bounces = bounces + excluded.bounces,
       duration = duration + excluded.duration, page_views = page_views + excluded.page_views`,
  );
  const hourRows = db.prepare<unknown[]>(
    `SELECT is_bot, MIN(first_ts) AS first_ts, MAX(last_ts) AS last_ts, SUM(events) AS events, SUM(page_views) AS page_views FROM agg_sessions
     WHERE project_id = ? AND hour >= ? AND hour <= ? AND session_id = ? GROUP BY is_bot`,
  );

  const stateOf = (row: Record<string, number | null> | undefined): State | null => {
    if (row === undefined) return null;
    const human: Span = row.h_first === null ? null : { first: row.h_first, last: row.h_last as number, events: row.h_events as number, pageViews: row.h_page_views as number };
    return [human, { first: row.first_ts as number, last: row.last_ts as number, events: row.events as number, pageViews: row.page_views as number }];
  };
  const merge = (a: Span, b: Span): Span =>
    a === null ? b : b === null ? a : { first: Math.min(a.first, b.first), last: Math.max(a.last, b.last), events: a.events + b.events, pageViews: a.pageViews + b.pageViews };

  /** The day sums of one commit or recount, by `project \0 day \0 with_bots`, written once at the end. */
  const deltas = new Map<string, [string, number, number, number, number, number, number]>();
  /** Adds `sign` times a span's share to its day: only a span that starts and ends on one UTC day has one. */
  const share = (projectId: string, span: Span, withBots: number, sign: number) => {
    if (span === null) return;
    const day = Math.floor(span.first / dayMs);
    if (Math.floor(span.last / dayMs) !== day) return;
    const key = `${projectId}\u0000${day}\u0000${withBots}`;
    let d = deltas.get(key);
    if (d === undefined) deltas.set(key, (d = [projectId, day, withBots, 0, 0, 0, 0]));
    d[3] += sign;
    d[4] += span.pageViews <= 1 ? sign : 0;
    d[5] += sign * (span.last - span.first);
    d[6] += sign * span.pageViews;
  };
  const change = (projectId: string, session: string, before: State | null, after: State | null) => {
    for (const withBots of [0, 1]) {
      share(projectId, before === null ? null : before[withBots] as Span, withBots, -1);
      share(projectId, after === null ? null : after[withBots] as Span, withBots, 1);
    }
    if (after === null || after[1] === null) {
      if (before !== null) forget.run(projectId, session);
      return;
    }
    const h = after[0];
    const a = after[1];
    write.run(projectId, session, h?.first ?? null, h?.last ?? null, h?.events ?? 0, h?.pageViews ?? 0, a.first, a.last, a.events, a.pageViews);
  };
  const flush = () => {
    for (const d of deltas.values()) if (d[3] !== 0 || d[5] !== 0 || d[6] !== 0 || d[4] !== 0) addToDay.run(...d);
    deltas.clear();
  };

  return {
    add(groups) {
      /** The commit's own share of each session, by `project \0 session`. */
      const pieces = new Map<string, { projectId: string; session: string; state: State }>();
      for (const g of groups) {
        const key = `${g.project}\u0000${g.session}`;
        let piece = pieces.get(key);
        if (piece === undefined) pieces.set(key, (piece = { projectId: g.project, session: g.session, state: [null, null] }));
        const span: Span = { first: g.first, last: g.last, events: g.events, pageViews: g.pageViews };
        if (g.bot === 0) piece.state[0] = merge(piece.state[0], span);
        piece.state[1] = merge(piece.state[1], span);
      }
      for (const { projectId, session, state } of pieces.values()) {
        const before = stateOf(read.get(projectId, session) as Record<string, number | null> | undefined);
        const after: State = before === null ? state : [merge(before[0], state[0]), merge(before[1], state[1])];
        change(projectId, session, before, after);
      }
      flush();
    },
    recount(projectId, sessions) {
      for (const session of sessions) {
        const before = stateOf(read.get(projectId, session) as Record<string, number | null> | undefined);
        if (before === null || before[1] === null) continue;
        // Its hour rows lie within its old span: an erasure or a cut only takes events away.
        const rows = hourRows.all(projectId, Math.floor(before[1].first / hourMs), Math.floor(before[1].last / hourMs), session) as Array<Record<string, number>>;
        const after: State = [null, null];
        for (const row of rows) {
          const span: Span = { first: row.first_ts as number, last: row.last_ts as number, events: row.events as number, pageViews: row.page_views as number };
          if (row.is_bot === 0) after[0] = merge(after[0], span);
          after[1] = merge(after[1], span);
        }
        change(projectId, session, before, after[1] === null ? null : after);
      }
      flush();
    },
  };
}
