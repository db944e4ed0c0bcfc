import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'chdb';
import { createChdbTransport } from '../../server/store/clickhouse/chdb-transport.js';
import { createClickHouseStore, type ClickHouseStoreOptions } from '../../server/store/clickhouse/clickhouse-store.js';
import type { ClickHouseTransport } from '../../server/store/clickhouse/clickhouse-transport.js';
import type { EventStore } from '../../server/store/event-store.js';
import { createSqliteStore } from '../../server/store/sqlite/sqlite-store.js';

/*
 * ClickHouse for the tests: chDB, the ClickHouse engine inside this process (the `chdb` package).
 * libchdb binds one data directory per process and cannot move to another while a statement runs,
 * so every test file of a process shares one session (kept on `globalThis`, which outlives a
 * module registry that a reused worker resets), and each store gets a database of its own, as
 * each PostgreSQL test file gets its own database. A test worker is often ended without running
 * its exit handlers, so the directories live under one parent, named by process id, and each new
 * one removes those of processes that are gone.
 */

const PARENT = join(tmpdir(), 'service-analytics-chdb');

/** True while process `pid` runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** A directory for this process's chDB data, after removing those of processes that are gone. */
function scratchDirectory(): string {
  mkdirSync(PARENT, { recursive: true });
  for (const name of readdirSync(PARENT)) {
    const pid = Number(/^pid-(\d+)$/.exec(name)?.[1]);
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) rmSync(join(PARENT, name), { recursive: true, force: true });
  }
  const dir = join(PARENT, `pid-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  return dir;
}

const KEY = Symbol.for('service-analytics.test.chdb');

interface Shared {
  session: Session;
  transport: ClickHouseTransport;
  scratch: string;
  databases: number;
}

/** The process's chDB session and a transport over it. */
export function chdb(): Shared {
  const holder = globalThis as { [KEY]?: Shared };
  let shared = holder[KEY];
  if (shared === undefined) {
    const scratch = scratchDirectory();
    const session = new Session(join(scratch, 'chdb'));
    shared = { session, transport: createChdbTransport({ session }), scratch, databases: 0 };
    holder[KEY] = shared;
    process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
  }
  return shared;
}

/** A database name no store of this process used yet. */
export function newClickHouseDatabase(): string {
  const shared = chdb();
  return `sa_test_${process.pid}_${++shared.databases}`;
}

/** A new SQLite file for a ClickHouse store's configuration (projects, keys, salts). */
export function newConfigStore(): EventStore {
  const shared = chdb();
  return createSqliteStore({ path: join(shared.scratch, `config-${++shared.databases}.db`) });
}

/**
 * A new, uninitialised ClickHouse store on chDB: a fresh database (unless `database` names one
 * already used, to reopen it) and a fresh SQLite file for its configuration (unless `config` is given).
 */
export function chdbStore(options: Partial<Omit<ClickHouseStoreOptions, 'transport'>> = {}): EventStore {
  return createClickHouseStore({
    transport: chdb().transport,
    config: options.config ?? newConfigStore(),
    database: options.database ?? newClickHouseDatabase(),
    ...(options.schemaVersion === undefined ? {} : { schemaVersion: options.schemaVersion }),
  });
}
