import { CLICKHOUSE_MIGRATIONS, CLICKHOUSE_SCHEMA_VERSION, type ClickHouseTables, schemaBaseStatements } from './clickhouse-schema.js';
import type { ClickHouseTransport } from './clickhouse-transport.js';

/** The schema version of the database: 0 for a new one. */
export async function schemaVersionOf(transport: ClickHouseTransport, tables: ClickHouseTables): Promise<number> {
  const [row] = await transport.query(`SELECT max(version) AS version FROM ${tables.schemaVersion}`);
  return Number(row?.version ?? 0);
}

/**
 * Brings the database to `target` (the current version unless a test asks for an older one): makes
 * the database and the version table when missing, then runs each step after the stored version,
 * recording each once its statements ran (`clickhouse-schema.ts` says why that is safe without a
 * lock). Rejects, changing nothing, a database of a version newer than this server knows.
 */
export async function migrateClickHouse(transport: ClickHouseTransport, tables: ClickHouseTables, target = CLICKHOUSE_SCHEMA_VERSION): Promise<void> {
  for (const statement of schemaBaseStatements(tables)) await transport.command(statement);
  const version = await schemaVersionOf(transport, tables);
  if (version > CLICKHOUSE_SCHEMA_VERSION) {
    throw new Error(`The ClickHouse database has schema version ${version}; this server knows up to ${CLICKHOUSE_SCHEMA_VERSION}. Upgrade the server.`);
  }
  for (let next = version + 1; next <= target; next++) {
    const step = CLICKHOUSE_MIGRATIONS[next];
    if (step === undefined) throw new Error(`No migration to ClickHouse schema version ${next}.`);
    for (const statement of step(tables)) await transport.command(statement);
    await transport.insert(tables.schemaVersion, [{ version: next }]);
  }
}
