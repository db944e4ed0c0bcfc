/**
 * The two published packages, as `npm pack` would ship them from this repository: the client
 * (`packages/service-analytics`, no runtime dependency) and the server
 * (`packages/service-analytics-server`, which carries the server's dependencies). Builds both into
 * their package folders (what `prepack` does), then reads `npm pack --dry-run`'s file lists.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const CLIENT = join(ROOT, 'packages', 'service-analytics');
const SERVER = join(ROOT, 'packages', 'service-analytics-server');

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  sideEffects?: boolean;
  bin?: Record<string, string>;
  exports: Record<string, unknown>;
  scripts?: Record<string, string>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The files `npm pack` would put in the tarball of workspace `name`. */
function packedFiles(name: string): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '-w', name], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [pack] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  return pack!.files.map((f) => f.path).sort();
}

/** Bare module specifiers the built JavaScript of `dir` imports (node: builtins left out). */
function bareImports(dir: string): Set<string> {
  const found = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"'./][^"']*)["']/g)) {
      const specifier = match[1]!;
      // Only what a module specifier can be (minified code has `import(` inside strings too).
      if (!/^(?:node:)?(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*(?:\/[\w./-]*)?$/.test(specifier)) continue;
      if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
      found.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
    }
  }
  return found;
}

beforeAll(() => {
  // What each package's prepack runs.
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-client.mjs')], { cwd: ROOT, stdio: 'ignore' });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-server.mjs')], { cwd: ROOT, stdio: 'ignore' });
}, 180_000);

describe('the client package, service-analytics', () => {
  it('has no runtime dependency, React as an optional peer, no side effects, and builds on pack', () => {
    const client = manifest(CLIENT);
    expect(client.name).toBe('service-analytics');
    expect(client.dependencies ?? {}).toEqual({});
    expect(client.peerDependencies).toEqual({ react: '>=18' });
    expect(client.peerDependenciesMeta?.react?.optional).toBe(true);
    expect(client.sideEffects).toBe(false);
    expect(client.scripts?.prepack).toContain('build-client.mjs');
  });

  it('its JavaScript imports nothing but React (from the React entry)', () => {
    expect([...bareImports(join(CLIENT, 'dist'))].sort()).toEqual(['react']);
    const reactEntry = readFileSync(join(CLIENT, 'dist', 'react.js'), 'utf8');
    expect(reactEntry).toMatch(/from\s*["']react["']/);
  });

  it('ships the entries, the worker, the chunks, the types, README and LICENSE, and nothing else', () => {
    const files = packedFiles('service-analytics');
    for (const required of ['dist/index.js', 'dist/react.js', 'dist/worker.js', 'dist/types/main/index.d.ts', 'dist/types/main/react/index.d.ts', 'README.md', 'LICENSE', 'package.json']) {
      expect(files).toContain(required);
    }
    const unexpected = files.filter((f) => !/^dist\/[^/]+\.js(\.map)?$/.test(f) && !/^dist\/types\/.+\.d\.ts$/.test(f) && !['README.md', 'LICENSE', 'package.json'].includes(f));
    expect(unexpected).toEqual([]);
    expect(files.filter((f) => /example|\.test\.|test-support/.test(f))).toEqual([]);
  });

  it("the type declarations a user's compiler reads name no package a user would not have", () => {
    // Every declaration reachable from the two entries' types, by relative imports.
    const types = join(CLIENT, 'dist', 'types');
    const reachable = new Set<string>();
    const queue = ['main/index.d.ts', 'main/react/index.d.ts'];
    const packages = new Set<string>();
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      if (reachable.has(file)) continue;
      reachable.add(file);
      // Comments may quote code (`import('rrweb')`): only the code counts.
      const text = readFileSync(join(types, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
      for (const [, specifier] of text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)) {
        if (!specifier!.startsWith('.')) packages.add(specifier!);
        else queue.push(join(dirname(file), specifier!).replace(/\.js$/, '.d.ts'));
      }
    }
    expect(reachable.size).toBeGreaterThan(10);
    expect([...packages].filter((name) => name !== 'react' && !name.startsWith('react/'))).toEqual([]);
  });
});

describe('the server package, service-analytics-server', () => {
  it('carries every package its built JavaScript imports, and its bin', () => {
    const server = manifest(SERVER);
    expect(server.name).toBe('service-analytics-server');
    expect(server.bin).toEqual({ 'service-analytics-server': './dist/cli.js' });
    expect(server.scripts?.prepack).toContain('build-server.mjs');
    const imported = [...bareImports(join(SERVER, 'dist'))].sort();
    expect(imported.filter((name) => server.dependencies?.[name] === undefined)).toEqual([]);
    // And nothing it does not use.
    expect(Object.keys(server.dependencies ?? {}).sort()).toEqual(imported);
  });

  it('ships the CLI and the embeddable entry, README and LICENSE, and nothing else', () => {
    const files = packedFiles('service-analytics-server');
    expect(files).toEqual(['LICENSE', 'README.md', 'dist/cli.js', 'dist/cli.js.map', 'dist/index.js', 'dist/index.js.map', 'package.json']);
  });
});

describe('the repository', () => {
  it('publishes only the two packages, at one version, each with the licence', () => {
    const root = manifest(ROOT);
    expect(root.private).toBe(true);
    for (const dir of [CLIENT, SERVER]) {
      expect(manifest(dir).version).toBe(root.version);
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
    }
  });
});
