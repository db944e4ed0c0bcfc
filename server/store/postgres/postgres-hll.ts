import type pg from 'pg';
import type { SketchUnionSql } from '../aggregates/aggregate-queries.js';
import type { SketchOfSql } from '../reports/filtered-tops.js';
import { SKETCH_REGISTERS } from '../aggregates/visitor-sketch.js';

/*
 * PostgreSQL's `hll` extension (postgresql-hll; Debian's `postgresql-15-hll`), where the server has
 * it: the report aggregates' sketches are stored in its format (`aggregates/visitor-sketch.ts`), so
 * the database can merge a report's rows itself (`hll_union_agg`) and send one sketch per group
 * instead of every row's. Node estimates the merged sketch as it estimates its own merges, so the
 * answers are the same with and without the extension (docs/decisions.md, "Aggregates at ingest").
 */

/** SQLSTATEs of a `CREATE EXTENSION` this role may not run, or that another process ran first. */
const CANNOT_CREATE = new Set(['42501', '23505', '42710']);

/**
 * The schema the `hll` extension is installed in for this database, creating it first when the
 * server has it and this role may (a superuser, or the database's owner on a server that trusts
 * it); null when the database has none and cannot get it.
 */
export async function findHllExtension(pool: pg.Pool): Promise<string | null> {
  const installed = async (): Promise<string | null> => {
    const { rows } = await pool.query<{ schema: string }>(
      "SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'hll'",
    );
    return rows[0]?.schema ?? null;
  };
  const schema = await installed();
  if (schema !== null) return schema;
  const { rows } = await pool.query("SELECT 1 FROM pg_available_extensions WHERE name = 'hll'");
  if (rows.length === 0) return null;
  try {
    await pool.query('CREATE EXTENSION IF NOT EXISTS hll');
  } catch (error) {
    if (!CANNOT_CREATE.has((error as { code?: string }).code ?? '')) throw error;
  }
  return installed();
}

/** Quotes an identifier for SQL text. */
const identifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/*
 * A sketch goes back to bytes through `hll_send`, the type's binary output, which is its stored
 * form as is: the text form (`\x` and the bytes in hex, decoded again) cost more than the union
 * itself (an erasure's day rows at 10M events: 200 ms against 75).
 */

/**
 * The sketch of a text key column's values by the extension, as stored bytes: its hash of text is
 * `hashKey`'s, and these parameters are the stored format's (`visitor-sketch.ts`), so the bytes are
 * those `VisitorSketch` makes of the same keys.
 */
export function hllSketchOfSql(schema: string): SketchOfSql {
  const s = identifier(schema);
  return (key) => `${s}.hll_send(${s}.hll_add_agg(${s}.hll_hash_text(${key}), 14, 5, 256, 1))`;
}

/** The union of a sketch column's stored bytes by the extension, as bytes again: its type reads a `bytea` as is. */
export function hllUnionSql(schema: string): SketchUnionSql {
  const s = identifier(schema);
  return (column) => `${s}.hll_send(${s}.hll_union_agg(CAST(${column} AS ${s}.hll)))`;
}

/** The register a text key's hash sets, as SQL over the key's expression: `registerOfKey` of the sketch kit (null for a null key). */
export type KeyRegisterSql = (key: string) => string;

/**
 * {@link KeyRegisterSql} by the extension: its `hll_hash_text` is the kit's `hashKey`, whose low
 * bits are the register. The hash value has no cast to `bigint` but through its text form.
 */
export function hllKeyRegisterSql(schema: string): KeyRegisterSql {
  const s = identifier(schema);
  return (key) => `(${s}.hll_hash_text(${key})::text::bigint & ${SKETCH_REGISTERS - 1})::int`;
}

/**
 * {@link hllKeyRegisterSql} where the extension hashes a key's bytes as the kit does: a database
 * whose encoding is not UTF-8 hashes other bytes for a key past ASCII, and an erasure that read
 * the events at the wrong registers would store patched rows without keys that are left. Null
 * there: its hours are then built from all their events.
 */
export async function hllKeyRegister(pool: pg.Pool, schema: string): Promise<KeyRegisterSql | null> {
  const { rows } = await pool.query<{ encoding: string }>("SELECT current_setting('server_encoding') AS encoding");
  return rows[0]?.encoding === 'UTF8' ? hllKeyRegisterSql(schema) : null;
}
