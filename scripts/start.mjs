#!/usr/bin/env node
// `npm start [-- options of service-analytics-server start]`: checks that the server's port is
// free, builds what changed since the last start (the server, the dashboard, the client, the
// example app: scripts/build-plan.mjs), then runs
// `service-analytics-server start --serve-example dist/example --demo [options]` (SQLite in ./data).
//
// The port is --port, else SA_PORT, else 8787, on --host, else SA_HOST, else 127.0.0.1, as the
// CLI reads them. A port in use is reported at once, before any building, with the flag and the
// variable that change it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { BUILDS, ROOT, runBuilds } from './build-plan.mjs';

/** Resolves when `port` on `host` can be listened on; rejects with the listen error otherwise. */
function portFree(port, host) {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => server.close(() => resolvePromise()));
  });
}

/** The value of `--name V` or `--name=V` in `args`, the last one winning as in the CLI. */
function option(args, name) {
  let value;
  args.forEach((arg, i) => {
    if (arg === name) value = args[i + 1];
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
  });
  return value;
}

const args = process.argv.slice(2);
const port = Number(option(args, '--port') ?? (process.env.SA_PORT || 8787));
const host = option(args, '--host') ?? (process.env.SA_HOST || '127.0.0.1');
try {
  await portFree(port, host);
} catch (error) {
  const code = /** @type {{ code?: string }} */ (error).code;
  process.stderr.write(
    code === 'EADDRINUSE'
      ? `Port ${port} on ${host} is in use: stop what listens there, or start on another port: npm start -- --port ${port + 1} (or SA_PORT=${port + 1} npm start).\n`
      : `Cannot listen on ${host}:${port} (${String(error)}): choose an address this machine has: npm start -- --host ADDRESS --port N (or SA_HOST, SA_PORT).\n`,
  );
  process.exit(1);
}

runBuilds(ROOT, BUILDS);

const server = spawn(process.execPath, [join(ROOT, 'packages/service-analytics-server/dist/cli.js'), 'start', '--serve-example', 'dist/example', '--demo', ...args], {
  cwd: ROOT,
  stdio: 'inherit',
});
// Signals are passed on, and this process waits for the server to finish. Ctrl-C also reaches the
// server from the terminal itself (one process group); it takes the second as the first.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
