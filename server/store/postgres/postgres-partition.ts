import type { Pool, PoolClient } from 'pg';

/*
 * PostgreSQL's `events` is partitioned by day (schema version 6, docs/decisions.md, "PostgreSQL
 * partitions"), and so is `recording_chunks` (version 7), by the day of the session id. The day is not the event's `timestamp`, which the server may correct by a skew
 * measured anew on every request, so that a resent event could land in another day than its first
 * copy: it is the day of the time inside the event id, `id_day`. The client's ids are UUIDv7, whose
 * first 48 bits are the milliseconds of their making, so the day is a function of the id alone and
 * the unique key (project_id, event_id, id_day) dedupes exactly like (project_id, event_id) did.
 *
 * Ids that are not UUIDv7 (the wire accepts any string, docs/protocol.md) get day 0 and live in the
 * default partition, as do events of any day that has no partition of its own: a UUIDv7 made by a
 * clock far off, or one made up. Partitions are made for the days around today only (ahead of time
 * and on demand), so made-up ids cannot make a process create thousands of tables. Retention drops
 * a day's partition whole once every row in it is past the cut-off.
 */

const DAY_MS = 86_400_000;

/** Days after today whose partitions exist ahead of time. */
export const DAYS_AHEAD = 2;
/** Days before today whose partitions a write still creates on demand (late events, catch-up). */
export const DAYS_BACK = 31;

/** A table partitioned by the day of a UUIDv7 id: its name, its partitions' and its retention time. */
export interface PartitionedTable {
  table: 'events' | 'recording_chunks';
  /** Day partitions are named this and the date, e.g. `events_p20261125`. */
  prefix: string;
  /** The partition that holds ids that are not UUIDv7 and days without a partition of their own. */
  defaultPartition: string;
  /** The column retention compares with its cut-off. */
  timeColumn: 'timestamp' | 'received_at';
}

/** `events`, by the day of `event_id`. */
export const EVENT_PARTITIONS: PartitionedTable = { table: 'events', prefix: 'events_p', defaultPartition: 'events_default', timeColumn: 'timestamp' };

/**
 * `recording_chunks`, by the day of `session_id`: the chunks of one session share a partition, so a
 * replay is kept or dropped whole, and retention compares the time a chunk was received, as it did
 * before partitions.
 */
export const RECORDING_PARTITIONS: PartitionedTable = {
  table: 'recording_chunks',
  prefix: 'recordings_p',
  defaultPartition: 'recordings_default',
  timeColumn: 'received_at',
};

/** The default partition of `events`. */
export const DEFAULT_PARTITION = EVENT_PARTITIONS.defaultPartition;

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/**
 * The partition day of an event id: days since 1970-01-01 (UTC) of a UUIDv7's time, 0 for any other
 * id. The SQL function {@link ID_DAY_FUNCTION} computes the same for rows written by SQL.
 */
export function idDay(eventId: string): number {
  if (eventId.length !== 36 || !UUID_V7.test(eventId)) return 0;
  return Math.floor(parseInt(eventId.slice(0, 8) + eventId.slice(9, 13), 16) / DAY_MS);
}

/**
 * `service_analytics_id_day(event_id)`, the SQL twin of {@link idDay}: the migration to version 6
 * gives existing rows their day with it, and anyone inserting rows by hand must set `id_day` to it.
 */
export const ID_DAY_FUNCTION = `
CREATE OR REPLACE FUNCTION service_analytics_id_day(event_id TEXT) RETURNS INTEGER
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN length(event_id) = 36 AND event_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
    THEN floor(('x' || lpad(substr(event_id, 1, 8) || substr(event_id, 10, 4), 16, '0'))::bit(64)::bigint / 86400000.0)::int
    ELSE 0 END
$$;`;

