import type Database from 'better-sqlite3';
import type pg from 'pg';
import type { SketchKit } from './visitor-sketch.js';

/*
 * Estimates kept beside the sketches a series reads one row per point (docs/decisions.md,
 * "Aggregates at ingest", kept estimates). A series over 31 days by hour reads 744 rows, each point one row's visitors and
 * sessions; estimating their sketches was most of its time, and it grew with the traffic (sketches
 * hold more registers as an hour holds more visitors: 5.1× from one to thirty million events).
 * With the estimate kept, such a point reads two numbers and no sketch.
 *
 * A kept estimate is never stale. On SQLite a row's sketches change in place only by an upsert (a
 * group commit's, and an erasure's day and week rows; retention and the builds delete rows and
 * insert new ones, without estimates), and a trigger (`SQLITE_ESTIMATES_TRIGGER`) clears the row's estimates whenever one
 * of its sketches is set, whatever wrote it (a process of an older version too). On PostgreSQL a
 * row is a part whose sketches never change under its number (`postgres-aggregates.ts`: an
 * erasure that patches a part's sketches gives it a new number and drops their estimates): a
 * part's estimates hold for as long as it exists. A series reads a kept estimate only where the row is
 * its point's only one (`aggregate-queries.ts`), and hands the store the estimates it computed for
 * closed hours and days whose rows had none.
 */

/** The estimate column kept beside each sketch column a series reads. */
export const ESTIMATE_COLUMNS = {
  visitors: 'visitors_estimate',
  visitor_hashes: 'visitor_hashes_estimate',
  sessions: 'sessions_estimate',
} as const;

/** Rows of one value's series whose estimates a read computed: the store keeps them beside the rows' sketches. */
export interface EstimatesKeep {
  projectId: string;
  dim: string;
  value: string;
  grain: number;
  /** The read's visitor sketch column (`visitors` or `visitor_hashes`). */
  visitorColumn: 'visitors' | 'visitor_hashes';
  /**
   * Per row (its bot flag false): its bucket, its part on PostgreSQL (null on SQLite), its counts
   * as the read saw them, and the estimates of its visitor and session sketches.
   */
  rows: ReadonlyArray<{ bucket: number; part: number | null; events: number; pageViews: number; visitors: number; sessions: number }>;
}

/** Keeps a read's estimates; resolves to how many rows got them. */
export type KeepEstimates = (keep: EstimatesKeep) => Promise<number>;

/**
 * The trigger that clears a SQLite row's kept estimates when a sketch of it is set (the group
 * commit's upsert); its condition passes over the rows that have none, the common case (an hour
 * still being written).
 */
const SQLITE_ESTIMATES_TRIGGER = `
CREATE TRIGGER IF NOT EXISTS agg_values_estimates_stale AFTER UPDATE OF visitors, visitor_hashes, sessions ON agg_values
WHEN NEW.visitors_estimate IS NOT NULL OR NEW.visitor_hashes_estimate IS NOT NULL OR NEW.sessions_estimate IS NOT NULL
BEGIN
  UPDATE agg_values SET visitors_estimate = NULL, visitor_hashes_estimate = NULL, sessions_estimate = NULL WHERE rowid = NEW.rowid;
END;`;

/** Adds the estimate columns to a SQLite `agg_values` without them, and the trigger that keeps them true; idempotent. */
export function ensureSqliteEstimateColumns(db: Database.Database): void {
  const have = new Set(db.prepare("SELECT name FROM pragma_table_info('agg_values')").pluck().all() as string[]);
  for (const column of Object.values(ESTIMATE_COLUMNS)) if (!have.has(column)) db.exec(`ALTER TABLE agg_values ADD COLUMN ${column} INTEGER`);
  db.exec(SQLITE_ESTIMATES_TRIGGER);
}

/**
 * Adds the estimate columns to a PostgreSQL `agg_values` without them, in the caller's transaction
 * (which holds the schema lock); the table is locked only when they are missing.
 */
export async function ensurePostgresEstimateColumns(client: pg.PoolClient): Promise<void> {
  const found = await client.query(
    "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'agg_values' AND column_name = 'sessions_estimate'",
  );
  if (found.rows.length > 0) return;
  await client.query(`ALTER TABLE agg_values ${Object.values(ESTIMATE_COLUMNS).map((c) => `ADD COLUMN IF NOT EXISTS ${c} BIGINT`).join(', ')}`);
}

/**
 * The SQLite keep on connection `db`: each row's estimates computed again from its sketches as
 * they are when written, in one statement per row under the write lock, since a row may have
 * changed since the read (the read's numbers are not used). It runs on the rollup thread
 * (`sqlite/rollup-sqlite-thread.ts`), which receives it as source text, so it must stay
 * self-contained (`kit` is the sketch code, made there from its own text).
 */
export function prepareSqliteEstimatesKeep(db: Database.Database, kit: SketchKit): (keep: EstimatesKeep) => number {
  db.function('sa_sketch_estimate', { deterministic: true }, (bytes: unknown): number => kit.estimateSketchBytes(bytes as Uint8Array | null));
  const fill = db.prepare(
    `UPDATE agg_values SET visitors_estimate = sa_sketch_estimate(visitors), visitor_hashes_estimate = sa_sketch_estimate(visitor_hashes),
       sessions_estimate = sa_sketch_estimate(sessions)
     WHERE project_id = ? AND dim = ? AND grain = ? AND bucket = ? AND value = ? AND is_bot = 0 AND sessions_estimate IS NULL`,
  );
  return db.transaction((k: EstimatesKeep): number => {
    let kept = 0;
    for (const row of k.rows) kept += fill.run(k.projectId, k.dim, k.grain, row.bucket, k.value).changes;
    return kept;
  });
}

/**
 * The PostgreSQL keep: the read's estimates written to the parts it read, in one statement. A
 * part's sketches never change under its number, so its estimates are the read's; a part merged away since is gone,
 * and nothing is written for it. A part is matched by its number and what the read saw of it (its
 * key and counts), since numbers start again at 1 when a process of another shape builds the table
 * anew; and its row is taken only if no one holds it (a keep may always give up, so it never waits
 * for an erasure or a compaction, nor takes its locks in an order that could deadlock with them).
 */
export function createPostgresEstimatesKeep(pool: pg.Pool): KeepEstimates {
  return async (k) => {
    const rows = k.rows.filter((row) => row.part !== null);
    if (rows.length === 0) return 0;
    const visitors = ESTIMATE_COLUMNS[k.visitorColumn];
    const result = await pool.query(
      `WITH k AS (SELECT * FROM unnest($6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[])
                    AS k(part, bucket, events, page_views, visitors, sessions)),
            l AS (SELECT a.part FROM agg_values a JOIN k ON a.part = k.part
                  WHERE a.project_id = $1 AND a.dim = $2 AND a.grain = $3 AND a.value = $4 AND a.is_bot = $5
                    AND a.bucket = k.bucket AND a.events = k.events AND a.page_views = k.page_views
                  ORDER BY a.part FOR UPDATE OF a SKIP LOCKED)
       UPDATE agg_values a SET ${visitors} = k.visitors, ${ESTIMATE_COLUMNS.sessions} = k.sessions FROM k JOIN l ON l.part = k.part WHERE a.part = k.part`,
      [
        k.projectId,
        k.dim,
        k.grain,
        k.value,
        false,
        rows.map((row) => row.part),
        rows.map((row) => row.bucket),
        rows.map((row) => row.events),
        rows.map((row) => row.pageViews),
        rows.map((row) => row.visitors),
        rows.map((row) => row.sessions),
      ],
    );
    return result.rowCount ?? 0;
  };
}
