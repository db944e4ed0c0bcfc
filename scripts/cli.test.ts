import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../test-support/server/cli-process.js';
import { BUILDS, ROOT, planBuilds } from './build-plan.mjs';

const run = promisify(execFile);

/**
 * `npx service-analytics-server …` as the README names it, in a clone after `npm install`: npm
 * links no command for the server package there (its bin is the built dist/cli.js), so the root
 * package's own `bin` (scripts/cli.mjs) answers. The clone here is the repository's root files that
 * take part (package.json, scripts/cli.mjs, scripts/build-plan.mjs), the server built as `npm run
 * build` builds it, and node_modules as `npm ci` leaves it: every installed package, no
 * node_modules/.bin entry for the command. (That the command rebuilds a clone whose sources
 * changed is the build plan's own test, scripts/build-plan.test.ts.)
 */
describe('npx service-analytics-server in a clone (the root package.json bin)', () => {
  let clone: string;

  beforeAll(async () => {
    clone = mkdtempSync(join(tmpdir(), 'sa-clone-'));
    copyFileSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
    mkdirSync(join(clone, 'scripts'));
    for (const script of ['cli.mjs', 'build-plan.mjs']) copyFileSync(join(ROOT, 'scripts', script), join(clone, 'scripts', script));
    const dist = join(clone, 'packages', 'service-analytics-server', 'dist');
    mkdirSync(dist, { recursive: true });
    copyFileSync(await buildCli(), join(dist, 'cli.js'));
    // Stamped as built from what this clone holds, as the last `npm start` would leave it: the
    // command rebuilds only when the sources changed since.
    mkdirSync(join(clone, 'dist', '.build-stamps'), { recursive: true });
    // (The commands run here read no other output of those builds: the rest stand empty.)
    for (const { build, inputsHash } of planBuilds(clone, BUILDS)) {
      writeFileSync(join(clone, 'dist', '.build-stamps', build.name), inputsHash);
      for (const output of build.outputs) {
        mkdirSync(dirname(join(clone, output)), { recursive: true });
        if (!existsSync(join(clone, output))) writeFileSync(join(clone, output), '');
      }
    }
    mkdirSync(join(clone, 'node_modules'));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name === '.bin' || name === '.cache' || name.startsWith('service-analytics')) continue;
      symlinkSync(join(ROOT, 'node_modules', name), join(clone, 'node_modules', name));
    }
  });
  afterAll(() => rmSync(clone, { recursive: true, force: true }));

  it('names scripts/cli.mjs, executable, as the root package bin', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
    expect(pkg.bin).toEqual({ 'service-analytics-server': 'scripts/cli.mjs' });
    expect(statSync(join(ROOT, 'scripts', 'cli.mjs')).mode & 0o111).toBe(0o111);
  });

  it('answers --help and creates a project in a new database, run from the root by npx', async () => {
    const npx = (args: string[]) => run('npx', ['--offline', 'service-analytics-server', ...args], { cwd: clone, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const help = await npx(['--help']);
    expect(help.stdout).toMatch(/^Usage: service-analytics-server <command> \[options\]/);
    const created = await npx(['project', 'create', '--name', 'Shop', '--json', '--db', join(clone, 'data', 'analytics.db')]);
    expect(JSON.parse(created.stdout)).toMatchObject({ projectId: expect.stringMatching(/^proj_/), readKey: expect.stringMatching(/^sa_r_/) });
  });
});
