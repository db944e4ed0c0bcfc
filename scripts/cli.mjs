#!/usr/bin/env node
// The `service-analytics-server` command in a clone of this repository: the root package's `bin`,
// so `npx service-analytics-server …` works after `npm install` (npm links no command of a
// workspace package whose file does not exist yet, and the server package's is built). Runs the
// built CLI, building the server and the dashboard first when they have not been built yet (their
// progress on stderr; stdout stays the command's answer). `npm start` rebuilds what changed.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILDS, ROOT, runBuilds } from './build-plan.mjs';

const cli = join(ROOT, 'packages/service-analytics-server/dist/cli.js');
if (!existsSync(cli)) {
  process.stderr.write('The server is not built yet in this clone: building it first.\n');
  runBuilds(
    ROOT,
    BUILDS.filter((build) => build.name === 'server' || build.name === 'dashboard'),
    { log: (line) => process.stderr.write(`${line}\n`), outputToStderr: true },
  );
}
await import(pathToFileURL(cli).href);
