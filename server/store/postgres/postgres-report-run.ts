import type pg from 'pg';
import { inTransaction } from './postgres-transaction.js';
import type { RunQuery } from '../reports/dialect.js';
import { StoreError } from '../store-error.js';

/** The default of the report statements' time budget, ms: SQLite's read budget. */
export const DEFAULT_REPORT_BUDGET_MS = 15_000;

/** PostgreSQL's code of a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = '57014';

/**
 * Settings of every report statement on PostgreSQL, for its own transaction only
 * (docs/decisions.md, "Daily rollups"). JIT compilation is off: the planner turns it on by the
 * statement's estimated cost, which the rollups' month of rows reaches, and compiling then cost a
 * good share of the panel while the statement reads well under a second of rows. Parallel plans
 * are off: the dashboard asks for all its panels at once, so the cores are already shared among
 * their statements, and the planner's parallel choices over the rollups read whole tables (the
 * funnel's `rollup_steps` by a parallel sequential scan instead of its steps' index ranges).
 */
export const REPORT_SETTINGS: readonly string[] = ['SET LOCAL jit = off', 'SET LOCAL max_parallel_workers_per_gather = 0'];

/**
 * Runs report statements on `pool`, each in a read-only transaction of its own with
 * {@link REPORT_SETTINGS} (and sequential scans off for a statement hinted `indexesOnly`). `SET LOCAL` ends with the transaction, so the connection goes back to
 * the pool as it came, and the settings hold behind a pooler in transaction mode, unlike
 * connection options. A statement past `budgetMs` is cancelled by the database and rejects with
 * `BUSY` (the API answers 503 with `Retry-After`), as a SQLite read past its budget: a report
 * whose plan goes wrong, or whose range is too large, cannot hold a pooled connection (which
 * ingest shares) for as long as it runs.
 */
export function createPostgresReportRun(pool: () => pg.Pool, budgetMs = DEFAULT_REPORT_BUDGET_MS): RunQuery {
  const begin = ['BEGIN READ ONLY', ...REPORT_SETTINGS, `SET LOCAL statement_timeout = ${Math.floor(budgetMs)}`].join('; ');
  // The planner takes the partial index of the sessions that span days for the whole table (it
  // has no statistics of its predicate) and scans the table instead: 375 ms against 4 ms at 10M
  // events for a week's sessions report.
  const indexesOnly = `${begin}; SET LOCAL enable_seqscan = off`;
  return (sql, values, hints) =>
    inTransaction(pool(), hints?.indexesOnly === true ? indexesOnly : begin, async (client) => (await client.query<Record<string, unknown>>(sql, values)).rows).catch(
      (error: unknown) => {
        if ((error as { code?: unknown } | null)?.code !== QUERY_CANCELED) throw error;
        throw new StoreError('BUSY', `The database did not answer this read within its budget of ${budgetMs} ms; retry later.`, { cause: error });
      },
    );
}
