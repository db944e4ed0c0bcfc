import type pg from 'pg';
import { KEYS_LOCK_SQL } from './rollup-refresh.js';
import { DAY_MS, HOLDER_COLUMNS, HOLDER_INDEXES } from './rollup-schema.js';
import { weekOfDaySql } from '../aggregates/aggregate-schema.js';

/*
 * What the erasure of a user does to the daily rollups (docs/decisions.md, "Daily rollups"), in the
 * erasure's own transaction, at a cost that grows with the user's events and keys and with the
 * rows kept on the days they touch, never with the project's whole history: no session id, anonymous id or visitor hash of the erased events
 * may stay in the key dictionary (`rollup_keys`) or in a rollup row, and every report stays exact.
 *
 * 1. The user's events are read through `events_by_user`, before they are deleted: their keys and
 *    what their rows in `rollup_steps` are keyed by. On PostgreSQL, where an event of the user may
 *    commit between that read and the delete, the rows the delete returns are what the steps
 *    below take; the read only lets the kept rows' deletes start early.
 * 2. Every day whose rollup holds one of those keys is marked (the user's own days are marked by
 *    the delete itself): a key may also sit in events without the user id (before `identify()`),
 *    which erasure keeps. They are found in `rollup_values`' rows of dimension '', which group
 *    every event of a day by session and visitor: an index seek per key, by visitor, by session
 *    and by visitor hash (which a late event puts on another day: `rollup-schema.ts`), never over
 *    the events. A refresh of a day that lost events also releases keys (`rollup-refresh.ts`),
 *    SQLite's tombstones below among them once no row holds their ids.
 *    Reports read marked days from the events, so no count moves; the next refresh builds them.
 * 3. The rows that hold a key go: the erased events' own rows of `rollup_steps`, and the rows of
 *    `rollup_errors` and `rollup_exposures` of the user's days that name one of the keys (as text,
 *    and as its id). Rows of kept events elsewhere keep the keys those events keep.
 * 4. The keys leave the dictionary. `rollup_values` and `rollup_exposures` rows of marked days
 *    may still hold their ids, numbers that no longer name anything; they are never read (their
 *    days are marked) and the refresh of each day replaces them. On SQLite, where a new id is the
 *    largest plus one, an erased key's row stays as a tombstone with the key replaced, so its id
 *    is never given again while such a row exists; PostgreSQL's ids come from a sequence and never
 *    repeat.
 *
 * Races with a refresh computing a day meanwhile: on SQLite the erasure adds a mark to every
 * marked day of the project, which changes the count the refresh installs under, so a day being
 * computed is dropped and computed again (step 2 alone would miss a day in its first build: it has
 * no rows yet, and its computed rows may hold an id of an erased key); on PostgreSQL
 * the erasure takes the project's dictionary lock first, which a refresh holds from before it
 * deletes a day's rows to its commit, and drops the refresh or keep holding it, as SQLite's
 * drops a day being computed, rather than wait for it ({@link takeKeysLock}).
 */

/** The columns of the events {@link UserEventRow} holds. */
export const USER_EVENT_COLUMNS = 'event_id, event_type, path, session_id, anonymous_id, visitor_id, timestamp';

/** What an erasure reads of each of the user's events (`$1`/`?` the project, `$2`/`?` the user), through `events_by_user`. */
const userEventsSql = (ph: (n: number) => string) => `SELECT ${USER_EVENT_COLUMNS} FROM events WHERE project_id = ${ph(1)} AND user_id = ${ph(2)}`;

/** An erased event as the rollups' side of an erasure needs it: {@link USER_EVENT_COLUMNS}. */
export type UserEventRow = {
  event_id: string;
  event_type: string;
  path: string | null;
  session_id: string | null;
  anonymous_id: string | null;
  visitor_id: string | null;
  timestamp: number | string;
};

/** The key of an event's `rollup_steps` row (`rollup-refresh.ts`: kind 0 a page view of a path, 1 one without, 2 any other event). */
interface StepKey {
  day: number;
  kind: number;
  value: string;
  eventId: string;
}

/** What step 1 reads: the user's keys, days, and the `rollup_steps` rows of their events. */
interface UserRollupRows {
  keys: string[];
  days: number[];
  steps: StepKey[];
}

