import type Database from 'better-sqlite3';
import type { SessionGroup } from '../aggregates/aggregate-batch.js';
import type { DayMove, SessionMoves, SessionSpan, SessionState } from '../aggregates/session-moves.js';

/*
 * The session summaries on SQLite (docs/decisions.md, "Session summaries"): the state row of each
 * session (`agg_session_state`), the sums of the sessions per first and last day
 * (`agg_session_days`) and the midnights each crosses (`agg_session_midnights`), moved by
 * `session-moves.ts` as states change, in the caller's transaction.
 *
 * It runs in the writer thread, which receives it as source text, so it stays self-contained:
 * nothing from outside its body and parameters but erased types. 3,600,000 is an hour in ms.
 */

/** What the summaries offer the group commit, the erasure and retention, inside their transactions. */
export interface SqliteSessionSummaries {
  /** Adds a commit's session groups (per hour and bot flag) to the states, the day sums and the midnights. */
  add(groups: readonly SessionGroup[]): void;
  /**
   * Counts the named sessions of a project again from their hour rows (`agg_sessions`), after an
   * erasure or retention changed those: the day sums lose what the old states gave them and get
   * what the new ones give; a session with no hour row left is forgotten. Returns the days
   * sessions now start on that they did not (`SessionMoves.firstDayMoved`).
   */
  recount(projectId: string, sessions: Iterable<string>): number[];
}

/** Prepares the session summaries on `db`, whose schema holds their tables (`aggregate-schema.ts`). */
export function prepareSqliteSessionSummaries(db: Database.Database, moves: SessionMoves): SqliteSessionSummaries {
  const hourMs = 3_600_000;
  const read = db.prepare<unknown[]>(
    'SELECT h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views FROM agg_session_state WHERE project_id = ? AND session_id = ?',
  );
  const write = db.prepare<unknown[]>(
    `INSERT OR REPLACE INTO agg_session_state (project_id, session_id, h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const forget = db.prepare<unknown[]>('DELETE FROM agg_session_state WHERE project_id = ? AND session_id = ?');
  const addToDay = db.prepare<unknown[]>(
    `INSERT INTO agg_session_days (project_id, day, last_day, with_bots, sessions, bounces, duration, page_views) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (project_id, day, last_day, with_bots) DO UPDATE SET sessions = sessions + excluded.sessions, bounces = bounces + excluded.bounces,
       duration = duration + excluded.duration, page_views = page_views + excluded.page_views`,
  );
  const addMidnight = db.prepare<unknown[]>('INSERT OR IGNORE INTO agg_session_midnights (project_id, day, session_id) VALUES (?, ?, ?)');
  const removeMidnight = db.prepare<unknown[]>('DELETE FROM agg_session_midnights WHERE project_id = ? AND day = ? AND session_id = ?');
  const hourRows = db.prepare<unknown[]>(
    `SELECT is_bot, MIN(first_ts) AS first_ts, MAX(last_ts) AS last_ts, SUM(events) AS events, SUM(page_views) AS page_views FROM agg_sessions
     WHERE project_id = ? AND hour >= ? AND hour <= ? AND session_id = ? GROUP BY is_bot`,
  );

  const stateOf = (row: Record<string, number | null> | undefined): SessionState | null => {
    if (row === undefined) return null;
    const human: SessionSpan = row.h_first === null ? null : { first: row.h_first, last: row.h_last as number, events: row.h_events as number, pageViews: row.h_page_views as number };
    return [human, { first: row.first_ts as number, last: row.last_ts as number, events: row.events as number, pageViews: row.page_views as number }];
  };
  const stateIn = (projectId: string, session: string) => stateOf(read.get(projectId, session) as Record<string, number | null> | undefined);
  const put = (projectId: string, session: string, before: SessionState | null, after: SessionState | null) => {
    const { added, removed } = moves.crossed(before, after);
    for (const day of added) addMidnight.run(projectId, day, session);
    for (const day of removed) removeMidnight.run(projectId, day, session);
    const all = after === null ? null : after[1];
    if (all === null) {
      forget.run(projectId, session);
      return;
    }
    const h = (after as SessionState)[0];
    write.run(projectId, session, h?.first ?? null, h?.last ?? null, h?.events ?? 0, h?.pageViews ?? 0, all.first, all.last, all.events, all.pageViews);
  };
  const flush = (days: Map<string, DayMove>) => {
    for (const m of days.values()) {
      if (m.sessions !== 0 || m.bounces !== 0 || m.duration !== 0 || m.pageViews !== 0) addToDay.run(m.projectId, m.day, m.lastDay, m.withBots, m.sessions, m.bounces, m.duration, m.pageViews);
    }
  };

  return {
    add(groups) {
      const days = new Map<string, DayMove>();
      for (const { projectId, session, state } of moves.statesOf(groups).values()) {
        const before = stateIn(projectId, session);
        const after: SessionState = before === null ? state : [moves.merge(before[0], state[0]), moves.merge(before[1], state[1])];
        moves.move(days, projectId, before, after);
        put(projectId, session, before, after);
      }
      flush(days);
    },
    recount(projectId, sessions) {
      const days = new Map<string, DayMove>();
      const moved = new Set<number>();
      for (const session of sessions) {
        const before = stateIn(projectId, session);
        if (before === null || before[1] === null) continue;
        // Its hour rows lie within its old span: an erasure or a cut only takes events away.
        const rows = hourRows.all(projectId, Math.floor(before[1].first / hourMs), Math.floor(before[1].last / hourMs), session) as Array<Record<string, number>>;
        const after: SessionState = [null, null];
        for (const row of rows) {
          const span: SessionSpan = { first: row.first_ts as number, last: row.last_ts as number, events: row.events as number, pageViews: row.page_views as number };
          if (row.is_bot === 0) after[0] = moves.merge(after[0], span);
          after[1] = moves.merge(after[1], span);
        }
        const kept = after[1] === null ? null : after;
        moves.move(days, projectId, before, kept);
        const firstDay = moves.firstDayMoved(before, kept);
        if (firstDay !== null) moved.add(firstDay);
        put(projectId, session, before, kept);
      }
      flush(days);
      return [...moved];
    },
  };
}
