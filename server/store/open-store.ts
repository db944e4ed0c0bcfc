import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { AggregatesBuildListener } from './aggregates/aggregate-schema.js';
import { createClickHouseStore } from './clickhouse/clickhouse-store.js';
import { createHttpTransport } from './clickhouse/http-transport.js';
import type { Durability } from './durability.js';
import type { EventStore } from './event-store.js';
import { createPostgresStore } from './postgres/postgres-store.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /**
   * When an acknowledged write is safe on SQLite (`durability.ts`); PostgreSQL ignores it, its
   * commits being fsync'd already with `synchronous_commit` on. @default 'full'
   */
  durability?: Durability;
  /**
   * The time budget of one read, ms: on SQLite of every read (`sqlite/sqlite-reader.ts`), on
   * PostgreSQL of each read statement: reports, event list, sessions, recordings, export
   * (`postgres/postgres-read-run.ts`); past it the read is answered 503 with `Retry-After`. @default 15000
   */
  readBudgetMs?: number;
  /** SQLite: copy the database before a migration changes it. @default true */
  migrationBackup?: boolean;
  /** SQLite: told where that copy went. */
  onMigrationBackup?: (path: string, fromVersion: number) => void;
  /** Told when the open builds the report aggregates from the events, and when it is done. */
  onAggregatesBuild?: AggregatesBuildListener;
  /** Keep frequent filters' top lists ahead in the background (SQLite, PostgreSQL). @default true */
  keepFiltersAhead?: boolean;
  /** SQLite: how long the answer of a read refused past its budget is kept for its retry, ms; 0 keeps none and a retry runs it again. @default 60000 */
  keptAnswerMs?: number;
  /**
   * A ClickHouse server's HTTP address, `http[s]://[user:password@]host:8123[/database]`: events,
   * recordings and reports go to ClickHouse (the database in the path, else `service_analytics`,
   * created when missing), and `location` keeps projects, keys and salts (docs/decisions.md,
   * "ClickHouse"). @default none: everything in `location`
   */
  clickhouseUrl?: string;
}

/** The ClickHouse database named by the URL's path, and the URL without it (the client would take it as its default database, which must exist). */
function clickhouseTarget(url: string): { url: string; database: string | undefined } {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.replace(/^\/+|\/+$/g, ''));
  parsed.pathname = '/';
  return { url: parsed.toString(), database: database === '' ? undefined : database };
}

/** True when `location` names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location);
}

/**
 * Picks the store from one setting (`--db` / `DATABASE_URL`): a `postgres://` or `postgresql://`
 * URL opens PostgreSQL; anything else is a SQLite file path, whose directory is created when
 * missing (`:memory:` keeps everything in memory). With `clickhouseUrl`, that store keeps only the
 * configuration and the events go to ClickHouse. The store is not initialised yet: call
 * `await store.init()` before use, which creates the schema when needed.
 */
export function openStore(location: string, options: OpenStoreOptions = {}): EventStore {
  if (options.clickhouseUrl !== undefined) {
    const { clickhouseUrl, ...rest } = options;
    const target = clickhouseTarget(clickhouseUrl);
    return createClickHouseStore({
      transport: createHttpTransport({ url: target.url }),
      config: openStore(location, rest),
      ...(target.database === undefined ? {} : { database: target.database }),
    });
  }
  if (isPostgresUrl(location)) {
    return createPostgresStore({
      url: location,
      ...(options.readBudgetMs === undefined ? {} : { readBudgetMs: options.readBudgetMs }),
      ...(options.onAggregatesBuild === undefined ? {} : { onAggregatesBuild: options.onAggregatesBuild }),
      ...(options.keepFiltersAhead === undefined ? {} : { keepFiltersAhead: options.keepFiltersAhead }),
    });
  }
  if (location.trim() === '') throw new Error('The database location is empty: give a SQLite file path or a postgres:// URL.');
  if (location !== ':memory:') mkdirSync(dirname(resolve(location)), { recursive: true });
  return createSqliteStore({
    path: location,
    ...(options.durability === undefined ? {} : { durability: options.durability }),
    ...(options.readBudgetMs === undefined ? {} : { readBudgetMs: options.readBudgetMs }),
    ...(options.migrationBackup === undefined ? {} : { migrationBackup: options.migrationBackup }),
    ...(options.onMigrationBackup === undefined ? {} : { onMigrationBackup: options.onMigrationBackup }),
    ...(options.onAggregatesBuild === undefined ? {} : { onAggregatesBuild: options.onAggregatesBuild }),
    ...(options.keepFiltersAhead === undefined ? {} : { keepFiltersAhead: options.keepFiltersAhead }),
    ...(options.keptAnswerMs === undefined ? {} : { keptAnswerMs: options.keptAnswerMs }),
  });
}
