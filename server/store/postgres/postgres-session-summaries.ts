import type pg from 'pg';
import { HOUR_MS, type SessionGroup } from '../aggregates/aggregate-batch.js';
import { type DayMove, LONG_SESSION_MS, type SessionSpan, type SessionState, createSessionMoves } from '../aggregates/session-moves.js';

/*
 * The session summaries on PostgreSQL (docs/decisions.md, "Session summaries"), in the caller's
 * transaction: the state row of each session (`agg_session_state`), read, moved by
 * `session-moves.ts` and written back with the midnights it crosses (`agg_session_midnights`), and
 * the sums of the sessions per first and last day (`agg_session_days`) inserted as parts, like the
 * other aggregates (`postgres-aggregates.ts`), so that commits touching one day never wait for each
 * other on its row.
 *
 * A state is a read, a move and a write: two processes storing events of one session at once must
 * not both read the old state. Each session's advisory lock is taken first, in one order (its
 * key's), for the rest of the transaction; a new session has no row to lock with `FOR UPDATE`.
 * Every group commit runs the three statements, so they are named: each connection parses and
 * plans them once.
 */

const MOVES = createSessionMoves();

/** The advisory lock of each session, as SQL over the project and session expressions. */
const SESSION_LOCK_KEY = (project: string, session: string) => `hashtextextended('agg-session:' || ${project} || chr(1) || ${session}, 0)`;

const LOCK_SQL = `SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT DISTINCT ${SESSION_LOCK_KEY('p', 's')} AS k FROM unnest($1::text[], $2::text[]) AS u(p, s) ORDER BY k) x`;

/** Takes the locks of sessions (`projects[i]`, `sessions[i]`), in the order of their keys. */
async function lockSessions(client: pg.PoolClient, projects: readonly string[], sessions: readonly string[]): Promise<void> {
  await client.query({ name: 'agg-session-lock', text: LOCK_SQL, values: [projects, sessions] });
}

const keyOf = (projectId: string, session: string) => `${projectId}\u0000${session}`;

const READ_SQL = `SELECT s.project_id, s.session_id, s.h_first, s.h_last, s.h_events, s.h_page_views, s.first_ts, s.last_ts, s.events, s.page_views
  FROM agg_session_state s JOIN unnest($1::text[], $2::text[]) AS u(p, sid) ON s.project_id = u.p AND s.session_id = u.sid`;

/** The states of sessions, by {@link keyOf}. */
async function readStates(client: pg.PoolClient, projects: readonly string[], sessions: readonly string[]): Promise<Map<string, SessionState>> {
  const { rows } = await client.query<Record<string, string | null>>({ name: 'agg-session-read', text: READ_SQL, values: [projects, sessions] });
  const states = new Map<string, SessionState>();
  for (const r of rows) {
    const human: SessionSpan = r.h_first === null ? null : { first: Number(r.h_first), last: Number(r.h_last), events: Number(r.h_events), pageViews: Number(r.h_page_views) };
    states.set(keyOf(String(r.project_id), String(r.session_id)), [human, { first: Number(r.first_ts), last: Number(r.last_ts), events: Number(r.events), pageViews: Number(r.page_views) }]);
  }
  return states;
}

const WRITE_SQL = `WITH up AS (
       INSERT INTO agg_session_state (project_id, session_id, h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[])
       ON CONFLICT (project_id, session_id) DO UPDATE SET h_first = excluded.h_first, h_last = excluded.h_last, h_events = excluded.h_events,
         h_page_views = excluded.h_page_views, first_ts = excluded.first_ts, last_ts = excluded.last_ts, events = excluded.events, page_views = excluded.page_views),
     gone AS (DELETE FROM agg_session_state a USING unnest($11::text[], $12::text[]) AS k(p, s) WHERE a.project_id = k.p AND a.session_id = k.s),
     crossing AS (INSERT INTO agg_session_midnights (project_id, day, session_id) SELECT * FROM unnest($20::text[], $21::bigint[], $22::text[]) ON CONFLICT DO NOTHING),
     uncrossed AS (DELETE FROM agg_session_midnights m USING unnest($23::text[], $24::bigint[], $25::text[]) AS k(p, d, s)
       WHERE m.project_id = k.p AND m.day = k.d AND m.session_id = k.s)
     INSERT INTO agg_session_days (project_id, day, last_day, with_bots, sessions, bounces, duration, page_views)
     SELECT * FROM unnest($13::text[], $14::bigint[], $26::bigint[], $15::int2[], $16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[])`;

