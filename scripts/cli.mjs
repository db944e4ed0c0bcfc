#!/usr/bin/env node
// `npm run cli -- <command> [options]`: the `service-analytics-server` command in this repository,
// where npm links no command for the workspace's own packages (`npx service-analytics-server`
// works where the package was installed from the registry). Runs the built CLI, or says how to
// build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../packages/service-analytics-server/dist/cli.js', import.meta.url);
if (existsSync(fileURLToPath(cli))) {
  await import(cli.href);
} else {
  process.stderr.write('The server is not built yet: run `npm start` once (or `npm run build:server`), then `npm run cli -- …` again.\n');
  process.exitCode = 1;
}
