#!/usr/bin/env node
// Writes the upgrade fixtures: for each SQLite and PostgreSQL schema version the server has had, a
// database made by the version that introduced it, kept as a text dump in
// test-support/upgrades/fixtures/ (sqlite3's `.dump`; `pg_dump --inserts`), with what that version
// answered about it beside the dump. server/upgrade-fixtures.test.ts loads each dump into a fresh
// database, opens it with the current server (the upgrade runs) and compares.
//
//   node scripts/schema-fixtures.mjs                    every version of both stores
//   node scripts/schema-fixtures.mjs sqlite 4 9         only these versions of one store
//
// For each version: the commit that introduced it (the first one whose schema file says
// `SQLITE_SCHEMA_VERSION = N` or `POSTGRES_SCHEMA_VERSION = N`) is exported with `git archive` into
// a temporary folder (the repository's own checkout is left alone), its CLI bundled with esbuild
// (npm packages from this checkout's node_modules), and run as a user runs it: `project create`,
// `start`, one batch of events and one recording through the HTTP API, the read API and (from
// version 5, which has them) the reports read back, SIGTERM, then `sqlite3 FILE .dump` (and the
// schema version, `PRAGMA user_version`, which `.dump` leaves out) or `pg_dump --inserts` of a
// database of its own on a PostgreSQL server this script starts for the run
// (test-support/postgres-server.ts).
//
// The versions before 6 read bodies with koa-bodyparser, which this checkout no longer installs;
// for them a reader of plain-text bodies stands in for it (the script sends nothing else: no
// compression, no beacon form), which changes nothing the database holds.
//
// Needs git, the sqlite3 command line tool, PostgreSQL's server binaries and pg_dump, and `npm
// install` done.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'test-support', 'upgrades', 'fixtures');

/** The name of each store's schema version constant. */
const VERSION_CONSTANT = { sqlite: 'SQLITE_SCHEMA_VERSION', postgres: 'POSTGRES_SCHEMA_VERSION' };

/** The first commit whose schema file of `kind` declares version `n`. */
function commitOfVersion(kind, n) {
  const found = execFileSync('git', ['log', '--reverse', '--format=%H', '-S', `${VERSION_CONSTANT[kind]} = ${n};`, '--', 'server'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
  return found[0];
}

/** The events every fixture holds: three visitors' sessions on a shop, ten minutes before `now`. */
function fixtureEvents(now) {
  const base = Math.floor((now - 600_000) / 1000) * 1000;
  const ua = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
  const page = (path, referrer = '') => JSON.stringify({ url: `https://shop.example${path}`, path, referrer, title: path, search: '' });
  let n = 0;
  const event = (session, type, offset, properties, userId) => ({
    // A UUIDv7 shape with a fixed tail: the time prefix is the event's, the counter keeps them apart.
    event_id: `${base.toString(16).padStart(12, '0').replace(/^(.{8})(.{4})$/, '$1-$2')}-7000-8000-${String(++n).padStart(12, '0')}`,
    event_type: type,
    session_id: `fixture-session-${session}`,
    ...(userId ? { user_id: userId } : {}),
    timestamp: new Date(base + offset).toISOString(),
    user_agent: ua,
    properties: { anonymous_id: `fixture-anon-${session}`, ...properties },
  });
  return {
    base,
    events: [
      event(1, 'page_view', 0, { page: page('/', 'https://news.example/item') }),
      event(1, 'page_view', 10_000, { page: page('/pricing', 'https://shop.example/') }),
      event(1, 'signup', 20_000, { page: page('/pricing'), plan: 'pro' }, 'fixture-user-1'),
      event(2, 'page_view', 30_000, { page: page('/') }),
      event(2, 'error', 40_000, { page: page('/'), message: 'TypeError: price is undefined', stack: 'at total (app.js:10:5)' }),
      event(2, 'performance', 45_000, { page: page('/'), largestContentfulPaint: 1800, firstContentfulPaint: 900, cumulativeLayoutShift: 0.02 }),
      event(3, 'page_view', 60_000, { page: page('/pricing', 'https://www.google.com/') }),
      event(3, 'purchase', 70_000, { page: page('/pricing'), amount: 10, currency: 'eur' }, 'fixture-user-3'),
    ],
    recording: {
      session: 'fixture-session-1',
      events: [
        { type: 4, data: { href: 'https://shop.example/', width: 1024, height: 640 }, timestamp: base },
        { type: 3, data: { source: 1, positions: [{ x: 40, y: 100, id: 5, timeOffset: 0 }] }, timestamp: base + 500 },
      ],
    },
  };
}

/** Runs the CLI to completion; resolves with its stdout. */
function runCli(cli, args, cwd) {
  return execFileSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Starts `start` on an ephemeral port; resolves with the process and its address. */
function startServer(cli, dbArgs, cwd) {
  const child = spawn(process.execPath, [cli, 'start', ...dbArgs, '--port', '0', '--host', '127.0.0.1'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${log}`)), 60_000);
    const read = (chunk) => {
      log += chunk.toString();
      const match = /"msg":"listening","address":"([^"]+)"/.exec(log);
      if (match) {
        clearTimeout(timer);
        resolvePromise({ child, url: match[1] });
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${log}`)));
  });
}

