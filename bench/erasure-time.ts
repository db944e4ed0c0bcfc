// How long erasing one user takes on a database bench/generate-project.ts filled, through the
// store's own `deleteUser`, with no HTTP and nothing else running beside it:
//
//   node scripts/run-ts.mjs bench/erasure-time.ts --on=data/big.db [--users=3]
//   node scripts/run-ts.mjs bench/erasure-time.ts --on=postgres://…/big [--beside-refresh]
//
// It erases the users with the most events among those with none in the project's last two days
// (the generated ones: the reads bench's load writes now, under names like theirs), one after the
// other, the days each erasure marked built again before the next, and prints each one's time,
// events, hours and days. With --beside-refresh, each erasure after the first runs while those
// days are being built (the store's refresh started first; on PostgreSQL, timed once a day's
// build holds its claim), as when an administrator erases several users in a row. The database
// changes: those users are gone.
import { isPostgresUrl, openStore } from '../server/store/open-store.js';
import { existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const location = arg('on');
if (location === undefined) throw new Error('usage: bench/erasure-time.ts --on=PATH_OR_URL [--users=N]');
const count = Number(arg('users') ?? 3);
const besideRefresh = process.argv.includes('--beside-refresh');

const project = await existingProject(location);
const store = openStore(location, { keepFiltersAhead: false });
await store.init();
try {
  // A scan of the project's events: not timed.
  const users = await heaviestUsers(location, project.projectId, project.end - 2 * DAY_MS, count);
  for (const [i, user] of users.entries()) {
    const rebuild = async () => {
      while ((await store.reports.refreshRollups()) > 0);
    };
    // The days the erasure before marked: built again before it, or (--beside-refresh) beside it.
    const building = besideRefresh && i > 0 ? rebuild() : undefined;
    if (building === undefined) await rebuild();
    // A build that ended before one was seen holding its claim leaves the erasure alone.
    let built = false;
    void building?.then(() => (built = true)).catch(() => undefined);
    const beside = building !== undefined && (await buildHeld(location, project.projectId, () => built));
    const started = performance.now();
    const erased = await store.deleteUser(project.projectId, user.id);
    const ms = performance.now() - started;
    await building;
    console.log(`${user.id}: ${ms.toFixed(0)} ms${beside ? ' beside a refresh' : ''}, ${erased.events} events in ${user.hours} hours of ${user.days} days`);
  }
} finally {
  await store.close();
}

/** Whether a day's build was seen holding its claim (PostgreSQL: an advisory lock of the project's days) before `over()`; on SQLite, true after 200 ms. */
async function buildHeld(location: string, projectId: string, over: () => boolean): Promise<boolean> {
  if (!isPostgresUrl(location)) return new Promise((resolve) => setTimeout(() => resolve(true), 200));
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    while (!over()) {
      const held = await client.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid::bigint = hashtext('rollup:' || $1::text)::bigint & 4294967295`,
        [projectId],
      );
      if (held.rows.length > 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return false;
  } finally {
    await client.end();
  }
}

/** The `count` users with the most events and none from `before` on, with the hours and days they fall in. */
async function heaviestUsers(location: string, projectId: string, before: number, count: number): Promise<Array<{ id: string; hours: number; days: number }>> {
  const sql = (ph: (n: number) => string) =>
    `SELECT user_id, COUNT(DISTINCT timestamp / ${HOUR_MS}) AS hours, COUNT(DISTINCT timestamp / ${DAY_MS}) AS days FROM events
     WHERE project_id = ${ph(1)} AND user_id IS NOT NULL GROUP BY user_id HAVING MAX(timestamp) < ${ph(2)} ORDER BY COUNT(*) DESC, user_id LIMIT ${count}`;
  const toUser = (row: Record<string, unknown>) => ({ id: String(row.user_id), hours: Number(row.hours), days: Number(row.days) });
  if (isPostgresUrl(location)) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    try {
      return (await client.query(sql((n) => `$${n}`), [projectId, before])).rows.map(toUser);
    } finally {
      await client.end();
    }
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(location, { readonly: true });
  try {
    return (db.prepare(sql(() => '?')).all(projectId, before) as Array<Record<string, unknown>>).map(toUser);
  } finally {
    db.close();
  }
}
