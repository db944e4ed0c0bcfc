// ClickHouse for the benches: chDB, ClickHouse's engine inside the bench's process (the `chdb`
// development package, as the tests run it: test-support/store/clickhouse-chdb.ts), named by a
// location `chdb:DIRECTORY` beside the SQLite paths and postgres:// URLs the benches already take.
// The directory holds chDB's data and a SQLite file per database for the configuration (projects,
// keys, salts), which the ClickHouse store keeps outside ClickHouse (docs/decisions.md, "ClickHouse").
//
// libchdb binds one data directory per process, so a bench process opens one session, on the first
// chDB location it meets, and refuses a second directory; stores on that directory differ by
// database (`service_analytics` unless a bench names another).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Session } from 'chdb';
import { createChdbTransport } from '../server/store/clickhouse/chdb-transport.js';
import { createClickHouseStore } from '../server/store/clickhouse/clickhouse-store.js';
import { type ClickHouseTables, tablesOf } from '../server/store/clickhouse/clickhouse-schema.js';
import type { ClickHouseTransport } from '../server/store/clickhouse/clickhouse-transport.js';
import type { Durability } from '../server/store/durability.js';
import type { EventStore } from '../server/store/event-store.js';
import { openStore } from '../server/store/open-store.js';
import { createSqliteStore } from '../server/store/sqlite/sqlite-store.js';

const PREFIX = 'chdb:';

/** The database of a ClickHouse store on chDB unless a bench names another (the store's own default). */
export const CHDB_DATABASE = 'service_analytics';

/** True when `location` names a chDB directory (`chdb:DIRECTORY`). */
export function isChdbLocation(location: string): boolean {
  return location.startsWith(PREFIX);
}

/** The directory of a `chdb:` location, absolute. */
export function chdbDirectory(location: string): string {
  const dir = location.slice(PREFIX.length);
  if (dir.trim() === '') throw new Error('A chDB location is chdb:DIRECTORY (a directory for its data).');
  return resolve(dir);
}

let opened: { directory: string; session: Session; transport: ClickHouseTransport } | null = null;

/** The process's chDB transport on the directory of `location` (opened on first use). */
export function chdbTransport(location: string): ClickHouseTransport {
  const directory = chdbDirectory(location);
  if (opened === null) {
    mkdirSync(directory, { recursive: true });
    const session = new Session(join(directory, 'chdb'));
    opened = { directory, session, transport: createChdbTransport({ session }) };
  } else if (opened.directory !== directory) {
    throw new Error(`chDB binds one data directory per process: ${opened.directory} is open, ${directory} cannot be (run the bench again for it).`);
  }
  return opened.transport;
}

/** The tables of the store on `database` of a chDB location. */
export function chdbTables(database = CHDB_DATABASE): ClickHouseTables {
  return tablesOf(database);
}

/** Options of {@link openBenchStore}. */
export interface BenchStoreOptions {
  /** SQLite's durability, as for `openStore`; the others ignore it. */
  durability?: Durability;
  /** The ClickHouse database, for a chDB location. @default {@link CHDB_DATABASE} */
  database?: string;
}

/**
 * A store for a bench: `openStore` for a SQLite path or a postgres:// URL; for `chdb:DIRECTORY`
 * the ClickHouse store on chDB, its configuration in `DIRECTORY/config-<database>.db`. Not
 * initialised yet, as from `openStore`.
 */
export function openBenchStore(location: string, options: BenchStoreOptions = {}): EventStore {
  if (!isChdbLocation(location)) return openStore(location, options.durability === undefined ? {} : { durability: options.durability });
  const database = options.database ?? CHDB_DATABASE;
  const transport = chdbTransport(location);
  return createClickHouseStore({
    transport,
    config: createSqliteStore({ path: join(chdbDirectory(location), `config-${database}.db`) }),
    database,
  });
}

/** Active parts and rows of a table of a chDB location (what `FINAL` has to merge at read time). */
export async function activeParts(location: string, table: string, database = CHDB_DATABASE): Promise<{ parts: number; rows: number; bytes: number }> {
  const [row] = await chdbTransport(location).query(
    'SELECT count() AS parts, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = {db:String} AND table = {table:String} AND active',
    { db: database, table },
  );
  return { parts: Number(row?.parts ?? 0), rows: Number(row?.rows ?? 0), bytes: Number(row?.bytes ?? 0) };
}
