// The SQLite erasure program timed alone, on the same users again and again: each erasure runs
// inside a transaction that is rolled back, so a file bench/generate-project.ts filled can be
// measured by two checkouts in turn on the same data (bench/erasure-time.ts erases for good, one
// user after another, through the store):
//
//   node scripts/run-ts.mjs bench/erasure-repeat.ts --on=data/big.db --users=user-1,user-2 [--rounds=6]
//
// It prints each user's first time (statements prepared, pages read from disk) and the median of
// the rest. The program is the one the writer thread runs (`server/store/sqlite/sqlite-erasure.ts`),
// here on the main thread, with nothing else writing.
import Database from 'better-sqlite3';
import { SQLITE_AGGREGATE_PARTS, openSqliteAggregates } from '../server/store/sqlite/sqlite-aggregates.js';
import { prepareSqliteUserErasure, sqliteErasureSql } from '../server/store/sqlite/sqlite-erasure.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const file = arg('on');
const users = arg('users')?.split(',') ?? [];
const rounds = Number(arg('rounds') ?? 6);
if (file === undefined || users.length === 0) throw new Error('usage: bench/erasure-repeat.ts --on=FILE --users=USER[,USER…] [--rounds=N]');

const db = new Database(file);
db.pragma('journal_mode = WAL');
try {
  const owners = users.map((user) => db.prepare('SELECT project_id, COUNT(*) AS n, COUNT(DISTINCT timestamp / 3600000) AS hours FROM events WHERE user_id = ? GROUP BY project_id').get(user) as { project_id: string; n: number; hours: number } | undefined);
  const aggregates = openSqliteAggregates(db, SQLITE_AGGREGATE_PARTS);
  const erase = prepareSqliteUserErasure(db, aggregates, sqliteErasureSql());
  const times = users.map((): number[] => []);
  for (let round = 0; round < rounds; round++) {
    users.forEach((user, i) => {
      const owner = owners[i];
      if (owner === undefined) throw new Error(`${user}: no events`);
      db.exec('BEGIN IMMEDIATE');
      try {
        const started = performance.now();
        erase(owner.project_id, user);
        times[i]?.push(performance.now() - started);
      } finally {
        db.exec('ROLLBACK');
      }
    });
  }
  users.forEach((user, i) => {
    const [first, ...rest] = times[i] as number[];
    const sorted = [...rest].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    console.log(`${user} (${owners[i]?.n} events in ${owners[i]?.hours} hours): first ${first?.toFixed(0)} ms, median of the next ${rest.length} ${median?.toFixed(0) ?? '—'} ms [${(times[i] as number[]).map((ms) => ms.toFixed(0)).join(' ')}]`);
  });
} finally {
  db.close();
}