/** Step 1 over the rows of {@link userEventsSql} (SQLite's erasure program does the same inline: it travels as source text). */
function userRollupRows(rows: ReadonlyArray<UserEventRow>): UserRollupRows {
  const keys = new Set<string>();
  const days = new Set<number>();
  const steps: StepKey[] = [];
  for (const row of rows) {
    for (const key of [row.session_id, row.anonymous_id, row.visitor_id]) if (key !== null) keys.add(key);
    const day = Math.floor(Number(row.timestamp) / DAY_MS);
    days.add(day);
    if (row.session_id === null) continue;
    const page = row.event_type === 'page_view';
    steps.push({ day, kind: page ? (row.path === null ? 1 : 0) : 2, value: page ? (row.path ?? '') : row.event_type, eventId: row.event_id });
  }
  return { keys: [...keys], days: [...days], steps };
}

/** The ids of the keys in the project's dictionary (`keys` a list expression of text), as a list expression. */
const keyIds = (project: string, keys: string) => `(SELECT id FROM rollup_keys WHERE project_id = ${project} AND key IN ${keys})`;

/**
 * The days whose `rollup_values` rows of dimension '' hold an id of one of the keys (a list
 * expression of text), through the holder indexes (`rollup-schema.ts`): seeks per key. `indexed`
 * names the index for SQLite, whose planner, with a list from `json_each` of unknown length,
 * preferred a pass over the project's rows.
 */
const holderDaysSql = (project: string, keys: string, indexed: (index: string) => string = () => '') =>
  HOLDER_COLUMNS.map(
    (column) => `SELECT day FROM rollup_values ${indexed(HOLDER_INDEXES[column])} WHERE project_id = ${project} AND dim = '' AND ${column} IN ${keyIds(project, keys)}`,
  ).join('\n   UNION ');

/**
 * Step 3's deletes of `rollup_errors` and `rollup_exposures` (`inDays` what makes `day` one of the
 * user's days, `keys` a list expression; the exposures by their keys' ids). Before step 4, which
 * the ids need. On PostgreSQL `inDays` is `= ANY(array)`: with `IN (SELECT unnest(array))` its
 * planner read the whole tables (77 ms for `rollup_errors` at 10M events, 7 ms through the day
 * index).
 */
const textKeyDeletes = (project: string, inDays: string, keys: string): string[] => [
  `DELETE FROM rollup_errors WHERE project_id = ${project} AND day ${inDays} AND (visitor IN ${keys} OR visitor_hash IN ${keys})`,
  `DELETE FROM rollup_exposures WHERE project_id = ${project} AND day ${inDays} AND (visitor IN ${keyIds(project, keys)} OR visitor_hash IN ${keyIds(project, keys)})`,
];

/**
 * Step 3's deletes of the filtered rows and kept session days of the days step 2 marks and those
 * the user had events in (`inDays`, as {@link textKeyDeletes}'): their sketches hold the keys'
 * hashes, their session days the sessions' ids and counts; and the filtered week rows of those
 * days' weeks (`inWeeks`), merged from them.
 */
const dayDeletes = (project: string, inDays: string, inWeeks: string): string[] => [
  ...['rollup_filtered', 'rollup_kept_sessions'].map((table) => `DELETE FROM ${table} WHERE project_id = ${project} AND day ${inDays}`),
  `DELETE FROM rollup_filtered_weeks WHERE project_id = ${project} AND week ${inWeeks}`,
];

/**
 * The statements of steps 1–3 for SQLite's erasure program, which runs them elsewhere
 * (`sqlite/sqlite-erasure.ts`): `ph` numbers the user query's placeholders; `names` gives the
 * project, the keys, the user's days, the days of both steps (`touched`) and their weeks
 * (`touchedWeeks`) as SQL.
 */
export function erasureRollupSql(
  ph: (n: number) => string,
  names: { p: string; keys: string; days: string; touched: string; touchedWeeks: string },
): { userEvents: string; holderDays: string; textKeyDeletes: string[]; dayDeletes: string[] } {
  return {
    userEvents: userEventsSql(ph),
    holderDays: holderDaysSql(names.p, names.keys, (index) => `INDEXED BY ${index}`),
    textKeyDeletes: textKeyDeletes(names.p, `IN ${names.days}`, names.keys),
    dayDeletes: dayDeletes(names.p, `IN ${names.touched}`, `IN ${names.touchedWeeks}`),
  };
}

/** The days of both lists, once each, in order: what step 3's day deletes take (SQLite's program writes it inline). */
export const touchedDays = (userDays: readonly number[], holderDays: readonly number[]): number[] =>
  [...new Set([...userDays, ...holderDays])].sort((a, b) => a - b);