/** Writes new states (null: forgotten), the midnights they start and stop crossing, and the day sums' moves, in one statement. */
async function writeStates(
  client: pg.PoolClient,
  changed: ReadonlyArray<{ projectId: string; session: string; before: SessionState | null; after: SessionState | null }>,
  days: Map<string, DayMove>,
): Promise<void> {
  const kept = changed.filter((c) => c.after !== null && c.after[1] !== null) as Array<{ projectId: string; session: string; after: [SessionSpan, NonNullable<SessionSpan>] }>;
  const gone = changed.filter((c) => c.after === null || c.after[1] === null);
  const moves = [...days.values()].filter((m) => m.sessions !== 0 || m.bounces !== 0 || m.duration !== 0 || m.pageViews !== 0);
  const added: Array<[string, number, string]> = [];
  const removed: Array<[string, number, string]> = [];
  for (const c of changed) {
    const crossed = MOVES.crossed(c.before, c.after);
    for (const day of crossed.added) added.push([c.projectId, day, c.session]);
    for (const day of crossed.removed) removed.push([c.projectId, day, c.session]);
  }
  await client.query({
    name: 'agg-session-write',
    text: WRITE_SQL,
    values: [
      kept.map((c) => c.projectId),
      kept.map((c) => c.session),
      kept.map((c) => c.after[0]?.first ?? null),
      kept.map((c) => c.after[0]?.last ?? null),
      kept.map((c) => c.after[0]?.events ?? 0),
      kept.map((c) => c.after[0]?.pageViews ?? 0),
      kept.map((c) => c.after[1].first),
      kept.map((c) => c.after[1].last),
      kept.map((c) => c.after[1].events),
      kept.map((c) => c.after[1].pageViews),
      gone.map((c) => c.projectId),
      gone.map((c) => c.session),
      moves.map((m) => m.projectId),
      moves.map((m) => m.day),
      moves.map((m) => m.withBots),
      moves.map((m) => m.sessions),
      moves.map((m) => m.bounces),
      moves.map((m) => m.duration),
      moves.map((m) => m.pageViews),
      added.map((m) => m[0]),
      added.map((m) => m[1]),
      added.map((m) => m[2]),
      removed.map((m) => m[0]),
      removed.map((m) => m[1]),
      removed.map((m) => m[2]),
      moves.map((m) => m.lastDay),
    ],
  });
}

/** Adds a commit's session groups (per hour and bot flag) to the states and the day sums. */
export async function addPostgresSessionSummaries(client: pg.PoolClient, groups: readonly SessionGroup[]): Promise<void> {
  const states = [...MOVES.statesOf(groups).values()];
  if (states.length === 0) return;
  const projects = states.map((s) => s.projectId);
  const sessions = states.map((s) => s.session);
  await lockSessions(client, projects, sessions);
  const before = await readStates(client, projects, sessions);
  const days = new Map<string, DayMove>();
  const changed = states.map(({ projectId, session, state }) => {
    const old = before.get(keyOf(projectId, session)) ?? null;
    const after: SessionState = old === null ? state : [MOVES.merge(old[0], state[0]), MOVES.merge(old[1], state[1])];
    MOVES.move(days, projectId, old, after);
    return { projectId, session, before: old, after };
  });
  await writeStates(client, changed, days);
}

/**
 * Counts the named sessions of a project again from their hour rows (`agg_sessions`, all their
 * parts), after an erasure or retention changed those, under the project's aggregate lock taken
 * exclusive: the day sums lose what the old states gave them and get what the new ones give; a
 * session with no hour row left is forgotten.
 */
