/**
 * The client build the browser tests and the client benchmark run against: `buildClient()` of
 * `scripts/build-client.mjs` (the code `npm run build:client` writes to packages/service-analytics/dist), written to a
 * private directory, so that a rebuild of that folder by other work in the checkout does not change
 * files under a running test or measurement.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SizeRow } from '../../scripts/build-client.mjs';

/**
 * The checkout's root: the working directory when it is one (npm scripts run there), else the
 * nearest directory above this file holding `scripts/build-client.mjs`. The working directory
 * first, because `scripts/run-ts.mjs` runs a bundle of this file from node_modules/.cache, and a
 * second checkout whose node_modules is a link to the first's would otherwise build the first's client.
 */
export function projectRoot(): string {
  if (existsSync(join(process.cwd(), 'scripts', 'build-client.mjs'))) return process.cwd();
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'scripts', 'build-client.mjs'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

/** Builds the client into `dir` (the layout of dist/client); returns the build's size rows. */
export async function writeClientBuild(dir: string): Promise<SizeRow[]> {
  // Imported at run time from the checkout, never bundled: the build script finds the sources
  // relative to its own location.
  const script = pathToFileURL(join(projectRoot(), 'scripts', 'build-client.mjs')).href;
  const { buildClient } = (await import(/* @vite-ignore */ script)) as typeof import('../../scripts/build-client.mjs');
  const { files, rows } = await buildClient();
  for (const [name, text] of files) {
    const path = join(dir, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  }
  return rows;
}
