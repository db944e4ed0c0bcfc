import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUILDS, ROOT, type Build, planBuilds, runBuilds } from './build-plan.mjs';

/** A build that appends its name to `log` and writes its output: what ran is in the log. */
function fakeBuild(name: string, inputs: string[], after?: string[]): Build {
  const script = `const fs = require('node:fs'); fs.appendFileSync('log', '${name}\\n'); fs.mkdirSync('out', { recursive: true }); fs.writeFileSync('out/${name}', '');`;
  return { name, inputs, ...(after ? { after } : {}), outputs: [`out/${name}`], command: [process.execPath, '-e', script] };
}

describe('the builds of npm start (scripts/build-plan.mjs)', () => {
  let root: string;
  const builds = [fakeBuild('server', ['server', 'shared.json']), fakeBuild('dashboard', ['dashboard', 'shared.json']), fakeBuild('client', ['main']), fakeBuild('example', ['app'], ['client'])];
  const ranSince = (() => {
    let seen = 0;
    return () => {
      const lines = readFileSync(join(root, 'log'), 'utf8').split('\n').filter(Boolean);
      const fresh = lines.slice(seen);
      seen = lines.length;
      return fresh;
    };
  })();
  const write = (file: string, text: string): void => {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const quiet = { log: () => undefined };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sa-build-plan-'));
    write('server/cli.ts', 'cli');
    write('server/cli.test.ts', 'a test');
    write('dashboard/app.tsx', 'app');
    write('main/index.ts', 'facade');
    write('app/page.tsx', 'page');
    write('shared.json', '{}');
    write('log', '');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds everything the first time, nothing the second, and only what a changed input feeds after that', () => {
    expect(runBuilds(root, builds, quiet)).toEqual(['server', 'dashboard', 'client', 'example']);
    expect(ranSince()).toEqual(['server', 'dashboard', 'client', 'example']);

    expect(runBuilds(root, builds, quiet)).toEqual([]);
    expect(ranSince()).toEqual([]);

    write('dashboard/app.tsx', 'app, changed');
    expect(runBuilds(root, builds, quiet)).toEqual(['dashboard']);
    write('server/cli.test.ts', 'a test, changed');
    expect(runBuilds(root, builds, quiet)).toEqual([]);
    write('shared.json', '{"changed":true}');
    expect(runBuilds(root, builds, quiet)).toEqual(['server', 'dashboard']);
    // The example app is built against the client's output: a change to the client rebuilds both.
    write('main/index.ts', 'facade, changed');
    expect(runBuilds(root, builds, quiet)).toEqual(['client', 'example']);
    write('app/page.tsx', 'page, changed');
    expect(runBuilds(root, builds, quiet)).toEqual(['example']);
    expect(ranSince()).toEqual(['dashboard', 'server', 'dashboard', 'client', 'example', 'example']);
  });

  it('rebuilds a build whose output is gone; the same bytes written again rebuild nothing', () => {
    runBuilds(root, builds, quiet);
    rmSync(join(root, 'out', 'server'));
    expect(runBuilds(root, builds, quiet)).toEqual(['server']);
    // Contents, not times: the same bytes written again change nothing.
    write('server/cli.ts', 'cli');
    expect(runBuilds(root, builds, quiet)).toEqual([]);
    write('server/cli.ts', 'cli, edited');
    write('server/cli.ts', 'cli');
    expect(runBuilds(root, builds, quiet)).toEqual([]);
  });

  it('says which builds it leaves as they are', () => {
    runBuilds(root, builds, quiet);
    write('main/index.ts', 'facade, changed');
    const lines: string[] = [];
    runBuilds(root, builds, { log: (line) => lines.push(line) });
    expect(lines[0]).toBe('Unchanged since the last build, not rebuilt: server, dashboard.');
  });

  it("lists the repository's real inputs: each exists, and every build of npm start is there", () => {
    expect(BUILDS.map((build) => build.name)).toEqual(['server', 'dashboard', 'client', 'example']);
    for (const build of BUILDS) for (const input of build.inputs) expect(existsSync(join(ROOT, input)), input).toBe(true);
    expect(planBuilds(ROOT, BUILDS).every((planned) => /^[0-9a-f]{64}$/.test(planned.inputsHash))).toBe(true);
  });
});