export async function recountPostgresSessions(client: pg.PoolClient, projectId: string, sessionIds: Iterable<string>): Promise<number[]> {
  const all = [...new Set(sessionIds)];
  const moved = new Set<number>();
  // In slices: retention's first cut of a large project may reach millions of sessions.
  for (let i = 0; i < all.length; i += RECOUNT_SLICE) for (const day of await recountSlice(client, projectId, all.slice(i, i + RECOUNT_SLICE))) moved.add(day);
  return [...moved];
}

/**
 * A recount's read of the sessions' hour rows (project; session ids and hours as arrays, a pair
 * per hour of each session's span): a seek of `agg_sessions_key` per pair. Given a range of hours
 * per session instead, the planner took each range for 0.5% of the table and scanned all of it
 * (about 320 ms of an erasure at 10M events, against 4 ms cold by seeks).
 */
export const POSTGRES_RECOUNT_SQL = `SELECT u.sid AS session_id, a.is_bot, min(a.first_ts) AS first_ts, max(a.last_ts) AS last_ts, sum(a.events) AS events, sum(a.page_views) AS page_views
  FROM unnest($2::text[], $3::bigint[]) AS u(sid, hour)
  JOIN agg_sessions a ON a.project_id = $1 AND a.hour = u.hour AND a.session_id = u.sid
  GROUP BY u.sid, a.is_bot`;

/** The same by a range of hours per session (session ids, first and last hours as arrays): for the sessions too long for a pair an hour. */
const RECOUNT_RANGES_SQL = `SELECT u.sid AS session_id, a.is_bot, min(a.first_ts) AS first_ts, max(a.last_ts) AS last_ts, sum(a.events) AS events, sum(a.page_views) AS page_views
  FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS u(sid, h0, h1)
  JOIN agg_sessions a ON a.project_id = $1 AND a.hour >= u.h0 AND a.hour <= u.h1 AND a.session_id = u.sid
  GROUP BY u.sid, a.is_bot`;

/** Sessions whose states are read and written again per statement. */
const RECOUNT_SLICE = 10_000;
/** (session, hour) pairs read per statement of {@link POSTGRES_RECOUNT_SQL}: a bounded statement whatever the spans. */
const PAIRS_A_STATEMENT = 50_000;
/**
 * Sessions spanning this many hours or more are read by their range ({@link RECOUNT_RANGES_SQL}):
 * a client may name one session across years (any time from 2000 is accepted), a pair an hour
 * would be hundreds of thousands.
 */
const PAIRED_HOURS = 7 * 24;

/**
 * One slice of {@link recountPostgresSessions}. No session lock: the caller holds the project's
 * aggregate lock exclusive (`postgres-aggregates.ts`), which every commit takes shared before its
 * sessions' locks, so no commit of the project runs meanwhile.
 */
