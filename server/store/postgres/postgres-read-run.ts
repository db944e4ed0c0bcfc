import type pg from 'pg';
import { inTransaction } from './postgres-transaction.js';
import type { RunQuery } from '../reports/dialect.js';
import { StoreError } from '../store-error.js';

/** The default of the reads' time budget, ms: SQLite's read budget. */
export const DEFAULT_READ_BUDGET_MS = 15_000;

/** PostgreSQL's code of a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = '57014';

/**
 * Settings of every read statement on PostgreSQL (reports, the event list, the export, the
 * recordings), for its own transaction only (docs/decisions.md, "Daily rollups"). JIT compilation
 * is off: the planner turns it on by the statement's estimated cost, which the rollups' month of
 * rows reaches, and compiling then cost a good share of the panel while the statement reads well
 * under a second of rows; an event list or an export page reads a few hundred rows through an
 * index and has nothing to gain from compiling either. Parallel plans are off: the dashboard asks
 * for all its panels at once, so the cores are already shared among their statements, and the
 * planner's parallel choices over the rollups read whole tables (the funnel's `rollup_steps` by a
 * parallel sequential scan instead of its steps' index ranges); a read of the API that takes
 * parallel workers takes the cores that ingest's commits need, which is what the budget is there
 * to prevent.
 */
export const READ_SETTINGS: readonly string[] = ['SET LOCAL jit = off', 'SET LOCAL max_parallel_workers_per_gather = 0'];

/**
 * Runs read statements on `pool`, each in a read-only transaction of its own with
 * {@link READ_SETTINGS} (and sequential scans off for a statement hinted `indexesOnly`) and
 * `statement_timeout` set to `budgetMs`. `SET LOCAL` ends with the transaction, so the connection
 * goes back to the pool as it came, and the settings hold behind a pooler in transaction mode,
 * unlike connection options. A statement past `budgetMs`, waiting for a lock included, is
 * cancelled by the database and rejects with `BUSY` (the API answers 503 with `Retry-After`), as a
 * SQLite read past its budget: a read whose plan goes wrong, or whose range is too large, cannot
 * hold a pooled connection (which ingest shares) for as long as it runs, nor go on in the database
 * after its client has left. The store's reports and its plain reads share this one runner.
 */
export function createPostgresReadRun(pool: () => pg.Pool, budgetMs = DEFAULT_READ_BUDGET_MS): RunQuery {
  const begin = ['BEGIN READ ONLY', ...READ_SETTINGS, `SET LOCAL statement_timeout = ${Math.floor(budgetMs)}`].join('; ');
  // Reads whose tables all have the index they need: the planner takes a partial index for the
  // whole table (it has no statistics of its predicate) and scans the table instead (when the
  // sessions report read the sessions that span days through one: 375 ms against 4 ms at 10M
  // events for a week).
  const indexesOnly = `${begin}; SET LOCAL enable_seqscan = off`;
  return async (sql, values, hints) => {
    try {
      return await inTransaction(pool(), hints?.indexesOnly === true ? indexesOnly : begin, async (client) => (await client.query<Record<string, unknown>>(sql, values)).rows);
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== QUERY_CANCELED) throw error;
      throw new StoreError('BUSY', `The database did not answer this read within its budget of ${budgetMs} ms; retry later.`, { cause: error });
    }
  };
}