/**
 * Step 3's delete of the erased events' own `rollup_steps` rows on PostgreSQL (project; days,
 * kinds, values and event ids as arrays): a seek per event through `rollup_steps_by_event`
 * (`rollup-schema.ts`).
 */
export const POSTGRES_STEPS_DELETE_SQL = `DELETE FROM rollup_steps s USING unnest($2::int[], $3::smallint[], $4::text[], $5::text[]) AS e(day, kind, value, event_id)
  WHERE s.project_id = $1 AND s.day = e.day AND s.kind = e.kind AND s.value = e.value AND s.event_id = e.event_id`;

/** Takes the project's dictionary lock if no one holds it. */
const TRY_KEYS_LOCK_SQL = "SELECT pg_try_advisory_xact_lock(hashtext('rollup-keys:' || $1::text)) AS ok";

/**
 * Cancels the statement of each other session that holds or waits for the project's dictionary
 * lock while it holds a claim of one of its days: a refresh building a day, or a keep writing
 * one (`report-keep.ts`); never an erasure, which claims no day, nor a report or a group commit.
 * Builds and keeps run on connections of their own (`postgres-store.ts`): a holder that commits
 * meanwhile has at most its connection's next build or `ANALYZE` cancelled instead, each taken
 * again later. Behind a pooler in transaction mode that connection may serve anything next; the
 * window is the few microseconds between this statement's read of `pg_locks` and its signal, and
 * what it would cancel fails as a read past its budget or a commit refused, both answered as such.
 * Locks as `pg_locks` shows them: a bigint key split in two halves (objsubid 1), two int4 keys as
 * they are (objsubid 2), each half as an unsigned oid.
 */
const DROP_BUILDS_SQL = `SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) AS dropped FROM (
    SELECT DISTINCT k.pid FROM pg_locks k JOIN pg_locks c ON c.pid = k.pid,
      (SELECT hashtext('rollup-keys:' || $1::text)::bigint AS keys, hashtext('rollup:' || $1::text)::bigint AS claims,
         (SELECT oid FROM pg_database WHERE datname = current_database()) AS db) x
    WHERE k.pid <> pg_backend_pid()
      AND k.locktype = 'advisory' AND k.database = x.db AND k.objsubid = 1
      AND k.classid::bigint = (x.keys >> 32) & 4294967295 AND k.objid::bigint = x.keys & 4294967295
      AND c.locktype = 'advisory' AND c.granted AND c.database = x.db AND c.objsubid = 2
      AND c.classid::bigint = x.claims & 4294967295) holders`;

/** Tries of {@link takeKeysLock} before it waits, and the pause between them, ms: a cancelled build rolls back in milliseconds. */
const DROP_TRIES = 50;
const DROP_PAUSE_MS = 20;

/**
 * The project's dictionary lock, for an erasure. A refresh holds it through a day's whole build
 * (seconds for a large project's day), a keep through its writes: both are dropped rather than
 * waited for (the day stays marked, or unkept, and is built again later). Tried again after each
 * drop rather than waited for in the lock's queue, where a build queued before the erasure would
 * take it first. Another erasure holding it is waited for, and so is a keep that only merges a
 * week's rows (it claims no day; one week, tens of milliseconds at 10M events), and anything
 * still holding it after a second of tries.
 */
async function takeKeysLock(client: pg.PoolClient, projectId: string): Promise<void> {
  for (let attempt = 0; attempt < DROP_TRIES; attempt++) {
    if ((await client.query<{ ok: boolean }>(TRY_KEYS_LOCK_SQL, [projectId])).rows[0]?.ok === true) return;
    await client.query(DROP_BUILDS_SQL, [projectId]);
    await new Promise((resolve) => setTimeout(resolve, DROP_PAUSE_MS));
  }
  await client.query(KEYS_LOCK_SQL, [projectId]);
}

/**
 * Runs work in a transaction of its own on another connection, beside the erasure's, and answers
 * whether it did (`postgres/postgres-beside.ts`); when it did not, the erasure does the work itself.
 */
export type Beside = (work: (client: pg.PoolClient) => Promise<void>) => Promise<boolean>;

/** What the deleting part of a PostgreSQL erasure answers: its result, and the events it deleted as {@link USER_EVENT_COLUMNS}. */
export interface Erased<T> {
  result: T;
  events: ReadonlyArray<UserEventRow>;
}

