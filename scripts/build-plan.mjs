// The builds `npm start` needs, what each is built from, and which of them are out of date.
//
// Each build has a stamp (dist/.build-stamps/<name> at the repository's root): a hash of the
// contents of the files it is built from, written when it finished. A build runs again when its
// outputs are missing or its inputs' hash differs from the stamp, so `npm start` with nothing
// changed starts at once, and a change to the dashboard rebuilds the dashboard alone. Contents,
// not modification times: a checkout of another branch and back changes no stamp.
//
// Inputs are folders and files of the repository; test files (*.test.ts, *.test.tsx) are never
// built into anything and are left out. A build may depend on another's outputs (the example app
// is built against the built client): the other's hash is then part of its inputs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Vite's command line, run with this node: no shell and no node_modules/.bin needed. */
const VITE = join(dirname(createRequire(join(ROOT, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');

/** What every build reads besides its own folders: the dependencies and the compiler settings. */
const SHARED = ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts/build-plan.mjs'];

/** @type {readonly import('./build-plan.d.mts').Build[]} */
export const BUILDS = [
  {
    name: 'server',
    inputs: [...SHARED, 'server', 'protocol', 'packages/service-analytics-server/package.json', 'scripts/build-server.mjs', 'scripts/reachable-declarations.mjs', 'scripts/tsconfig.server-types.json'],
    outputs: ['packages/service-analytics-server/dist/cli.js', 'packages/service-analytics-server/dist/index.js'],
    command: [process.execPath, 'scripts/build-server.mjs', '--no-dashboard'],
  },
  {
    name: 'dashboard',
    inputs: [...SHARED, 'dashboard', 'protocol'],
    outputs: ['packages/service-analytics-server/dist/dashboard/index.html'],
    command: [process.execPath, VITE, 'build', '--config', 'dashboard/vite.config.ts'],
  },
  {
    name: 'client',
    inputs: [...SHARED, 'main', 'worker', 'protocol', 'packages/service-analytics/package.json', 'scripts/build-client.mjs', 'scripts/reachable-declarations.mjs', 'scripts/tsconfig.client-types.json'],
    outputs: ['packages/service-analytics/dist/index.js', 'packages/service-analytics/dist/worker.js'],
    command: [process.execPath, 'scripts/build-client.mjs'],
  },
  {
    name: 'example',
    inputs: [...SHARED, 'examples/app'],
    after: ['client'],
    outputs: ['dist/example/index.html'],
    command: [process.execPath, VITE, 'build', '--config', 'examples/app/vite.config.ts'],
  },
];

/** Folders never read as inputs: installed packages and build output. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', '.vite', '.git']);
const TEST_FILE = /\.test\.[cm]?tsx?$/;

/** The input files of `paths` under `root`, sorted, relative to it (folders read recursively). */
function inputFiles(root, paths) {
  const files = new Set();
  const walk = (rel) => {
    const abs = join(root, rel);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) {
      for (const entry of readdirSync(abs, { withFileTypes: true })) {
        if (entry.isDirectory() && SKIPPED_FOLDERS.has(entry.name)) continue;
        walk(join(rel, entry.name));
      }
    } else if (!TEST_FILE.test(rel)) files.add(rel.split('\\').join('/'));
  };
  for (const path of paths) walk(path);
  return [...files].sort();
}

/** Where a build's stamp lives. */
function stampPath(root, name) {
  return join(root, 'dist', '.build-stamps', name);
}

/**
 * Which of `builds` are up to date under `root`: each build's inputs hash (names and contents of
 * its input files, then the hashes of the builds it comes after) and whether its stamp and
 * outputs match. A build after one that is out of date is out of date too.
 *
 * @param {string} root
 * @param {readonly import('./build-plan.d.mts').Build[]} builds
 * @returns {import('./build-plan.d.mts').PlannedBuild[]}
 */
export function planBuilds(root, builds) {
  /** @type {Map<string, import('./build-plan.d.mts').PlannedBuild>} */
  const planned = new Map();
  for (const build of builds) {
    const hash = createHash('sha256');
    for (const file of inputFiles(root, build.inputs)) {
      hash.update(`${file}\0`);
      hash.update(readFileSync(join(root, file)));
      hash.update('\0');
    }
    let afterStale = false;
    for (const name of build.after ?? []) {
      const before = planned.get(name);
      if (before === undefined) throw new Error(`build ${build.name} comes after ${name}, which is not listed before it`);
      hash.update(`after ${name}\0${before.inputsHash}\n`);
      afterStale ||= !before.upToDate;
    }
    const inputsHash = hash.digest('hex');
    const stamp = stampPath(root, build.name);
    const upToDate =
      !afterStale && build.outputs.every((file) => existsSync(join(root, file))) && existsSync(stamp) && readFileSync(stamp, 'utf8') === inputsHash;
    planned.set(build.name, { build, inputsHash, upToDate });
  }
  return [...planned.values()];
}

/**
 * Runs the builds of `builds` that are out of date under `root`, in order, and stamps each one
 * that finished. Returns the names of those that ran; exits the process with a failed build's
 * status (its own output says why).
 *
 * @param {string} root
 * @param {readonly import('./build-plan.d.mts').Build[]} builds
 * @param {import('./build-plan.d.mts').RunOptions} [options]
 * @returns {string[]}
 */
export function runBuilds(root, builds, options = {}) {
  const log = options.log ?? ((line) => process.stdout.write(`${line}\n`));
  const ran = [];
  const plan = planBuilds(root, builds);
  const current = plan.filter((planned) => planned.upToDate).map((planned) => planned.build.name);
  if (current.length > 0) log(`Unchanged since the last build, not rebuilt: ${current.join(', ')}.`);
  for (const { build, inputsHash, upToDate } of plan) {
    if (upToDate) continue;
    const stamp = stampPath(root, build.name);
    // Gone before the build starts: a build stopped halfway is not taken for a finished one.
    rmSync(stamp, { force: true });
    log(`Building the ${build.name}: its sources changed since its last build, or it was never built.`);
    const [command, ...args] = build.command;
    if (command === undefined) throw new Error(`build ${build.name} has no command`);
    const result = spawnSync(command, args, { cwd: root, stdio: ['ignore', options.outputToStderr ? 2 : 'inherit', 'inherit'] });
    if (result.status !== 0) {
      log(`The ${build.name} build failed.`);
      process.exit(result.status ?? 1);
    }
    mkdirSync(dirname(stamp), { recursive: true });
    writeFileSync(stamp, inputsHash);
    ran.push(build.name);
  }
  return ran;
}
