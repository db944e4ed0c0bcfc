/**
 * The two published packages, as a user gets them: the client (`packages/service-analytics`, no
 * runtime dependency) and the server (`packages/service-analytics-server`, which carries the
 * server's dependencies). What each manifest says and each tarball ships is checked on the build
 * `npm pack` made; then, end to end: `npm pack` of both workspaces (their `prepack` builds them),
 * the client tarball installed into a fresh Vite app that imports `service-analytics` and is built
 * with Vite, the server started from its own tarball (`service-analytics-server start`), and the
 * app loaded in Chromium: the worker the bundler emitted starts, the batch leaves from it, and the
 * server stores the event (and finds a client's country in the database its package ships). The server's type declarations are checked as an embedding user's
 * compiler reads them: its tarball unpacked into a folder outside the repository beside exactly the
 * dependencies it declares, and a strict `tsc --noEmit` of a file that embeds the server.
 *
 * Nothing is fetched from the registry: the fixture lives under this repository's
 * node_modules/.cache, so Vite, React and the server's dependencies resolve from the repository's
 * node_modules, while `service-analytics` and `service-analytics-server` resolve to the unpacked
 * tarballs beside the fixture (the checks below make sure the server's package lists every
 * dependency it imports, and that the client's has none). One file, so that no other test
 * rebuilds the package folders while these read them.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Request } from 'playwright-core';
import { type PreviewServer, build, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test-support/chromium.js';
import { type ServerProcess, runCli, startServerProcess } from '../../test-support/server/cli-process.js';

const ROOT = resolve(import.meta.dirname, '../..');
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
  types?: string;
  exports: Record<string, unknown>;
  scripts?: Record<string, string>;
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** The files in the tarball of package `name` that `npm pack` made, as paths inside the package. */
function packedFiles(name: string): string[] {
  const listing = execFileSync('tar', ['-tzf', tarball(name)], { encoding: 'utf8' });
  return listing.split('\n').filter((line) => line !== '' && !line.endsWith('/')).map((line) => line.replace(/^package\//, '')).sort();
}

/** Reads file `path` of the tarball of package `name`. */
function packedFile(name: string, path: string): string {
  return execFileSync('tar', ['-xzOf', tarball(name), `package/${path}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/**
 * The declaration files reachable from `entries` (paths relative to `dir`) by relative imports,
 * re-exports and `import()` types, and the bare module specifiers they name.
 */
function declarationGraph(dir: string, entries: string[]): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [...entries];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    // Comments may quote code (`import('rrweb')`): only the code counts.
    const text = readFileSync(join(dir, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    for (const [, specifier] of text.matchAll(/(?:from|import\()\s*['"]([^'"]+)['"]/g)) {
      if (!specifier!.startsWith('.')) packages.add(specifier!);
      else queue.push(posix.join(posix.dirname(file), specifier!).replace(/\.js$/, '.d.ts'));
    }
  }
  return { files, packages };
}

/** Bare module specifiers the built JavaScript of `dir` imports or resolves (node: builtins left out). */
function bareImports(dir: string): Set<string> {
  const found = new Set<string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    // Imports, and files resolved at run time by `createRequire(import.meta.url).resolve('pkg/…')`
    // (a driver for a thread, the country database): esbuild numbers the repeated `createRequire`.
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\bcreateRequire\d*\(import\.meta\.url\)\.resolve\(\s*)["']([^"'./][^"']*)["']/g)) {
      const specifier = match[1]!;
      // Only what a module specifier can be (minified code has `import(` inside strings too).
      if (!/^(?:node:)?(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*(?:\/[\w./-]*)?$/.test(specifier)) continue;
      if (specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
      found.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
    }
  }
  return found;
}


/** Unpacks tarball `file` into `<dir>/node_modules/<name>`. */
function install(tarball: string, dir: string, name: string): string {
  const target = join(dir, 'node_modules', name);
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  return target;
}

/**
 * Links each dependency that the manifest in `packageDir` declares into `<dir>/node_modules`, from
 * this repository's installation: what `npm install` of the tarball would put beside it (their own
 * dependencies resolve from where they are installed).
 */
function linkDependencies(packageDir: string, dir: string): void {
  for (const name of Object.keys(manifest(packageDir).dependencies ?? {})) {
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(installedPackage(name), join(dir, 'node_modules', name), 'dir');
  }
}

/** The folder of the server's dependency `name` in this repository's installation. */
function installedPackage(name: string): string {
  const installed = [join(SERVER, 'node_modules', name), join(ROOT, 'node_modules', name)].find((path) => existsSync(path));
  if (installed === undefined) throw new Error(`dependency ${name} is not installed in the repository`);
  return installed;
}

/**
 * What a TypeScript user who embeds the server writes (the README's embedding example, and every
 * exported factory): compiled, never run. The `@ts-expect-error` lines fail the check if the
 * package's types were missing or `any`.
 */
const EMBED_TS = `import { createServer } from 'node:http';
import {
  createApp, createJsonLogger, createPostgresStore, createSqliteStore, openStore, serve, silentLogger,
  type AnalyticsApp, type EventStore, type Logger,
} from 'service-analytics-server';

const store: EventStore = openStore('./data/analytics.db');
await store.init();
const app: AnalyticsApp = createApp({ store, corsOrigins: ['https://app.example.com'] });
app.use(async (ctx, next) => {
  await next();
  ctx.set('x-served-by', 'embedded analytics');
});
const server = createServer(app.callback()).listen(8787, '127.0.0.1');
server.close();
await app.drain();
await app.close();
await store.close();

const logger: Logger = createJsonLogger();
const sqlite = createSqliteStore({ path: ':memory:', busyTimeoutMs: 1000 });
const postgres = createPostgresStore({ url: 'postgres://analytics@127.0.0.1/analytics', poolSize: 4 });
await sqlite.init();
const running = await serve({ store: sqlite, logger: silentLogger, port: 0, host: '127.0.0.1', rateLimit: false });
export const url: string = running.url;
await running.close();
await postgres.close();
logger.info('done');

// @ts-expect-error: createApp needs a store
createApp({});
// @ts-expect-error: the SQLite store needs a path
createSqliteStore({});
`;

/** A TypeScript user's strict configuration for Node (ESM, Node's module resolution). */
const EMBED_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    // The package's declarations and those of its dependencies are checked too.
    skipLibCheck: false,
    noEmit: true,
  },
  include: ['src'],
};

const APP_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>packaged client</title></head>
<body><p>packaged client</p><script type="module" src="/src/main.js"></script></body></html>`;

const APP_MAIN = `import { createAnalytics } from 'service-analytics';

const q = new URLSearchParams(location.search);
const analytics = createAnalytics({ apiKey: q.get('key'), projectId: q.get('project'), endpoint: q.get('endpoint'), enableAutoPageTracking: false });
window.packaged = {
  async send(run) {
    analytics.track('packaged_install', { run });
    await analytics.flush();
    return analytics.getDeliveryStats();
  },
};
`;

let work: string;
/** The type-check fixture: outside the repository, so only what the server package brings resolves. */
let embed: string;
let server: ServerProcess | undefined;
let web: PreviewServer | undefined;
let project: { projectId: string; writeKey: string; readKey: string };
let tarballs: string[];

beforeAll(async () => {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  work = mkdtempSync(join(cache, 'sa-packages-'));
  // Both packages, as `npm pack` makes them (prepack builds each).
  execFileSync('npm', ['pack', '-w', 'service-analytics', '-w', 'service-analytics-server', '--pack-destination', work], { cwd: ROOT, stdio: 'ignore' });
  tarballs = readdirSync(work).filter((f) => f.endsWith('.tgz'));

  const app = join(work, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'packaged-app', private: true, type: 'module' }));
  writeFileSync(join(app, 'index.html'), APP_HTML);
  writeFileSync(join(app, 'src', 'main.js'), APP_MAIN);
  install(tarball('service-analytics'), app, 'service-analytics');
  await build({ root: app, configFile: false, logLevel: 'warn', build: { outDir: join(app, 'dist') } });
  web = await preview({ root: app, configFile: false, logLevel: 'warn', build: { outDir: join(app, 'dist') }, preview: { host: '127.0.0.1', port: 0, strictPort: false, headers: { 'referrer-policy': 'unsafe-url' } } });

  embed = mkdtempSync(join(tmpdir(), 'sa-embed-types-'));
  mkdirSync(join(embed, 'src'));
  writeFileSync(join(embed, 'package.json'), JSON.stringify({ name: 'embedding-app', private: true, type: 'module' }));
  writeFileSync(join(embed, 'tsconfig.json'), JSON.stringify(EMBED_TSCONFIG, null, 2));
  writeFileSync(join(embed, 'src', 'embed.ts'), EMBED_TS);
  linkDependencies(install(tarball('service-analytics-server'), embed, 'service-analytics-server'), embed);

  const serverDir = install(tarball('service-analytics-server'), join(work, 'server'), 'service-analytics-server');
  const cli = join(serverDir, 'dist', 'cli.js');
  const db = join(work, 'data', 'analytics.db');
  // Headless Chromium under playwright is a bot to the server (docs/decisions.md, "Bot filtering"): keep its events.
  const created = await runCli(cli, ['project', 'create', '--name', 'Packaged', '--bots', 'keep', '--json', '--db', db]);
  if (created.code !== 0) throw new Error(`project create failed: ${created.stderr}`);
  project = JSON.parse(created.stdout) as typeof project;
  // Behind a proxy on this machine (loopback): a test's request can name its client address.
  server = await startServerProcess(cli, ['--db', db, '--trust-proxy', '127.0.0.1']);
}, 300_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await web?.close();
  rmSync(work, { recursive: true, force: true });
  if (embed !== undefined) rmSync(embed, { recursive: true, force: true });
});

/** The tarball `npm pack` made of package `name`. */
function tarball(name: string): string {
  const file = tarballs.find((f) => new RegExp(`^${name}-\\d`).test(f));
  if (file === undefined) throw new Error(`no tarball of ${name} in ${work}`);
  return join(work, file);
}

describe('the packed packages in a fresh Vite app', () => {
  it('makes two tarballs', () => {
    expect(tarballs.sort()).toEqual([expect.stringMatching(/^service-analytics-\d+\.\d+\.\d+\.tgz$/), expect.stringMatching(/^service-analytics-server-\d+\.\d+\.\d+\.tgz$/)]);
  });

  it('Vite emits the worker; in Chromium the worker starts, sends the batch, and the server from its tarball stores it', async () => {
    const emitted = readdirSync(join(work, 'app', 'dist', 'assets'));
    expect(emitted.some((f) => /^worker-.+\.js$/.test(f))).toBe(true);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const batchReferers: string[] = [];
      page.on('request', (request: Request) => {
        if (request.method() === 'POST' && request.url().includes('/api/v1/events/batch')) {
          void request.headerValue('referer').then((value) => batchReferers.push(value ?? '(none)'));
        }
      });
      const base = web!.resolvedUrls!.local[0]!;
      const query = new URLSearchParams({ key: project.writeKey, project: project.projectId, endpoint: server!.url });
      await page.goto(`${base}?${query.toString()}`);
      await page.waitForFunction(() => 'packaged' in window, undefined, { timeout: 30_000 });
      const run = `run-${Date.now()}`;
      const stats = await page.evaluate((r) => (window as unknown as { packaged: { send(run: string): Promise<{ mode: string; strategy: string | null }> } }).packaged.send(r), run);
      expect(stats).toMatchObject({ mode: 'worker', strategy: 'shipped-worker' });

      const answer = await fetch(`${server!.url}/api/v1/events?event_type=packaged_install`, {
        headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.projectId },
      });
      const { events } = (await answer.json()) as { events: Array<{ properties: Record<string, unknown> }> };
      expect(events.map((e) => e.properties.run)).toEqual([run]);
      // The batch came from the worker Vite emitted, not from the page (the app is served with
      // `Referrer-Policy: unsafe-url`, so a request's Referer names the script that made it).
      expect(batchReferers.length).toBeGreaterThan(0);
      expect(batchReferers.every((referer) => /\/assets\/worker-[^/]+\.js$/.test(referer))).toBe(true);
    } finally {
      await browser.close();
    }
  });

  it('the server from its tarball finds the country of a client address in the database it ships', async () => {
    const batch = await fetch(`${server!.url}/api/v1/events/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.writeKey}`, 'x-project-id': project.projectId, 'x-forwarded-for': '81.2.69.160' },
      body: JSON.stringify([{ event_type: 'page_view', timestamp: new Date().toISOString(), user_agent: 'packaged-test', properties: { anonymous_id: 'packaged' } }]),
    });
    expect(batch.status).toBe(200);
    const answer = await fetch(`${server!.url}/api/v1/reports/top/country`, {
      headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.projectId },
    });
    expect(((await answer.json()) as { rows: unknown[] }).rows).toEqual([{ value: 'GB', events: 1, visitors: 1 }]);
  });
});

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
    // And only those ship: no declaration of an internal that no entry's types reach.
    const shipped = packedFiles('service-analytics').filter((f) => f.startsWith('dist/types/'));
    expect(shipped.map((f) => f.slice('dist/types/'.length)).sort()).toEqual([...reachable].sort());
  });
});