/** The table name of a day's partition: the prefix and the date, e.g. `events_p20261125`. */
export function partitionName(day: number, of: PartitionedTable = EVENT_PARTITIONS): string {
  return `${of.prefix}${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The day of a partition name made by {@link partitionName}, or null for any other table. */
export function partitionDay(name: string, of: PartitionedTable = EVENT_PARTITIONS): number | null {
  if (!name.startsWith(of.prefix)) return null;
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(name.slice(of.prefix.length));
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(ms) ? null : ms / DAY_MS;
}

/** Statement creating a day's partition; a no-op when it exists. */
export function createPartitionSql(day: number, of: PartitionedTable = EVENT_PARTITIONS): string {
  return `CREATE TABLE IF NOT EXISTS ${partitionName(day, of)} PARTITION OF ${of.table} FOR VALUES FROM (${day}) TO (${day + 1})`;
}

/** The partitions of a table as they are now. */
export function listPartitionsSql(of: PartitionedTable = EVENT_PARTITIONS): string {
  return `
SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = '${of.table}'::regclass`;
}

/** Serialises partition changes between processes (creation on demand, retention's drops). */
const PARTITION_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('service-analytics:partitions'))";

/** SQLSTATE of a check violation: the default partition already holds rows of the day. */
const CHECK_VIOLATION = '23514';

/** Options of {@link createPartitionManager}. */
export interface PartitionManagerOptions {
  /** The clock, ms. @default Date.now */
  now?: () => number;
  /** @default EVENT_PARTITIONS */
  table?: PartitionedTable;
}

/** Keeps the day partitions of one table that writes need. */
export interface PartitionManager {
  /**
   * Makes sure the partitions of the days of `days` that lie around today exist (and those of
   * today and the next {@link DAYS_AHEAD} days). Other days go to the default partition, so a write
   * never fails for want of a partition.
   */
  ensure(days: Iterable<number>): Promise<void>;
  /** Forgets what it knew, e.g. after retention dropped partitions. */
  forget(): void;
}

/** Creates the partition keeper of one store (one process). */
export function createPartitionManager(pool: Pool, options: PartitionManagerOptions = {}): PartitionManager {
  const now = options.now ?? Date.now;
  const of = options.table ?? EVENT_PARTITIONS;
  /** Days known to have a partition, or to stay in the default partition. */
  let known: Set<number> | null = null;

  const load = async (): Promise<Set<number>> => {
    const days = new Set<number>();
    for (const row of (await pool.query<{ name: string }>(listPartitionsSql(of))).rows) {
      const day = partitionDay(row.name, of);
      if (day !== null) days.add(day);
    }
    return days;
  };

  const create = async (missing: number[]): Promise<void> => {
    const client: PoolClient = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(PARTITION_LOCK_SQL);
      for (const day of missing) {
        await client.query('SAVEPOINT partition');
        try {
          await client.query(createPartitionSql(day, of));
          await client.query('RELEASE SAVEPOINT partition');
        } catch (error) {
          // The default partition holds rows of that day (ids whose clock ran ahead): the day stays
          // there, as a partition of its own would have to take them over first.
          if ((error as { code?: unknown }).code !== CHECK_VIOLATION) throw error;
          await client.query('ROLLBACK TO SAVEPOINT partition');
        }
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  };

  return {
    async ensure(days) {
      const set = (known ??= await load());
      const today = Math.floor(now() / DAY_MS);
      const missing = new Set<number>();
      for (let day = today; day <= today + DAYS_AHEAD; day++) if (!set.has(day)) missing.add(day);
      for (const day of days) if (day >= today - DAYS_BACK && day <= today + DAYS_AHEAD && !set.has(day)) missing.add(day);
      if (missing.size === 0) return;
      const sorted = [...missing].sort((a, b) => a - b);
      await create(sorted);
      for (const day of sorted) set.add(day);
    },
    forget() {
      known = null;
    },
  };
}

/** Options of {@link dropExpiredPartitions}. */
export interface DropOptions {
  /** @default EVENT_PARTITIONS */
  table?: PartitionedTable;
  /**
   * Runs in the transaction that drops `partition`, before the drop: a DROP fires no DELETE
   * trigger, so whatever follows deleted rows (e.g. marking the days a rollup must recompute) is
   * done here, from the partition's rows.
   * @default nothing
   */
  beforeDrop?: (client: PoolClient, partition: string) => Promise<void>;
}

/** What {@link dropExpiredPartitions} did. */
export interface DroppedPartitions {
  /** Partitions dropped whole. */
  partitions: number;
  /** Rows they held. */
  rows: number;
}

/**
 * Drops every day partition whose day ended before `cutoff` and that holds no row at or after it
 * in the table's time column (an event's `timestamp` can lie after its id's day: a client clock
 * corrected by skew, or a `timestamp` set apart from the id; a session's chunks keep arriving for
 * as long as it lasts). A partition that does hold such a row is kept; the row delete that follows
 * (the store's prune) takes its older rows.
 */
export async function dropExpiredPartitions(pool: Pool, cutoff: number, options: DropOptions = {}): Promise<DroppedPartitions> {
  const of = options.table ?? EVENT_PARTITIONS;
  const expired = (await pool.query<{ name: string }>(listPartitionsSql(of))).rows
    .map((row) => ({ name: row.name, day: partitionDay(row.name, of) }))
    .filter((p): p is { name: string; day: number } => p.day !== null && (p.day + 1) * DAY_MS <= cutoff)
    .sort((a, b) => a.day - b.day);
  let partitions = 0;
  let dropped = 0;
  for (const { name } of expired) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(PARTITION_LOCK_SQL);
      // No write may land between the count and the drop: a row stored meanwhile would be dropped
      // unseen (an event of an old id whose corrected time is after the cut-off, acknowledged).
      // First in the transaction also for the marks `beforeDrop` writes: a rollup refresh reading
      // the events holds a share of this table and may wait for the marks' lock, so taking them
      // the other way round could deadlock.
      await client.query(`LOCK TABLE ${name} IN ACCESS EXCLUSIVE MODE`);
      // One scan counts what goes and looks for a row to keep; far cheaper than deleting rows.
      const { rows } = await client.query<{ n: number; kept: number }>(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE ${of.timeColumn} >= $1)::int AS kept FROM ${name}`,
        [cutoff],
      );
      const found = rows[0] ?? { n: 0, kept: 0 };
      if (found.kept === 0) {
        await options.beforeDrop?.(client, name);
        await client.query(`DROP TABLE ${name}`);
        partitions++;
        dropped += found.n;
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      // Dropped meanwhile by another process's retention: nothing left to do for it.
      if ((error as { code?: unknown }).code !== '42P01') throw error;
    } finally {
      client.release();
    }
  }
  return { partitions, rows: dropped };
}
