#!/usr/bin/env node
// The `service-analytics-server` command in a clone of this repository: the root package's `bin`,
// so `npx service-analytics-server …` works after `npm install` (npm links no command of a
// workspace package whose file does not exist yet, and the server package's is built). Runs the
// built CLI, building the server and the dashboard first when their sources changed since their
// last build or they were never built (a `git pull` must not leave the command running an older
// server than the clone holds: it refused a database the clone's own server had migrated). Their
// progress goes to stderr; stdout stays the command's answer. Checking costs a hash of the
// sources, tens of milliseconds.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILDS, ROOT, planBuilds, runBuilds } from './build-plan.mjs';

const builds = BUILDS.filter((build) => build.name === 'server' || build.name === 'dashboard');
if (planBuilds(ROOT, builds).some((planned) => !planned.upToDate)) {
  runBuilds(ROOT, builds, { log: (line) => process.stderr.write(`${line}\n`), outputToStderr: true });
}
await import(pathToFileURL(join(ROOT, 'packages/service-analytics-server/dist/cli.js')).href);