describe('the server package, service-analytics-server', () => {
  /** Inside the package: its declarations' folder and entry. */
  const TYPES = 'dist/types';
  const TYPES_ENTRY = 'server/index.d.ts';

  it('carries every package its built JavaScript imports, the types its declarations need, and its bin', () => {
    const server = manifest(SERVER);
    expect(server.name).toBe('service-analytics-server');
    expect(server.bin).toEqual({ 'service-analytics-server': './dist/cli.js' });
    expect(server.scripts?.prepack).toContain('build-server.mjs');
    const imported = [...bareImports(join(SERVER, 'dist'))].sort();
    expect(imported.filter((name) => server.dependencies?.[name] === undefined)).toEqual([]);
    // A package the declarations name brings its own types, or its @types package is a dependency
    // too (else a user's compiler finds no types for it).
    const typesFor = (name: string): string => {
      const own = JSON.parse(readFileSync(join(installedPackage(name), 'package.json'), 'utf8')) as { types?: string; typings?: string };
      return own.types !== undefined || own.typings !== undefined ? name : `@types/${name.replace(/^@([^/]+)\//, '$1__')}`;
    };
    const named = [...declarationGraph(join(SERVER, TYPES), [TYPES_ENTRY]).packages].filter((name) => !name.startsWith('node:') && !builtinModules.includes(name));
    const typePackages = named.map(typesFor);
    expect(typePackages.filter((name) => server.dependencies?.[name] === undefined)).toEqual([]);
    // And nothing it does not use.
    expect(Object.keys(server.dependencies ?? {}).sort()).toEqual([...new Set([...imported, ...typePackages])].sort());
  });

  it('points TypeScript at its declarations', () => {
    const server = manifest(SERVER);
    expect(server.types).toBe(`./${TYPES}/${TYPES_ENTRY}`);
    expect(server.exports['.']).toEqual({ types: `./${TYPES}/${TYPES_ENTRY}`, default: './dist/index.js' });
  });

  it('ships the CLI, the embeddable entry and its declarations, the built dashboard, README and LICENSE, and nothing else: no test, no source map of a test', () => {
    const files = packedFiles('service-analytics-server');
    const declarations = files.filter((f) => f.startsWith(`${TYPES}/`));
    // The dashboard: its page and Vite's hashed scripts and styles, no source map.
    const dashboard = files.filter((f) => f.startsWith('dist/dashboard/'));
    expect(dashboard).toContain('dist/dashboard/index.html');
    expect(dashboard.filter((f) => /^dist\/dashboard\/assets\/index-[\w-]+\.js$/.test(f))).toHaveLength(1);
    expect(dashboard.filter((f) => f !== 'dist/dashboard/index.html' && !/^dist\/dashboard\/assets\/[\w-]+\.(js|css)$/.test(f))).toEqual([]);
    expect(files.filter((f) => !declarations.includes(f) && !dashboard.includes(f))).toEqual(['LICENSE', 'README.md', 'dist/cli.js', 'dist/cli.js.map', 'dist/index.js', 'dist/index.js.map', 'package.json']);
    for (const file of ['server/index.d.ts', 'server/app.d.ts', 'server/serve.d.ts', 'server/store/event-store.d.ts', 'server/store/open-store.d.ts', 'server/store/sqlite/sqlite-store.d.ts', 'server/store/postgres/postgres-store.d.ts']) {
      expect(declarations).toContain(`${TYPES}/${file}`);
    }
    expect(declarations.filter((f) => !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => /\.test\.|test-support|\/testing\/|fixtures|contract|example/.test(f))).toEqual([]);
    // The source maps embed no test either: only product code goes into the bundles.
    for (const map of ['dist/cli.js.map', 'dist/index.js.map']) {
      const { sources } = JSON.parse(packedFile('service-analytics-server', map)) as { sources: string[] };
      expect(sources.filter((source) => /\.test\.|test-support|\/testing\/|fixtures|contract/.test(source))).toEqual([]);
    }
  });

  it('serves the dashboard from its tarball at /dashboard/, and / redirects there', async () => {
    const page = await fetch(`${server!.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root">');
    const root = await fetch(`${server!.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard/');
    expect((await fetch(`${server!.url}/healthz`)).status).toBe(200);
  });

  it("ships exactly the declarations its entry reaches, and they name neither better-sqlite3 nor pg", () => {
    const shipped = packedFiles('service-analytics-server').filter((f) => f.startsWith(`${TYPES}/`)).map((f) => f.slice(TYPES.length + 1));
    const { files, packages } = declarationGraph(join(SERVER, TYPES), [TYPES_ENTRY]);
    expect(shipped).toEqual([...files].sort());
    expect([...packages].filter((name) => /better-sqlite3|^pg$|^pg\//.test(name))).toEqual([]);
  });

  it('type-checks an embedding app, strict, against the tarball and the dependencies it declares', async () => {
    const tsc = createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', join(embed, 'tsconfig.json')], { cwd: embed }).then(
      () => '',
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    expect(result).toBe('');
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
