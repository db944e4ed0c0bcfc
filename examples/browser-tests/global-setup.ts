/**
 * Vitest global setup of the `browser` project, once per run:
 *
 * - the real client, built with `buildClient()` of `scripts/build-client.mjs` (the code `npm run
 *   build:client` writes to packages/service-analytics/dist), handed to the tests as
 *   `inject('clientDir')`;
 * - the dashboard, built with its Vite config as `npm run build:dashboard` builds it for the server
 *   package, handed to the tests as `inject('dashboardDir')` (test-support/browser/dashboard-rig.ts).
 *
 * Each in a private temporary directory, because other work in this checkout may rebuild the
 * packages while the tests run; the files are the same build.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import type { TestProject } from 'vitest/node';
import { writeClientBuild } from '../../test-support/browser/client-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Directory of the client build, served at `/dist/client/` by the static server. */
    clientDir: string;
    /** Directory of the dashboard build, served at `/dashboard/` by the dashboard tests' servers. */
    dashboardDir: string;
  }
}

const ROOT = resolve(import.meta.dirname, '../..');

/** Builds the client and the dashboard; the returned teardown deletes both builds. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const clientDir = await mkdtemp(join(tmpdir(), 'sa-client-build-'));
  const dashboardDir = await mkdtemp(join(tmpdir(), 'sa-dashboard-build-'));
  const teardown = async (): Promise<void> => {
    await rm(clientDir, { recursive: true, force: true });
    await rm(dashboardDir, { recursive: true, force: true });
  };
  try {
    await writeClientBuild(clientDir);
    await build({ configFile: join(ROOT, 'dashboard/vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: dashboardDir } });
  } catch (error) {
    await teardown();
    throw error;
  }
  project.provide('clientDir', clientDir);
  project.provide('dashboardDir', dashboardDir);
  return teardown;
}
