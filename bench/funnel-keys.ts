// Would sessions as integers of the key dictionary make the funnel cheaper? On a SQLite database
// that `bench/generate-project.ts` filled and the panel bench rolled up, the last 30 days of
// `rollup_steps` are copied into a side database twice, once as they are (text sessions) and once
// with each session replaced by its id in `rollup_keys`; the panel bench's 4-step funnel statement
// (its `rollup_steps` part, which is all of it over whole clean days) then runs on both,
// alternated, and the CPU time of each run is printed (docs/decisions.md, "Daily rollups").
//
//   node scripts/run-ts.mjs bench/funnel-keys.ts data/big.db [runs]
//
// The side database is written next to the given one (`<path>.funnel-keys.db`) and removed after.
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import Database from 'better-sqlite3';
import { existingProject } from './panel-bench.js';

const DAY_MS = 86_400_000;
const path = process.argv[2];
if (path === undefined) throw new Error('usage: funnel-keys.ts <sqlite path> [runs]');
const runs = Number(process.argv[3] ?? 6);
const project = await existingProject(path);
const last = project.end / DAY_MS;
const side = `${path}.funnel-keys.db`;
rmSync(side, { force: true });
const db = new Database(side);
try {
  db.pragma('cache_size = -32000');
  db.prepare('ATTACH ? AS src').run(path);
  const columns = (session: string) => `project_id TEXT NOT NULL, day INTEGER NOT NULL, kind INTEGER NOT NULL, value TEXT NOT NULL, event_id TEXT NOT NULL,
    is_bot INTEGER NOT NULL, session_id ${session} NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (project_id, day, kind, value, event_id)`;
  db.exec(`CREATE TABLE steps_text (${columns('TEXT')}) WITHOUT ROWID; CREATE TABLE steps_int (${columns('INTEGER')}) WITHOUT ROWID`);
  const range = [project.projectId, last - 30, last] as const;
  db.prepare('INSERT INTO steps_text SELECT * FROM src.rollup_steps WHERE project_id = ? AND day >= ? AND day < ? ORDER BY 1, 2, 3, 4, 5').run(...range);
  db.prepare(
    `INSERT INTO steps_int SELECT s.project_id, s.day, s.kind, s.value, s.event_id, s.is_bot, k.id, s.ts
     FROM steps_text s JOIN src.rollup_keys k ON k.project_id = s.project_id AND k.key = s.session_id ORDER BY 1, 2, 3, 4, 5`,
  ).run();
  const steps: Array<[number, string]> = [[0, '/'], [0, '/signup'], [2, 'signup_started'], [2, 'signup_completed']];
  const mask = steps.map(([kind, value], k) => `CASE WHEN kind = ${kind} AND value = '${value}' THEN ${2 ** k} ELSE 0 END`).join(' + ');
  const funnel = (table: string) =>
    db.prepare(`WITH m AS MATERIALIZED (SELECT session_id, ts AS timestamp, event_id, ${mask} AS mask FROM ${table}
       WHERE project_id = ? AND day >= ? AND day < ? AND (kind, value) IN (VALUES ${steps.map(([kind, value]) => `(${kind}, '${value}')`).join(', ')}) AND is_bot = 0)
     SELECT masks, COUNT(*) AS sessions FROM (SELECT group_concat(mask, ',' ORDER BY timestamp, event_id) AS masks FROM m GROUP BY session_id) GROUP BY masks ORDER BY masks`);
  const variants = [
    ['text sessions', funnel('steps_text')],
    ['integer sessions', funnel('steps_int')],
  ] as const;
  const cpu = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  const answers = variants.map(([, statement]) => JSON.stringify(statement.all(...range)));
  if (answers[0] !== answers[1]) throw new Error('the two funnels differ');
  for (let i = 0; i < runs; i++) {
    for (const [name, statement] of i % 2 === 0 ? variants : [...variants].reverse()) {
      const c0 = process.cpuUsage();
      statement.all(...range);
      const c = process.cpuUsage(c0);
      cpu.get(name)?.push((c.user + c.system) / 1000);
    }
  }
  const rows = (db.prepare('SELECT COUNT(*) FROM steps_text WHERE project_id = ? AND day >= ? AND day < ?').pluck().get(...range) as number).toLocaleString('en');
  console.log(`30-day 4-step funnel over ${rows} step rows, CPU ms per run (alternated), load average ${loadavg()[0]?.toFixed(1)} at the end:`);
  for (const [name, values] of cpu) console.log(`  ${name}: ${values.map((v) => v.toFixed(0)).join(' · ')} (median ${[...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]?.toFixed(0)})`);
} finally {
  db.close();
  rmSync(side, { force: true });
}
