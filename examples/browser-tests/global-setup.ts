/**
 * Vitest global setup of the `browser` project: builds the real client once per run with
 * `buildClient()` of `scripts/build-client.mjs` (the code `npm run build:client` writes to
 * packages/service-analytics/dist) into a private temporary directory, and hands its path to the
 * tests as `inject('clientDir')`. A private copy, because other work in this checkout may rebuild
 * the package while the tests run; the files are the same build.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { writeClientBuild } from '../../test-support/browser/client-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Directory of the client build, served at `/dist/client/` by the static server. */
    clientDir: string;
  }
}

/** Builds the client; the returned teardown deletes the build. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'sa-client-build-'));
  await writeClientBuild(dir);
  project.provide('clientDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
