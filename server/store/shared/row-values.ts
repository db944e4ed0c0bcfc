/*
 * Reading the values of report rows as the drivers return them, and ordering values as the
 * stores order them: shared by the aggregate reads, the rollup reads, the filtered top lists and
 * ClickHouse's reports.
 */

/** A count or number of a row; SQL's null (an empty sum) is 0. PostgreSQL returns bigints as text. */
export const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/** A number column that may be null: null, or its number. */
export const numOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/** Stored sketch bytes as the driver returns them (a Buffer, a Uint8Array), or null (empty). */
export const bytesOf = (value: unknown): Uint8Array | null => (value instanceof Uint8Array ? value : null);

/** Compares in UTF-8 byte order, as the stores order values. */
export const byteCompare = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
