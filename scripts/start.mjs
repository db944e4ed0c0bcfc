#!/usr/bin/env node
// `npm start`: checks that the server's port is free, builds the packages and the example app
// unless nothing they are built from changed since the last build, then runs
// `service-analytics-server start --serve-example dist/example --demo` (SQLite in ./data).
//
// The port: SA_PORT (default 8787) on SA_HOST (default 127.0.0.1), as the CLI reads them. A port
// in use is reported at once, before a minute of building, with the variable that changes it.
// The build is skipped when every file git knows of in the repository (tracked, or new and not
// ignored) has the size and modification time it had at the end of the last build, and the
// build's outputs are there: a change to any source, config or the lockfile builds again.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const stampFile = join(root, 'node_modules', '.cache', 'start-build.stamp');
const outputs = ['packages/service-analytics-server/dist/cli.js', 'packages/service-analytics/dist/index.js', 'dist/example/index.html'];

/** Resolves when `port` on `host` can be listened on; rejects with the listen error otherwise. */
function portFree(port, host) {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => server.close(() => resolvePromise()));
  });
}

/** A fingerprint of every file git knows of (tracked, or untracked and not ignored); null without git. */
function sourcesFingerprint() {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) return null;
  const hash = createHash('sha256');
  for (const file of listed.stdout.split('\0').filter(Boolean).sort()) {
    let stat;
    try {
      stat = statSync(join(root, file));
    } catch {
      continue; // Deleted but not yet staged: its absence changes the list, not this line.
    }
    hash.update(`${file}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const port = Number(process.env.SA_PORT || 8787);
const host = process.env.SA_HOST || '127.0.0.1';
try {
  await portFree(port, host);
} catch (error) {
  const code = /** @type {{ code?: string }} */ (error).code;
  process.stderr.write(
    code === 'EADDRINUSE'
      ? `Port ${port} on ${host} is in use: stop what listens there, or start on another port: SA_PORT=${port + 1} npm start\n`
      : `Cannot listen on ${host}:${port} (${String(error)}): set SA_HOST and SA_PORT to an address this machine has.\n`,
  );
  process.exit(1);
}

const before = sourcesFingerprint();
const built = before !== null && outputs.every((file) => existsSync(join(root, file))) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === before;
if (built) {
  process.stdout.write('Nothing changed since the last build: starting it as it is.\n');
} else {
  run('npm', ['run', 'build']);
  run('npm', ['run', 'build:example']);
  // Taken after the build: the stamp describes the sources the outputs were built from only if
  // none changed meanwhile, and a build that writes inside the listed files shows up as a change.
  const after = sourcesFingerprint();
  if (after !== null && after === before) {
    mkdirSync(dirname(stampFile), { recursive: true });
    writeFileSync(stampFile, after);
  }
}

const server = spawn(process.execPath, [join(root, 'packages/service-analytics-server/dist/cli.js'), 'start', '--serve-example', 'dist/example', '--demo'], {
  cwd: root,
  stdio: 'inherit',
});
// Signals are passed on, and this process waits for the server to finish. Ctrl-C also reaches the
// server from the terminal itself (one process group); it takes the second as the first.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
