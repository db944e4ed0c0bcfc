import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type PostgresStoreOptions, createPostgresStore } from '../../server/store/postgres/postgres-store.js';
import { createSqliteStore } from '../../server/store/sqlite/sqlite-store.js';
import { createPostgresDayKeeps, createPostgresFilteredKeep, prepareSqliteFilteredKeep } from '../../server/store/reports/report-keep.js';
import { createSketchKit } from '../../server/store/aggregates/visitor-sketch.js';
import type { RollupLocation } from './rollup.contract.js';

/** Direct SQL on a SQLite file, `?` placeholders, booleans as 0 and 1 (as the store binds them). */
export async function sqliteSql(path: string, text: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const db = new Database(path);
  try {
    const statement = db.prepare(text);
    const bound = values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    return statement.reader ? (statement.all(...bound) as Array<Record<string, unknown>>) : (statement.run(...bound), []);
  } finally {
    db.close();
  }
}

/** Direct SQL on a PostgreSQL database, `?` placeholders turned into `$n`. */
export async function postgresSql(url: string, text: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), values)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

/** New SQLite files in a temporary directory, each a location; `remove` deletes them all. */
export function sqliteLocations(prefix: string): { next(): Promise<RollupLocation>; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let files = 0;
  return {
    async next() {
      const path = join(dir, `${++files}.db`);
      return {
        open: (options) => createSqliteStore({ path, backgroundRollups: options?.background }),
        sql: (text, values) => sqliteSql(path, text, values),
        async keep(k) {
          const db = new Database(path);
          try {
            return prepareSqliteFilteredKeep(db, createSketchKit())(k);
          } finally {
            db.close();
          }
        },
      };
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A PostgreSQL database as a location (stores with a small pool, and `options`). */
export function postgresLocation(url: string, options: Omit<PostgresStoreOptions, 'url'> = {}): RollupLocation {
  return {
    open: (openOptions) => createPostgresStore({ url, poolSize: 4, ...options, backgroundRollups: openOptions?.background ?? options.backgroundRollups }),
    sql: (text, values) => postgresSql(url, text, values),
    async keep(k) {
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        return await createPostgresFilteredKeep(createPostgresDayKeeps(pool))(k);
      } finally {
        await pool.end();
      }
    },
  };
}
