#!/usr/bin/env node
// Runs a TypeScript file: bundles it with esbuild (npm packages stay external, so they resolve from
// the project's node_modules) to node_modules/.cache/run-ts/<name>.mjs and runs that with node,
// forwarding arguments, stdio, signals and the exit code.
//
//   node scripts/run-ts.mjs [node flags…] path/to/file.ts [args…]
//   node scripts/run-ts.mjs --cpu-prof bench/server-target.ts bare
//
// Arguments before the .ts file that start with `-` go to node (e.g. --cpu-prof); everything after
// it goes to the script. RUN_TS_BUILD_ONLY=1 bundles, prints the output path and exits.
import { spawn } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const entryIndex = argv.findIndex((arg) => !arg.startsWith('-'));
if (entryIndex < 0) {
  console.error('usage: node scripts/run-ts.mjs [node flags…] <file.ts> [args…]');
  process.exit(2);
}
const nodeFlags = argv.slice(0, entryIndex);
const entry = resolve(argv[entryIndex]);
const scriptArgs = argv.slice(entryIndex + 1);

// bench/server-bench.ts → bench__server-bench.mjs: distinct files never share a bundle.
const rel = relative(root, entry);
const name = (rel.startsWith('..') ? basename(entry) : rel).replace(/\.[cm]?tsx?$/, '').replace(/[\\/]/g, '__');
const outDir = join(root, 'node_modules', '.cache', 'run-ts');
const outFile = join(outDir, `${name}.mjs`);
// Bundle to a private name, then rename: two runs of the same file at once never read half a bundle.
const tmpFile = join(outDir, `${name}.${process.pid}.tmp.mjs`);
mkdirSync(outDir, { recursive: true });

try {
  await build({
    entryPoints: [entry],
    outfile: tmpFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
    absWorkingDir: root,
  });
  renameSync(tmpFile, outFile);
} catch (error) {
  // esbuild has already printed the diagnostics.
  if (!(error && typeof error === 'object' && 'errors' in error)) console.error(error);
  process.exit(1);
}

if (process.env.RUN_TS_BUILD_ONLY === '1') {
  console.log(outFile);
  process.exit(0);
}

const child = spawn(process.execPath, [...nodeFlags, outFile, ...scriptArgs], { stdio: 'inherit' });
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
child.on('error', (error) => {
  console.error(`run-ts: could not start node: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal so that our parent sees what happened to the script.
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(s, forward);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
