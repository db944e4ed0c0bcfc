import type Database from 'better-sqlite3';
import type pg from 'pg';
import { inTransaction } from '../postgres/postgres-transaction.js';
import type { FilteredKeep, KeepFiltered } from './filtered-tops.js';
import { KEYS_LOCK_SQL } from './rollup-refresh.js';

/*
 * Keeping the filtered rows a report computed (`filtered-tops.ts`): a day is kept only if, when its
 * rows are written, it is not marked, its version is still the one the report's snapshot saw (no
 * refresh built it since) and it is not kept already. A refresh deletes a day's kept rows and
 * raises its version in the transaction that builds it; an erasure deletes the kept rows of the
 * days it marks. So rows computed from a snapshot before either are refused, and none outlives them.
 */

/**
 * The SQLite keep on connection `db`, in one write transaction. It runs on the rollup thread
 * (`sqlite/rollup-sqlite-thread.ts`), which receives it as source text, so it must stay
 * self-contained; the writer thread's commits and erasures and the refresh on the same thread are
 * serialized with it by the database's write lock.
 */
export function prepareSqliteFilteredKeep(db: Database.Database): (keep: FilteredKeep) => number {
  const marked = db.prepare('SELECT 1 FROM rollup_dirty WHERE project_id = ? AND day = ?').pluck();
  const version = db.prepare('SELECT version FROM rollup_versions WHERE project_id = ? AND day = ?').pluck();
  const keptAlready = db
    .prepare('SELECT 1 FROM rollup_filtered WHERE project_id = ? AND filter_dim = ? AND filter_value = ? AND dim = ? AND day = ? AND value IS NULL')
    .pluck();
  const insert = db.prepare(
    'INSERT INTO rollup_filtered (project_id, filter_dim, filter_value, dim, day, is_bot, value, n, visitors, visitor_hashes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const keep = db.transaction((k: FilteredKeep): number => {
    let kept = 0;
    for (const day of k.days) {
      if (marked.get(k.projectId, day.day) !== undefined) continue;
      if (((version.get(k.projectId, day.day) as number | undefined) ?? 0) !== day.version) continue;
      for (const { dim, rows } of day.dims) {
        if (keptAlready.get(k.projectId, k.filterDim, k.filterValue, dim, day.day) !== undefined) continue;
        insert.run(k.projectId, k.filterDim, k.filterValue, dim, day.day, 0, null, 0, null, null);
        for (const row of rows) {
          insert.run(k.projectId, k.filterDim, k.filterValue, dim, day.day, row.isBot ? 1 : 0, row.value, row.n, row.visitors, row.visitorHashes);
        }
        kept++;
      }
    }
    return kept;
  });
  return (k) => keep.immediate(k);
}

/**
 * The PostgreSQL keep, in one transaction. It takes the project's dictionary lock first, which an
 * erasure holds to its commit and a refresh from before it deletes a day's rows to its commit, so
 * neither is in flight while it checks; then each day's refresh lock, without waiting (a refresh
 * holding it waits for the dictionary lock: the day is passed over, and computed again later).
 * Keeps run one at a time: a dashboard's first view of a filter hands on several, and each may
 * wait seconds for the dictionary lock (a refresh building a day), holding a pooled connection
 * that ingest's commits would then wait for.
 */
export function createPostgresFilteredKeep(pool: pg.Pool): KeepFiltered {
  let last: Promise<unknown> = Promise.resolve();
  return (k) => {
    const kept = last.then(() => keep(k));
    last = kept.catch(() => undefined);
    return kept;
  };

  function keep(k: FilteredKeep): Promise<number> {
    return inTransaction(pool, 'BEGIN', async (client) => {
      await client.query(KEYS_LOCK_SQL, [k.projectId]);
      let kept = 0;
      for (const day of k.days) {
        const state = await client.query<{ claimed: boolean; marked: boolean; version: string | null; kept: string[] | null }>(
          `SELECT pg_try_advisory_xact_lock(hashtext('rollup:' || $1::text), $2::int) AS claimed,
             EXISTS (SELECT 1 FROM rollup_dirty WHERE project_id = $1 AND day = $2) AS marked,
             (SELECT version FROM rollup_versions WHERE project_id = $1 AND day = $2) AS version,
             (SELECT array_agg(dim) FROM rollup_filtered WHERE project_id = $1 AND filter_dim = $3 AND filter_value = $4 AND day = $2 AND value IS NULL) AS kept`,
          [k.projectId, day.day, k.filterDim, k.filterValue],
        );
        const s = state.rows[0];
        if (s === undefined || !s.claimed || s.marked || Number(s.version ?? 0) !== day.version) continue;
        const keptDims = new Set(s.kept ?? []);
        const rows: Array<{ dim: string; isBot: boolean; value: string | null; n: number; visitors: Uint8Array | null; visitorHashes: Uint8Array | null }> = [];
        for (const { dim, rows: dimRows } of day.dims) {
          if (keptDims.has(dim)) continue;
          rows.push({ dim, isBot: false, value: null, n: 0, visitors: null, visitorHashes: null }, ...dimRows.map((row) => ({ dim, ...row })));
          kept++;
        }
        if (rows.length === 0) continue;
        await client.query(
          `INSERT INTO rollup_filtered (project_id, filter_dim, filter_value, dim, day, is_bot, value, n, visitors, visitor_hashes)
           SELECT $1, $2, $3, d, $4, b, v, n, s, h FROM unnest($5::text[], $6::bool[], $7::text[], $8::bigint[], $9::bytea[], $10::bytea[]) AS r(d, b, v, n, s, h)`,
          [
            k.projectId,
            k.filterDim,
            k.filterValue,
            day.day,
            rows.map((r) => r.dim),
            rows.map((r) => r.isBot),
            rows.map((r) => r.value),
            rows.map((r) => r.n),
            rows.map((r) => (r.visitors === null ? null : Buffer.from(r.visitors))),
            rows.map((r) => (r.visitorHashes === null ? null : Buffer.from(r.visitorHashes))),
          ],
        );
      }
      return kept;
    });
  }
}
