// The store's erasure program timed alone, on the same users again and again: each erasure runs
// inside a transaction that is rolled back, so a database bench/generate-project.ts filled can be
// measured by two checkouts in turn on the same data (bench/erasure-time.ts erases for good, one
// user after another, through the store):
//
//   node scripts/run-ts.mjs bench/erasure-repeat.ts --on=data/big.db --users=user-1,user-2 [--rounds=6]
//   node scripts/run-ts.mjs bench/erasure-repeat.ts --on=postgres://…/big --users=user-1,user-2 [--hours=both] [--kept=both]
//
// It prints each user's first time (statements prepared, pages read from disk) and the median of
// the rest. The program is the one the store runs: on SQLite the writer thread's
// (`server/store/sqlite/sqlite-erasure.ts`), here on the main thread; on PostgreSQL the store's
// (`server/store/postgres/postgres-erasure.ts`). Nothing else writes meanwhile.
import Database from 'better-sqlite3';
import pg from 'pg';
import { isPostgresUrl } from '../server/store/open-store.js';
import { besideOn } from '../server/store/postgres/postgres-beside.js';
import { erasePostgresUserData } from '../server/store/postgres/postgres-erasure.js';
import { findHllExtension, hllKeyRegisterSql } from '../server/store/postgres/postgres-hll.js';
import { SQLITE_AGGREGATE_PARTS, openSqliteAggregates } from '../server/store/sqlite/sqlite-aggregates.js';
import { prepareSqliteUserErasure, sqliteErasureSql } from '../server/store/sqlite/sqlite-erasure.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const location = arg('on');
const users = arg('users')?.split(',') ?? [];
const rounds = Number(arg('rounds') ?? 6);
/** PostgreSQL: how an erasure's hour rows are made again (`registers` needs the `hll` extension). */
const hours = arg('hours') ?? 'registers';
if (hours !== 'registers' && hours !== 'whole' && hours !== 'both') throw new Error('--hours is registers, whole or both');
/** PostgreSQL: where the rows reports kept of the user's days are deleted (`beside` on a second connection, as the store does). */
const kept = arg('kept') ?? 'beside';
if (kept !== 'beside' && kept !== 'inline' && kept !== 'both') throw new Error('--kept is beside, inline or both');
if (location === undefined || users.length === 0) throw new Error('usage: bench/erasure-repeat.ts --on=PATH_OR_URL --users=USER[,USER…] [--rounds=N]');

/** A user's project and how much of it they hold: not timed. */
interface Owner {
  project_id: string;
  n: number;
  hours: number;
}

const OWNER_SQL = (ph: (n: number) => string) =>
  `SELECT project_id, COUNT(*) AS n, COUNT(DISTINCT timestamp / 3600000) AS hours FROM events WHERE user_id = ${ph(1)} GROUP BY project_id`;

/** One erasure of `user` in a transaction rolled back; its time in ms. */
type EraseOnce = (owner: Owner, user: string) => Promise<number>;

async function timeAll(owners: ReadonlyArray<Owner | undefined>, once: EraseOnce): Promise<void> {
  const times = users.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, user] of users.entries()) {
      const owner = owners[i];
      if (owner === undefined) throw new Error(`${user}: no events`);
      times[i]?.push(await once(owner, user));
    }
  }
  users.forEach((user, i) => {
    const [first, ...rest] = times[i] as number[];
    const sorted = [...rest].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(`${user} (${owners[i]?.n} events in ${owners[i]?.hours} hours): first ${first?.toFixed(0)} ms, median of the next ${rest.length} ${median?.toFixed(0) ?? '—'} ms [${(times[i] as number[]).map((ms) => ms.toFixed(0)).join(' ')}]`);
  });
}

if (isPostgresUrl(location)) {
  // Two connections: the erasure's, and the one beside it for the kept rows.
  const pool = new pg.Pool({ connectionString: location, max: 2 });
  try {
    const owners = await Promise.all(users.map(async (user) => {
      const row = (await pool.query<{ project_id: string; n: string; hours: string }>(OWNER_SQL((n) => `$${n}`), [user])).rows[0];
      return row === undefined ? undefined : { project_id: row.project_id, n: Number(row.n), hours: Number(row.hours) };
    }));
    const hll = await findHllExtension(pool);
    const client = await pool.connect();
    try {
      // Hour rows patched at the erased keys' registers (the store's way where the database has
      // `hll`) and built from whole hours (its way without); the kept rows deleted beside the
      // erasure (the store's way) and in it: each way asked for, one after the other in one run.
      for (const way of hours === 'both' ? (['registers', 'whole'] as const) : [hours]) {
        for (const keptWay of kept === 'both' ? (['beside', 'inline'] as const) : [kept]) {
          const keyRegister = way === 'registers' && hll !== null ? hllKeyRegisterSql(hll) : null;
          // Rolled back as the erasure is, so the next round finds the same rows.
          const beside = keptWay === 'beside' ? besideOn(pool, 'ROLLBACK') : null;
          if (hours === 'both' || kept === 'both') {
            console.log(`hour rows ${keyRegister === null ? 'built from whole hours' : "patched at the erased keys' registers"}, kept rows deleted ${keptWay === 'beside' ? 'beside' : 'in the erasure'}:`);
          }
          await timeAll(owners, async (owner, user) => {
            await client.query('BEGIN');
            try {
              const started = performance.now();
              await erasePostgresUserData(client, owner.project_id, user, keyRegister, beside);
              return performance.now() - started;
            } finally {
              await client.query('ROLLBACK');
            }
          });
        }
      }
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
} else {
  const db = new Database(location);
  db.pragma('journal_mode = WAL');
  try {
    const owners = users.map((user) => db.prepare(OWNER_SQL(() => '?')).get(user) as Owner | undefined);
    const aggregates = openSqliteAggregates(db, SQLITE_AGGREGATE_PARTS);
    const erase = prepareSqliteUserErasure(db, aggregates, sqliteErasureSql());
    await timeAll(owners, async (owner, user) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const started = performance.now();
        erase(owner.project_id, user);
        return performance.now() - started;
      } finally {
        db.exec('ROLLBACK');
      }
    });
  } finally {
    db.close();
  }
}
