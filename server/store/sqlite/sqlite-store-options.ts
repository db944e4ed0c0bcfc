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
}
