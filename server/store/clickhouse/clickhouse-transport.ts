/*
 * The one seam of the ClickHouse store: everything it says to ClickHouse goes through a
 * {@link ClickHouseTransport}. Two implement it: `http-transport.ts` (the official
 * `@clickhouse/client` over HTTP, what a server runs) and `chdb-transport.ts` (chDB, ClickHouse's
 * engine in this process, what the tests run). The store's SQL is the same text on both; only how
 * the text and the rows travel differs.
 */

/** A value bound to a `{name:Type}` placeholder, formatted by the transport for its type. */
export type ParamValue = string | number | boolean | null | readonly string[];

/** The values of a statement's `{name:Type}` placeholders, by name. */
export type Params = Readonly<Record<string, ParamValue>>;

/** ClickHouse settings for one statement, by name (`async_insert`, `join_use_nulls`, …). */
export type Settings = Readonly<Record<string, string | number | boolean>>;

/** One row of a result, by column name, as ClickHouse's `JSONEachRow` gives it. */
export type Row = Record<string, unknown>;

/** What the store needs from a connection to ClickHouse. */
export interface ClickHouseTransport {
  /** Runs a `SELECT` and resolves with its rows (`JSONEachRow`, 64-bit integers as numbers). */
  query(sql: string, params?: Params, settings?: Settings): Promise<Row[]>;
  /** Runs a statement that returns no rows (DDL, `ALTER`, `DELETE`); resolves once ClickHouse answered. */
  command(sql: string, params?: Params, settings?: Settings): Promise<void>;
  /**
   * Inserts rows into `table` (database-qualified) as one `INSERT … FORMAT JSONEachRow`, and
   * resolves only after ClickHouse answered that it wrote them (never fire-and-forget).
   */
  insert(table: string, rows: readonly Row[], settings?: Settings): Promise<void>;
  /** Releases the connection. */
  close(): Promise<void>;
}

/**
 * Settings of every read: 64-bit integers as JSON numbers (times in ms and counts stay well inside
 * 2^53), the same on every server whatever its profile says.
 */
export const READ_SETTINGS: Settings = { output_format_json_quote_64bit_integers: 0 };

/**
 * Settings of every insert. Synchronous (`async_insert = 0`): the server's write queue already
 * gathers every request that arrived meanwhile into one group commit, which is one INSERT here, so
 * ClickHouse's own buffering of small inserts would only add its flush delay to every answer.
 * ClickHouse answers a synchronous insert after the part is written; `fsync_after_insert` on the
 * tables (`clickhouse-schema.ts`) makes that written to disk. `max_partitions_per_insert_block = 0`:
 * a group with late events may span many months, each its own part.
 */
export const INSERT_SETTINGS: Settings = { async_insert: 0, max_partitions_per_insert_block: 0 };
