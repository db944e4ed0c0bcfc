import type { SessionGroup } from './aggregate-batch.js';

/*
 * The arithmetic of the session summaries (docs/decisions.md, "Session summaries"), for both
 * stores: a session's state, counted over humans' events and over every event, what a change of
 * state moves in the sums of the sessions per first and last UTC day, and which midnights its span
 * starts or stops crossing. The stores read and write the rows; this decides what goes where.
 *
 * Everything lives inside `createSessionMoves`, which uses nothing from outside its body, so the
 * SQLite writer thread, which runs its program from source text, can build the same from
 * `createSessionMoves.toString()`.
 */

/** A session's span over every event from which its midnights are not kept (30 days): see {@link SessionMoves.crossed}. */
export const LONG_SESSION_MS = 2_592_000_000;

/** One counting of a session: its first and last time, events and page views; null without events. */
export type SessionSpan = { first: number; last: number; events: number; pageViews: number } | null;

/** A session's two countings: `[humans' events, every event]`, the index being the `with_bots` of the day sums. */
export type SessionState = [SessionSpan, SessionSpan];

/** What a set of state changes adds to the sums of the sessions from one UTC day to another (each number may be negative). */
export interface DayMove {
  projectId: string;
  /** The UTC day the sessions start. */
  day: number;
  /** The UTC day they end: `day` for the sessions wholly inside one. */
  lastDay: number;
  withBots: 0 | 1;
  sessions: number;
  bounces: number;
  duration: number;
  pageViews: number;
}

/** The session summaries' arithmetic. */
export interface SessionMoves {
  /** The union of two countings. */
  merge(a: SessionSpan, b: SessionSpan): SessionSpan;
  /** A commit's session groups (per hour and bot flag) as each session's own state, by `project \0 session`. */
  statesOf(groups: readonly SessionGroup[]): Map<string, { projectId: string; session: string; state: SessionState }>;
  /** Notes that a session went from `before` to `after` (null: none) into `moves`, keyed by project, first and last day and way of counting. */
  move(moves: Map<string, DayMove>, projectId: string, before: SessionState | null, after: SessionState | null): void;
  /**
   * The midnights a session's span over every event crosses after a change and not before
   * (`added`), and before and not after (`removed`), each as the UTC day it starts. A span of
   * {@link LONG_SESSION_MS} or more crosses none here: a row per midnight would let one session of
   * two events, one dated years back, cost thousands of rows; such sessions are read through
   * their own partial index instead (`aggregate-schema.ts`).
   */
  crossed(before: SessionState | null, after: SessionState | null): { added: number[]; removed: number[] };
  /**
   * The UTC day a session now starts on, every event counted, when a change that only takes
   * events away (an erasure, retention's cut) moved it later; else null. A report kept per day
   * counts the sessions that start on each day (`reports/session-days.ts`): such a day must be
   * marked, as a day a new event comes to is.
   */
  firstDayMoved(before: SessionState | null, after: SessionState | null): number | null;
}

/** Builds the session summaries' arithmetic (self-contained: see the top of the file). */
export function createSessionMoves(): SessionMoves {
  const dayMs = 86_400_000;
  // LONG_SESSION_MS, written here: the writer thread gets this function as source text.
  const longMs = 30 * dayMs;
  const merge = (a: SessionSpan, b: SessionSpan): SessionSpan =>
    a === null ? b : b === null ? a : { first: Math.min(a.first, b.first), last: Math.max(a.last, b.last), events: a.events + b.events, pageViews: a.pageViews + b.pageViews };
  /** Adds `sign` times a span's share to the sums of its first and last day. */
  const share = (moves: Map<string, DayMove>, projectId: string, span: SessionSpan, withBots: 0 | 1, sign: number) => {
    if (span === null) return;
    const day = Math.floor(span.first / dayMs);
    const lastDay = Math.floor(span.last / dayMs);
    const key = `${projectId}\u0000${day}\u0000${lastDay}\u0000${withBots}`;
    let m = moves.get(key);
    if (m === undefined) moves.set(key, (m = { projectId, day, lastDay, withBots, sessions: 0, bounces: 0, duration: 0, pageViews: 0 }));
    m.sessions += sign;
    m.bounces += span.pageViews <= 1 ? sign : 0;
    m.duration += sign * (span.last - span.first);
    m.pageViews += sign * span.pageViews;
  };
  return {
    merge,
    firstDayMoved(before, after) {
      const [was, now] = [before?.[1], after?.[1]];
      if (was === null || was === undefined || now === null || now === undefined) return null;
      const day = Math.floor(now.first / dayMs);
      return day > Math.floor(was.first / dayMs) ? day : null;
    },
    statesOf(groups) {
      const states = new Map<string, { projectId: string; session: string; state: SessionState }>();
      for (const g of groups) {
        const key = `${g.project}\u0000${g.session}`;
        let s = states.get(key);
        if (s === undefined) states.set(key, (s = { projectId: g.project, session: g.session, state: [null, null] }));
        const span: SessionSpan = { first: g.first, last: g.last, events: g.events, pageViews: g.pageViews };
        if (g.bot === 0) s.state[0] = merge(s.state[0], span);
        s.state[1] = merge(s.state[1], span);
      }
      return states;
    },
    move(moves, projectId, before, after) {
      for (const withBots of [0, 1] as const) {
        share(moves, projectId, before === null ? null : before[withBots], withBots, -1);
        share(moves, projectId, after === null ? null : after[withBots], withBots, 1);
      }
    },
    crossed(before, after) {
      // The days after the first up to the last: the counting over every event holds the other.
      const days = (state: SessionState | null): [number, number] => {
        const span = state === null ? null : state[1];
        return span === null || span.last - span.first >= longMs ? [0, 0] : [Math.floor(span.first / dayMs) + 1, Math.floor(span.last / dayMs) + 1];
      };
      const [b0, b1] = days(before);
      const [a0, a1] = days(after);
      const added: number[] = [];
      const removed: number[] = [];
      for (let d = a0; d < a1; d++) if (d < b0 || d >= b1) added.push(d);
      for (let d = b0; d < b1; d++) if (d < a0 || d >= a1) removed.push(d);
      return { added, removed };
    },
  };
}
