import { createPostgresStore } from '../../server/store/postgres/postgres-store.js';
import { createSqliteStore } from '../../server/store/sqlite/sqlite-store.js';

/*
 * The child process of the killed-upgrade tests (`upgrade-killed.test.ts` of each store): opens a
 * store with the current code, which migrates the database and builds its derived tables, then
 * closes it. It prints `opening` before `init()` so that the test can time its SIGKILL from the
 * moment the upgrade's work starts rather than from node's start-up, and `opened` once it is done.
 *
 *   node open-store.mjs sqlite <path>
 *   node open-store.mjs postgres <url>
 */

const [kind, location] = process.argv.slice(2);
if ((kind !== 'sqlite' && kind !== 'postgres') || location === undefined) {
  process.stderr.write('usage: open-store.mjs sqlite <path> | postgres <url>\n');
  process.exit(2);
}
const store = kind === 'sqlite' ? createSqliteStore({ path: location }) : createPostgresStore({ url: location, poolSize: 2 });
process.stdout.write('opening\n');
await store.init();
process.stdout.write('opened\n');
await store.close();