async function recountSlice(client: pg.PoolClient, projectId: string, sessions: readonly string[]): Promise<number[]> {
  if (sessions.length === 0) return [];
  const projects = sessions.map(() => projectId);
  const before = await readStates(client, projects, sessions);
  const known = sessions.filter((s) => before.get(keyOf(projectId, s))?.[1] != null);
  if (known.length === 0) return [];
  // Its hour rows lie within its old span: an erasure or a cut only takes events away. A session's
  // rows may come from two statements (its pairs split between them): their spans merge.
  const rows: Array<Record<string, unknown>> = [];
  const pairs = { sids: [] as string[], hours: [] as number[] };
  const long = { sids: [] as string[], first: [] as number[], last: [] as number[] };
  const readPairs = async () => {
    if (pairs.sids.length === 0) return;
    rows.push(...(await client.query<Record<string, unknown>>(POSTGRES_RECOUNT_SQL, [projectId, pairs.sids, pairs.hours])).rows);
    pairs.sids = [];
    pairs.hours = [];
  };
  for (const session of known) {
    const span = (before.get(keyOf(projectId, session)) as SessionState)[1] as NonNullable<SessionSpan>;
    const [first, last] = [Math.floor(span.first / HOUR_MS), Math.floor(span.last / HOUR_MS)];
    if (last - first >= PAIRED_HOURS) {
      long.sids.push(session);
      long.first.push(first);
      long.last.push(last);
      continue;
    }
    for (let hour = first; hour <= last; hour++) {
      pairs.sids.push(session);
      pairs.hours.push(hour);
    }
    if (pairs.sids.length >= PAIRS_A_STATEMENT) await readPairs();
  }
  await readPairs();
  if (long.sids.length > 0) rows.push(...(await client.query<Record<string, unknown>>(RECOUNT_RANGES_SQL, [projectId, long.sids, long.first, long.last])).rows);
  const after = new Map<string, SessionState>(known.map((s) => [s, [null, null]]));
  for (const r of rows) {
    const state = after.get(String(r.session_id)) as SessionState;
    const span: SessionSpan = { first: Number(r.first_ts), last: Number(r.last_ts), events: Number(r.events), pageViews: Number(r.page_views) };
    if (r.is_bot === false) state[0] = MOVES.merge(state[0], span);
    state[1] = MOVES.merge(state[1], span);
  }
  const days = new Map<string, DayMove>();
  const moved = new Set<number>();
  const changed = known.map((session) => {
    const state = after.get(session) as SessionState;
    const kept = state[1] === null ? null : state;
    const old = before.get(keyOf(projectId, session)) ?? null;
    MOVES.move(days, projectId, old, kept);
    const firstDay = MOVES.firstDayMoved(old, kept);
    if (firstDay !== null) moved.add(firstDay);
    return { projectId, session, before: old, after: kept };
  });
  await writeStates(client, changed, days);
  return [...moved];
}

/**
 * The session summaries of a database whose aggregates came before them, built once from its
 * session hour rows (all their parts), in the caller's transaction: each session's two countings,
 * then the sums and midnights ({@link buildPostgresSessionSums}).
 */
export async function buildPostgresSessionSummaries(client: pg.PoolClient): Promise<void> {
  await client.query(`INSERT INTO agg_session_state (project_id, session_id, h_first, h_last, h_events, h_page_views, first_ts, last_ts, events, page_views)
    SELECT project_id, session_id,
      min(first_ts) FILTER (WHERE NOT is_bot), max(last_ts) FILTER (WHERE NOT is_bot),
      COALESCE(sum(events) FILTER (WHERE NOT is_bot), 0), COALESCE(sum(page_views) FILTER (WHERE NOT is_bot), 0),
      min(first_ts), max(last_ts), sum(events), sum(page_views)
    FROM agg_sessions GROUP BY project_id, session_id`);
  await buildPostgresSessionSums(client);
}

/**
 * The sums of the sessions per first and last day and the midnights they cross, from the session
 * states, in the caller's transaction, in place of what those tables hold: what a database of
 * aggregate shape 4 or 5 (`aggregate-schema.ts`) lacks.
 */
export async function buildPostgresSessionSums(client: pg.PoolClient): Promise<void> {
  await client.query('DELETE FROM agg_session_days');
  await client.query('DELETE FROM agg_session_midnights');
  for (const [withBots, first, last, pageViews] of [
    [0, 'h_first', 'h_last', 'h_page_views'],
    [1, 'first_ts', 'last_ts', 'page_views'],
  ] as const) {
    await client.query(`INSERT INTO agg_session_days (project_id, day, last_day, with_bots, sessions, bounces, duration, page_views)
      SELECT project_id, ${first} / 86400000, ${last} / 86400000, ${withBots}, count(*), count(*) FILTER (WHERE ${pageViews} <= 1), sum(${last} - ${first}), sum(${pageViews})
      FROM agg_session_state WHERE ${first} IS NOT NULL GROUP BY project_id, ${first} / 86400000, ${last} / 86400000`);
  }
  await client.query(`INSERT INTO agg_session_midnights (project_id, day, session_id)
    SELECT project_id, generate_series(first_ts / 86400000 + 1, last_ts / 86400000), session_id
    FROM agg_session_state WHERE first_ts / 86400000 <> last_ts / 86400000 AND last_ts - first_ts < ${LONG_SESSION_MS}`);
}