/**
 * The rollup side of an erasure on PostgreSQL, on the erasure's transaction; `erase` deletes the
 * user's events and chunks, and answers the events it deleted.
 *
 * The deletes of the kept rows (step 3's {@link dayDeletes}: hundreds of megabytes of sketches on a
 * busy project's days, about half a second at ten million events) run `beside` the rest when it
 * is given: they start once the days are known and this transaction holds the project's dictionary
 * lock, and end before it commits. They are rows that reports keep to answer again, written only
 * by a keep or a refresh, each under that lock: none can write them again before the erasure
 * commits, nor hold a row the deletes wait for, and after it commits their days are marked, which
 * no keep writes. Committed first, they are at worst kept rows gone before an erasure that then
 * failed, which reports compute again.
 *
 * The days and keys are first read from the events, to start those deletes early. An event of the
 * user committed after that read and before the delete is deleted too: its keys, steps and days
 * are taken from the rows the delete returns, and what they add (holder days of new keys, their
 * kept rows) is done here, after it.
 */
export async function erasePostgresUser<T>(
  client: pg.PoolClient,
  projectId: string,
  userId: string,
  erase: () => Promise<Erased<T>>,
  beside: Beside | null = null,
): Promise<T> {
  await takeKeysLock(client, projectId);
  const read = userRollupRows((await client.query<UserEventRow>(userEventsSql((n) => `$${n}`), [projectId, userId])).rows);
  const keys = '(SELECT unnest($2::text[]))';
  const holderDays = async (ofKeys: readonly string[]) =>
    ofKeys.length === 0 ? [] : (await client.query<{ day: number }>(holderDaysSql('$1', keys), [projectId, ofKeys])).rows.map((row) => Number(row.day));
  const keptDeletes = (days: readonly number[]) => async (on: pg.ClientBase) => {
    if (days.length === 0) return;
    for (const sql of dayDeletes('$1', '= ANY($2::int[])', `= ANY(ARRAY(SELECT ${weekOfDaySql('d')} FROM unnest($2::int[]) AS d))`)) {
      await on.query(sql, [projectId, days]);
    }
  };
  // The holders are read from the rollups (the events' delete changes none): the marks and the day
  // deletes take the same days (the dictionary lock keeps a refresh from changing them meanwhile).
  const holders = await holderDays(read.keys);
  const touched = touchedDays(read.days, holders);
  const aside = beside === null || touched.length === 0 ? Promise.resolve(false) : beside(keptDeletes(touched));
  let erased: Erased<T>;
  let user: UserRollupRows;
  let late: number[] = [];
  try {
    erased = await erase();
    user = userRollupRows(erased.events);
    if (user.keys.length > 0) {
      const earlier = new Set(read.keys);
      const lateHolders = await holderDays(user.keys.filter((key) => !earlier.has(key)));
      const isTouched = new Set(touched);
      late = touchedDays(user.days, lateHolders).filter((day) => !isTouched.has(day));
      // Marked as the triggers mark (`rollup-schema.ts`), in (project, day) order under each day's shared mark lock.
      await client.query(
        `SELECT rollup_mark_days(array_agg($1::text ORDER BY day), array_agg(day ORDER BY day)) FROM unnest($2::int[]) AS day HAVING count(*) > 0`,
        [projectId, touchedDays(holders, lateHolders)],
      );
      if (user.steps.length > 0) {
        await client.query(POSTGRES_STEPS_DELETE_SQL, [
          projectId,
          user.steps.map((s) => s.day),
          user.steps.map((s) => s.kind),
          user.steps.map((s) => s.value),
          user.steps.map((s) => s.eventId),
        ]);
      }
      for (const sql of textKeyDeletes('$1', '= ANY($3::int[])', keys)) await client.query(sql, [projectId, user.keys, user.days]);
    }
  } catch (error) {
    // Never left running past this transaction.
    await aside.catch(() => false);
    throw error;
  }
  const besideDone = await aside.catch(() => false);
  // Nothing deleted (the user had no events, or retention, which takes no dictionary lock, deleted
  // them after the first read): no key leaves the dictionary or a rollup row, so no day needs building again, and the
  // kept rows deleted beside are rows reports compute again.
  if (user.keys.length === 0) return erased.result;
  if (!besideDone) await keptDeletes(touched)(client);
  await keptDeletes(late)(client);
  await client.query('DELETE FROM rollup_keys WHERE project_id = $1 AND key = ANY($2::text[])', [projectId, user.keys]);
  return erased.result;
}