async function request(url, method, key, projectId, body) {
  const res = await fetch(url, {
    method,
    headers: { authorization: `ApiKey ${key}`, 'x-project-id': projectId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${method} ${url} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** Bundles the commit's CLI; koa-bodyparser, where the commit uses it, becomes a text body reader. */
async function bundleCli(dir) {
  const shim = join(dir, 'body-reader-shim.mjs');
  writeFileSync(
    shim,
    `export default function bodyParser() {
  return async (ctx, next) => {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    ctx.request.body = Buffer.concat(chunks).toString('utf8');
    await next();
  };
}
`,
  );
  const outfile = join(dir, 'cli.mjs');
  await build({
    entryPoints: [join(dir, 'server', 'cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
    plugins: [{ name: 'body-reader', setup: (b) => b.onResolve({ filter: /^koa-bodyparser$/ }, () => ({ path: shim })) }],
  });
  return outfile;
}

/**
 * A PostgreSQL server for the run, started the way the tests start theirs; its module is bundled
 * first, being TypeScript.
 */
async function startPostgresForRun(dir) {
  const outfile = join(dir, 'postgres-server.mjs');
  await build({ entryPoints: [join(ROOT, 'test-support', 'postgres-server.ts')], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const { startPostgres, findPostgresBinDir } = await import(pathToFileURL(outfile).href);
  const server = await startPostgres();
  const binDir = findPostgresBinDir();
  return { server, pgDump: existsSync(join(binDir, 'pg_dump')) ? join(binDir, 'pg_dump') : 'pg_dump' };
}

/** A new, empty database on the run's PostgreSQL server; returns its URL. */
async function createDatabase(postgres, name) {
  const { default: pg } = await import(pathToFileURL(join(ROOT, 'node_modules', 'pg', 'lib', 'index.js')).href);
  const client = new pg.Client({ connectionString: postgres.server.url });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(postgres.server.url);
  url.pathname = `/${name}`;
  return url.toString();
}

async function makeFixture(kind, version, postgres) {
  const commit = commitOfVersion(kind, version);
  if (commit === undefined) throw new Error(`no commit declares ${VERSION_CONSTANT[kind]} = ${version}`);
  const dir = mkdtempSync(join(tmpdir(), `sa-schema-${kind}-v${version}-`));
  try {
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: ROOT });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const cli = await bundleCli(dir);
    const db = kind === 'sqlite' ? join(dir, 'data', 'analytics.db') : await createDatabase(postgres, `fixture_v${version}`);
    // The flag every version takes for its database: --db for a file, --database-url for PostgreSQL.
    const dbArgs = kind === 'sqlite' ? ['--db', db] : ['--database-url', db];
    const created = JSON.parse(runCli(cli, ['project', 'create', '--name', `Schema ${version}`, '--json', ...dbArgs], dir));
    const writeKey = created.writeKey ?? created.apiKey;
    const { base, events, recording } = fixtureEvents(Date.now());
    const server = await startServer(cli, dbArgs, dir);
    let answers;
    try {
      const batch = await request(`${server.url}/api/v1/events/batch`, 'POST', writeKey, created.projectId, events);
      await request(`${server.url}/api/v1/sessions/${recording.session}/recordings`, 'POST', writeKey, created.projectId, {
        events: recording.events,
        duration: 0.5,
        start_url: 'https://shop.example/',
        is_final: true,
        event_offset: 0,
      });
      const read = (path) => request(`${server.url}/api/v1/${path}`, 'GET', created.readKey, created.projectId);
      const day = 86_400_000;
      const from = new Date(Math.floor(base / day) * day - day).toISOString();
      const to = new Date(Math.floor(base / day) * day + 2 * day).toISOString();
      const range = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
      const hasReports = version >= 5;
      answers = {
        batch,
        events: (await read('events?limit=100')).events,
        sessions: (await read('sessions')).sessions,
        recording: await read(`sessions/${recording.session}/recording`),
        range: { from, to },
        reports: hasReports
          ? { timeseries: await read(`reports/timeseries?${range}&interval=day`), topPages: await read(`reports/top/page?${range}`), sessions: await read(`reports/sessions?${range}`) }
          : null,
      };
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((r) => server.child.once('exit', r));
    }
    let dump;
    if (kind === 'sqlite') {
      // `.dump` leaves out PRAGMA user_version, where the server keeps the schema version: without
      // it, a loaded dump would look like a database the server never made.
      const userVersion = execFileSync('sqlite3', [db, 'PRAGMA user_version;'], { encoding: 'utf8' }).trim();
      dump = `${execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })}PRAGMA user_version=${userVersion};\n`;
    } else {
      // A fixed key for psql's \restrict lines (random by default), so that the same rows dumped
      // again give the same text.
      const restrictKey = execFileSync(postgres.pgDump, ['--help'], { encoding: 'utf8' }).includes('--restrict-key') ? ['--restrict-key=schemafixture'] : [];
      dump = execFileSync(postgres.pgDump, ['--inserts', '--no-owner', '--no-privileges', ...restrictKey, db], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    }
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, `${kind}-v${version}.sql`), dump);
    const expected = { kind, schemaVersion: version, commit, project: { id: created.projectId, readKey: created.readKey, writeKey }, sent: events.length, ...answers };
    writeFileSync(join(OUT, `${kind}-v${version}.expected.json`), `${JSON.stringify(expected, null, 2)}\n`);
    process.stdout.write(`${kind} schema ${version}: ${commit.slice(0, 10)}, ${answers.events.length} events, dump ${dump.length} bytes\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The schema version of `kind` at this checkout's HEAD. */
function currentVersion(kind) {
  const text = execFileSync('git', ['grep', '-h', `${VERSION_CONSTANT[kind]} = `, 'HEAD', '--', 'server'], { cwd: ROOT, encoding: 'utf8' });
  return Number(new RegExp(`${VERSION_CONSTANT[kind]} = (\\d+);`).exec(text)?.[1]);
}

const [askedKind, ...askedVersions] = process.argv.slice(2);
const kinds = askedKind === undefined ? ['sqlite', 'postgres'] : [askedKind];
if (!kinds.every((kind) => kind in VERSION_CONSTANT)) {
  process.stderr.write('usage: node scripts/schema-fixtures.mjs [sqlite|postgres [VERSION…]]\n');
  process.exit(2);
}
const runDir = mkdtempSync(join(tmpdir(), 'sa-schema-fixtures-'));
let postgres;
try {
  if (kinds.includes('postgres')) postgres = await startPostgresForRun(runDir);
  for (const kind of kinds) {
    const versions = askedVersions.length > 0 ? askedVersions.map(Number) : Array.from({ length: currentVersion(kind) }, (_, i) => i + 1);
    for (const version of versions) await makeFixture(kind, version, postgres);
  }
} finally {
  await postgres?.server.stop();
  rmSync(runDir, { recursive: true, force: true });
}
