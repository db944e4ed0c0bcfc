#!/usr/bin/env node
// Writes the upgrade fixtures: for each SQLite schema version the server has had, a database made
// by the version that introduced it, kept as a text dump (sqlite3's `.dump`) in
// test-support/upgrades/fixtures/, with what that version answered about it beside the dump.
// server/upgrade-fixtures.test.ts loads each dump into a fresh file, opens it with the current
// server (the upgrade runs) and compares.
//
//   node scripts/schema-fixtures.mjs              every version
//   node scripts/schema-fixtures.mjs 4 9          only these versions
//
// For each version: the commit that introduced it (the first one whose
// server/…/sqlite-schema.ts says `SQLITE_SCHEMA_VERSION = N`) is exported with `git archive` into
// a temporary folder (the repository's own checkout is left alone), its CLI bundled with esbuild
// (npm packages from this checkout's node_modules), and run as a user runs it: `project create`,
// `start`, one batch of events and one recording through the HTTP API, the read API and (from
// version 5, which has them) the reports read back, SIGTERM, then `sqlite3 FILE .dump` (and the
// schema version, `PRAGMA user_version`, which `.dump` leaves out).
//
// The versions before 6 read bodies with koa-bodyparser, which this checkout no longer installs;
// for them a reader of plain-text bodies stands in for it (the script sends nothing else: no
// compression, no beacon form), which changes nothing the database holds.
//
// Needs git, the sqlite3 command line tool, and `npm install` done.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'test-support', 'upgrades', 'fixtures');

/** The first commit whose SQLite schema file declares version `n`. */
function commitOfVersion(n) {
  const found = execFileSync('git', ['log', '--reverse', '--format=%H', '-S', `SQLITE_SCHEMA_VERSION = ${n};`, '--', 'server'], { cwd: ROOT, encoding: 'utf8' })
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
function startServer(cli, db, cwd) {
  const child = spawn(process.execPath, [cli, 'start', '--db', db, '--port', '0', '--host', '127.0.0.1'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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

async function makeFixture(version) {
  const commit = commitOfVersion(version);
  if (commit === undefined) throw new Error(`no commit declares SQLite schema version ${version}`);
  const dir = mkdtempSync(join(tmpdir(), `sa-schema-v${version}-`));
  try {
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: ROOT });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const cli = await bundleCli(dir);
    const db = join(dir, 'data', 'analytics.db');
    const created = JSON.parse(runCli(cli, ['project', 'create', '--name', `Schema ${version}`, '--json', '--db', db], dir));
    const writeKey = created.writeKey ?? created.apiKey;
    const { base, events, recording } = fixtureEvents(Date.now());
    const server = await startServer(cli, db, dir);
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
    // `.dump` leaves out PRAGMA user_version, where the server keeps the schema version: without
    // it, a loaded dump would look like a database the server never made.
    const userVersion = execFileSync('sqlite3', [db, 'PRAGMA user_version;'], { encoding: 'utf8' }).trim();
    const dump = `${execFileSync('sqlite3', [db, '.dump'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })}PRAGMA user_version=${userVersion};\n`;
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, `sqlite-v${version}.sql`), dump);
    const expected = { schemaVersion: version, commit, project: { id: created.projectId, readKey: created.readKey, writeKey }, sent: events.length, ...answers };
    writeFileSync(join(OUT, `sqlite-v${version}.expected.json`), `${JSON.stringify(expected, null, 2)}\n`);
    process.stdout.write(`schema ${version}: ${commit.slice(0, 10)}, ${answers.events.length} events, dump ${dump.length} bytes\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const current = Number(/SQLITE_SCHEMA_VERSION = (\d+);/.exec(execFileSync('git', ['grep', '-h', 'SQLITE_SCHEMA_VERSION = ', 'HEAD', '--', 'server'], { cwd: ROOT, encoding: 'utf8' }))?.[1]);
const asked = process.argv.slice(2).map(Number);
const versions = asked.length > 0 ? asked : Array.from({ length: current }, (_, i) => i + 1);
for (const version of versions) await makeFixture(version);
