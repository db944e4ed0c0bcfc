import { timeBound } from '../shared/cursor.js';
import type { ClickHouseTables } from './clickhouse-schema.js';
import type { ClickHouseTransport } from './clickhouse-transport.js';

/*
 * Retention on ClickHouse (docs/decisions.md, "Retention" and "ClickHouse"): the tables are
 * partitioned by UTC month (`clickhouse-schema.ts`), so every month wholly before the cut-off is
 * dropped as a partition (a file operation, no rewrite), and only the rows of the month the
 * cut-off falls in are deleted row by row (a lightweight DELETE, which masks them; merges drop
 * them later). The counts are taken before, with FINAL, so that a copy not merged yet is not
 * counted twice. An event written during the call with a time before the cut-off (a late event of
 * a month being dropped) is deleted without being counted.
 */

/** The start of the UTC month after partition `yyyymm`, ms; null for a partition id of another form. */
function partitionEnd(partition: string): number | null {
  const match = /^(\d{4})(\d{2})$/.exec(partition);
  if (match === null) return null;
  return Date.UTC(Number(match[1]), Number(match[2]), 1);
}

/**
 * Deletes the rows of `table` whose `column` (epoch ms) is before `cutoff`; resolves with how many
 * there were. `name` is the table's own name in `system.parts`.
 */
async function cutTable(transport: ClickHouseTransport, tables: ClickHouseTables, table: string, name: string, column: string, cutoff: number): Promise<number> {
  const bound = { cutoff: timeBound(cutoff) };
  const [counted] = await transport.query(`SELECT count() AS n FROM ${table} FINAL WHERE ${column} < {cutoff:Int64}`, bound);
  const count = Number(counted?.n ?? 0);
  if (count === 0) return 0;
  const parts = await transport.query('SELECT DISTINCT partition_id FROM system.parts WHERE database = {db:String} AND table = {table:String} AND active', {
    db: tables.database,
    table: name,
  });
  for (const row of parts) {
    const id = String(row.partition_id);
    const end = partitionEnd(id);
    // The id is six digits (checked by partitionEnd): safe as a literal, which DDL needs.
    if (end !== null && end <= cutoff) await transport.command(`ALTER TABLE ${table} DROP PARTITION ID '${id}'`);
  }
  // What the drops left before the cut-off: rows of the month it falls in.
  const [left] = await transport.query(`SELECT count() AS n FROM ${table} WHERE ${column} < {cutoff:Int64}`, bound);
  if (Number(left?.n ?? 0) > 0) await transport.command(`DELETE FROM ${table} WHERE ${column} < {cutoff:Int64}`, bound);
  return count;
}

/** Deletes events older than `cutoff` by their time and recording chunks by their arrival; resolves with the counts. */
export async function deleteClickHouseOlderThan(transport: ClickHouseTransport, tables: ClickHouseTables, cutoff: number): Promise<{ events: number; chunks: number }> {
  // The dedupe index first: an event whose id is gone from it but still stored would be stored
  // again when resent; an id left after its event, answered "existed", would lose a resend.
  await cutTable(transport, tables, tables.eventIds, 'event_ids', 'timestamp', cutoff);
  const events = await cutTable(transport, tables, tables.events, 'events', 'timestamp', cutoff);
  const chunks = await cutTable(transport, tables, tables.chunks, 'recording_chunks', 'received_at', cutoff);
  return { events, chunks };
}
