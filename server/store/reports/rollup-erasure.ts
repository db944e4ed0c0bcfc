import type Database from 'better-sqlite3';
import type pg from 'pg';
import { KEYS_LOCK_SQL, ROLLUP_DIMS } from './rollup-refresh.js';
import { daySql, markDaysSql } from './rollup-schema.js';

/*
 * What the erasure of a user does to the daily rollups (docs/decisions.md, "Daily rollups"), in the
 * erasure's own transaction: no session id, anonymous id or visitor hash of the user's events may
 * stay in the key dictionary (`rollup_keys`) or in a rollup row, and every report stays exact.
 *
 * 1. The user's keys are read from their events, before those are deleted.
 * 2. Every day whose events hold one of those keys is marked (the user's own days are marked by the
 *    delete itself): a key may also sit in events without the user id (before `identify()`), which
 *    erasure keeps, and in the rollup rows built from them, by id.
 * 3. The rollup rows of every marked day of the project are deleted. Reports read marked days from
 *    the events, so no count moves; the next refresh builds the days again.
 * 4. The keys leave the dictionary. A key that is still in kept events comes back with a new id when
 *    its day is rebuilt; the old id is then in no row, every day that held it being rebuilt too.
 *
 * Races with a refresh computing a day meanwhile: on SQLite the marks of step 2 change the count the
 * refresh installs under (a day holding a key is dropped), and a key removed at the top of the
 * dictionary changes the largest id it checks; on PostgreSQL the erasure takes the project's
 * dictionary lock first, which a refresh holds from before it deletes a day's rows to its commit.
 */

/** The tables a refresh writes, whose rows of marked days step 3 deletes. */
const DAY_TABLES = ['rollup_errors', 'rollup_vitals', 'rollup_exposures', 'rollup_steps'] as const;

/** The keys of a user's events, a row per event (`$1`/`?` the project, `$2`/`?` the user): one scan, where a UNION per column made three. */
const userKeysSql = (ph: (n: number) => string) =>
  `SELECT session_id, anonymous_id, visitor_id FROM events WHERE project_id = ${ph(1)} AND user_id = ${ph(2)}`;

type KeyRow = { session_id: string | null; anonymous_id: string | null; visitor_id: string | null };

/** The distinct keys of {@link userKeysSql}'s rows. */
const distinctKeys = (rows: KeyRow[]): string[] => [
  ...new Set(rows.flatMap((row) => [row.session_id, row.anonymous_id, row.visitor_id]).filter((k): k is string => k !== null)),
];

/** Events of the project that hold one of the keys in `keys` (a list expression). */
const holdersWhere = (project: string, keys: string) =>
  `project_id = ${project} AND (session_id IN ${keys} OR anonymous_id IN ${keys} OR visitor_id IN ${keys})`;

/** The deletes of step 3 and the dictionary delete of step 4, `project` and `keys` as SQL. */
function cleanupSql(project: string, keys: string): string[] {
  const marked = `(SELECT day FROM rollup_dirty WHERE project_id = ${project})`;
  return [
    `DELETE FROM rollup_values WHERE project_id = ${project} AND dim IN (${ROLLUP_DIMS.map((dim) => `'${dim}'`).join(', ')}) AND day IN ${marked}`,
    ...DAY_TABLES.map((table) => `DELETE FROM ${table} WHERE project_id = ${project} AND day IN ${marked}`),
    `DELETE FROM rollup_keys WHERE project_id = ${project} AND key IN ${keys}`,
  ];
}

/** The rollup side of an erasure on SQLite: `before` reads the user's keys, `after` (once the events are gone) does the rest. */
export interface SqliteErasure {
  before(projectId: string, userId: string): string[];
  after(projectId: string, keys: string[]): void;
}

/** Prepares {@link SqliteErasure} on `db`; both halves run inside the erasure's write transaction. */
export function prepareSqliteErasure(db: Database.Database): SqliteErasure {
  const keysOf = db.prepare<[string, string]>(userKeysSql(() => '?'));
  const list = '(SELECT value FROM json_each(@keys))';
  const mark = db.prepare(
    `INSERT INTO rollup_dirty (project_id, day)
     SELECT DISTINCT project_id, ${daySql('timestamp')} FROM events WHERE ${holdersWhere('@p', list)}
     ON CONFLICT (project_id, day) DO UPDATE SET marks = marks + 1`,
  );
  const cleanup = cleanupSql('@p', list).map((sql) => db.prepare(sql));
  return {
    before: (projectId, userId) => distinctKeys(keysOf.all(projectId, userId) as KeyRow[]),
    after(projectId, keys) {
      const values = { p: projectId, keys: JSON.stringify(keys) };
      if (keys.length > 0) mark.run(values);
      for (const statement of cleanup) statement.run(values);
    },
  };
}

/** The rollup side of an erasure on PostgreSQL, on the erasure's transaction; `erase` deletes the user's events and chunks. */
export async function erasePostgresUser<T>(client: pg.PoolClient, projectId: string, userId: string, erase: () => Promise<T>): Promise<T> {
  await client.query(KEYS_LOCK_SQL, [projectId]);
  const keys = distinctKeys((await client.query<KeyRow>(userKeysSql((n) => `$${n}`), [projectId, userId])).rows);
  const result = await erase();
  const list = '(SELECT unnest($2::text[]))';
  if (keys.length > 0) await client.query(markDaysSql(`(SELECT project_id, timestamp FROM events WHERE ${holdersWhere('$1', list)}) AS holders`), [projectId, keys]);
  for (const sql of cleanupSql('$1', list)) await client.query(sql, sql.includes('$2') ? [projectId, keys] : [projectId]);
  return result;
}
