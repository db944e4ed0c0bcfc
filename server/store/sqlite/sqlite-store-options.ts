import type { AggregatesBuildListener } from '../aggregates/aggregate-schema.js';
import type { Durability } from '../durability.js';

/** Options of `createSqliteStore`. */
export interface SqliteStoreOptions {
  /** Database file, or `:memory:`. Its directory must exist (`openStore` creates it). */
  path: string;
  /**
   * How long a statement waits for another process's write lock before failing, ms.
   * @default 5000
   */
  busyTimeoutMs?: number;
  /**
   * Rows per transaction when an upgrade fills the report columns of existing events
   * (`report-backfill.ts`). @default 5000
   */
  backfillBatch?: number;
  /**
   * When an acknowledged write is safe (`durability.ts`): SQLite's `synchronous` on every
   * connection that writes events. @default 'full'
   */
  durability?: Durability;
  /**
   * The time budget of one read (reports, the read API, the export), ms: past it the read is
   * refused with `StoreError('BUSY')` and the server answers 503 with `Retry-After`, rather than
   * spend more of the machine on it (`sqlite-reader.ts`). @default 15000
   */
  readBudgetMs?: number;
  /**
   * Threads that read reports, the read API and the export, one read each at a time; scans (a
   * report read from the events of its whole range) take one of them at most. More keep more reads
   * waiting on the disk at once when the file is not in memory. @default 4
   */
  readThreads?: number;
  /**
   * How long the answer of a read refused past its budget is kept, once its thread has finished
   * it, for the same read asked again (a client's retry after `Retry-After`), ms; 0 keeps none and
   * a retry runs the read again (`sqlite-reader.ts`). @default 60000
   */
  keptAnswerMs?: number;
  /**
   * Keep the top lists of frequent filter values ahead in the background (docs/decisions.md,
   * "Filtered top lists"): off, nothing is read ahead, and a filter's first view of a day reads
   * its events (then keeps them). Minutes to hours of background reads after the first open of a
   * file of millions of events, on a machine that may rather spend them elsewhere. @default true
   */
  keepFiltersAhead?: boolean;
  /**
   * Build the daily rollups in the background (docs/decisions.md, "Daily rollups"): off, days stay
   * marked (and are read from their events) until `reports.refreshRollups()` builds them, and
   * nothing is kept ahead either. For a process beside another that builds them (on PostgreSQL,
   * several servers on one database need only one), or a test that decides when a day is built.
   * @default true
   */
  backgroundRollups?: boolean;
  /**
   * Copy the database beside itself (`<path>.before-v<version>-<time>`) before a migration changes
   * it, so that an upgrade that goes wrong can be undone with `restore`. @default true
   */
  migrationBackup?: boolean;
  /** Told where the copy before a migration went, and from which schema version. */
  onMigrationBackup?: (path: string, fromVersion: number) => void;
  /**
   * Told when the open starts building the report aggregates from the events (a database without
   * them, or with another shape: minutes for millions of events) and when it is done, with the
   * time it took: the server listens only after.
   */
  onAggregatesBuild?: AggregatesBuildListener;
}
