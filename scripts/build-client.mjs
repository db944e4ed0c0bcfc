// Builds the browser client, the package `service-analytics`, into packages/service-analytics/dist
// (CLIENT_DIST) and its types into dist/types there:
//
//   worker.js         the worker: self-contained (comlink and the delivery core inlined), a classic
//                     script, so it also runs started as a module worker
//   index.js          the main-thread facade (ESM), plus lazily imported chunks beside it: the
//                     inline-worker source (the worker above as a string, for a Blob URL) and the
//                     in-process delivery core
//   react.js          the React bindings
//   types/**.d.ts     the entries' declarations (main/index.d.ts, main/react/index.d.ts), from tsc:
//                     only the files those reach (scripts/reachable-declarations.mjs)
//
// Everything the client needs (comlink, superstruct, fflate, rrweb) is bundled: the package has
// no runtime dependency.
//
// Then prints the minified + gzipped sizes beside the budgets and the headroom left, and fails
// (exit 1) when a bundle is over its budget. The budgets live here, not in a test: a test that
// failed on the last few bytes stopped unrelated work, while this report shows the margin each
// time the client is built.
//
//   node scripts/build-client.mjs           build and check (npm run build:client)
//   node scripts/build-client.mjs --size    check only, nothing written (npm run size)
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { reachableDeclarations } from './reachable-declarations.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the client package's build goes. */
export const CLIENT_DIST = join(root, 'packages', 'service-analytics', 'dist');

/**
 * Size budgets, gzipped bytes. The main-thread entry's aim is 10 KB; its budget is 11 KB, so that
 * a small addition does not fail the build and the printed headroom shows how close it is.
 */
// The facade's budget was 11 KB until consent, memory persistence, super properties, groups,
// beforeSend and sampling: code that every page runs, in the emit funnel or before the core
// starts (docs/decisions.md, "Size budget").
export const BUDGETS = { facade: 12.5 * 1024, worker: 25 * 1024 };

// Browsers only: with 'es2020' in the list esbuild lowered class fields into a defineProperty
// helper, a chunk of its own that the facade had to load (0.2 KB gzipped); these browsers all
// have class fields. Chrome 91, not 90: esbuild rewrites every `a?.b` as `a == null ? void 0 : a.b`
// for Chrome 90 (a V8 bug fixed in 91), 151 B gzipped of the facade alone.
const TARGET = ['chrome91', 'firefox90', 'safari15'];

/**
 * The facade's chunks that a page runs while it starts are marked with V8's compile hint
 * (`//# allFunctionsCalledOnLoad`, first line): Chromium then compiles every function of the chunk
 * on the background thread that streams it, instead of compiling each one lazily on the main
 * thread at its first call inside `createAnalytics()` (docs/decisions.md, "Start-up"). Browsers
 * without the hint read a comment. Chunks under this size are left alone: the hint costs about
 * 20 bytes gzipped per file, more than their few functions cost to compile.
 */
const EAGER_COMPILE_MIN_BYTES = 4096;
const CALLED_ON_LOAD = '//# allFunctionsCalledOnLoad\n';

/** Prepends the compile hint to `name` and shifts its source map by the line it adds. */
function markCalledOnLoad(files, name) {
  files.set(name, CALLED_ON_LOAD + files.get(name));
  const mapName = `${name}.map`;
  const map = files.get(mapName);
  if (map === undefined) return;
  const parsed = JSON.parse(map);
  // One generated line more at the top: one empty line of mappings first.
  parsed.mappings = `;${parsed.mappings}`;
  files.set(mapName, JSON.stringify(parsed));
}

/**
 * The beacon's gzip (main/unload/gzip.ts) with fflate evaluated at its first call, not when its
 * chunk is: fflate builds its tables at module evaluation (a loop of 32,768 and several more),
 * and that chunk is evaluated while the client starts. fflate's gzip is bundled alone into a
 * function body that the module runs once, on the first beacon large enough to compress.
 * @returns the module's source
 */
async function lazyGzipModule() {
  const result = await build({
    absWorkingDir: root,
    stdin: {
      contents: `import { gzip } from './main/unload/gzip.ts';\nexport { gzip };\n`,
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    globalName: 'fflateGzip',
    platform: 'browser',
    target: TARGET,
    minify: true,
    write: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return `let gzipOnce;
export function gzip(data) {
  gzipOnce ??= (() => {
${result.outputFiles[0].text}
    return fflateGzip.gzip;
  })();
  return gzipOnce(data);
}
`;
}

/** Builds the worker; returns its code. */
async function buildWorker() {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['worker/entry.ts'],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: TARGET,
    minify: true,
    write: false,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return { code: result.outputFiles[0].text, metafile: result.metafile };
}

/**
 * Builds everything in memory.
 * @returns the files to write (path relative to the package's dist folder → contents), the facade's metafile,
 *   and the size rows.
 */
export async function buildClient() {
  const worker = await buildWorker();
  const inlineWorker = {
    name: 'inline-worker-source',
    setup(b) {
      // The source tree's placeholder says "no inline worker"; the build puts the worker in.
      b.onLoad({ filter: /[\\/]main[\\/]delivery[\\/]inline-worker-source\.ts$/ }, () => ({
        contents: `export const WORKER_SOURCE = ${JSON.stringify(worker.code)};`,
        loader: 'js',
      }));
    },
  };
  const lazyGzipSource = await lazyGzipModule();
  const lazyGzip = {
    name: 'lazy-gzip',
    setup(b) {
      b.onLoad({ filter: /[\\/]main[\\/]unload[\\/]gzip\.ts$/ }, () => ({ contents: lazyGzipSource, loader: 'js' }));
    },
  };
  const facade = await build({
    absWorkingDir: root,
    entryPoints: { index: 'main/index.ts', react: 'main/react/index.ts' },
    // React is the app's (a peer dependency), never bundled into ours.
    external: ['react', 'react/jsx-runtime', 'react-dom'],
    jsx: 'automatic',
    outdir: 'dist/client',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: TARGET,
    minify: true,
    sourcemap: 'linked',
    // Flat: the facade finds worker.js with new URL('./worker.js', import.meta.url) from any chunk.
    chunkNames: '[name]-[hash]',
    write: false,
    metafile: true,
    legalComments: 'none',
    plugins: [inlineWorker, lazyGzip],
    logLevel: 'warning',
  });

  const files = new Map([['worker.js', worker.code]]);
  for (const file of facade.outputFiles) files.set(relative(join(root, 'dist/client'), file.path), file.text);
  // Next.js needs this directive first in the React entry; make sure the bundler kept it.
  const reactEntry = files.get('react.js');
  if (!/^["']use client["']/.test(reactEntry)) files.set('react.js', `"use client";\n${reactEntry}`);

  const outputs = facade.metafile.outputs;
  const key = (name) => `dist/client/${name}`;
  // The main-thread entry: index.js and every chunk it imports statically.
  const staticClosure = new Set();
  const visit = (path) => {
    if (staticClosure.has(path)) return;
    staticClosure.add(path);
    for (const imported of outputs[path]?.imports ?? []) if (imported.kind === 'import-statement') visit(imported.path);
  };
  visit(key('index.js'));
  for (const path of staticClosure) {
    const name = path.slice('dist/client/'.length);
    if (Buffer.byteLength(files.get(name)) >= EAGER_COMPILE_MIN_BYTES) markCalledOnLoad(files, name);
  }

  const gz = (text) => gzipSync(text, { level: 9 }).length;
  const rows = [];
  const facadeFiles = [...staticClosure].map((p) => p.slice('dist/client/'.length));
  rows.push({
    name: 'main-thread entry (index.js + static chunks)',
    files: facadeFiles,
    bytes: facadeFiles.reduce((n, f) => n + Buffer.byteLength(files.get(f)), 0),
    gzip: facadeFiles.reduce((n, f) => n + gz(files.get(f)), 0),
    budget: BUDGETS.facade,
  });
  rows.push({ name: 'worker (worker.js)', files: ['worker.js'], bytes: Buffer.byteLength(worker.code), gzip: gz(worker.code), budget: BUDGETS.worker });
  for (const [name, text] of files) {
    if (!name.endsWith('.js') || name === 'worker.js' || facadeFiles.includes(name)) continue;
    if (name === 'react.js') {
      rows.push({ name: 'React entry (react.js, React itself excluded)', files: [name], bytes: Buffer.byteLength(text), gzip: gz(text) });
      continue;
    }
    rows.push({ name: `lazy chunk ${name}`, files: [name], bytes: Buffer.byteLength(text), gzip: gz(text) });
  }
  const facadeInputs = [...staticClosure].flatMap((p) => Object.keys(outputs[p]?.inputs ?? {}));
  const renamed = contentNames(files);
  for (const row of rows) {
    row.files = row.files.map((f) => renamed.names.get(f) ?? f);
    row.name = row.name.replace(/[\w-]+-[A-Z0-9]{8}\.js/g, (f) => renamed.names.get(f) ?? f);
  }
  return { files: renamed.files, rows, facadeInputs, workerInputs: Object.keys(worker.metafile.inputs) };
}

const CHUNK = /^(.+)-([A-Z0-9]{8})\.js$/;

/**
 * Renames the chunks after their contents alone. esbuild's hash also covers the input paths
 * relative to the working directory, so a checkout whose node_modules lives elsewhere (a symlink,
 * a hoisted install) named the chunks of npm packages differently, and a cache keyed on names
 * missed between CI builds. A chunk's new hash covers its text with the chunks it names already
 * renamed, so a change anywhere still renames everything that leads to it; chunks that name each
 * other (a cycle) are hashed together. Every file's text (entries and source maps included) gets
 * the new names.
 * @param {Map<string, string>} files path → text, as built
 * @returns {{ files: Map<string, string>, names: Map<string, string> }} the renamed files, and old → new names
 */
export function contentNames(files) {
  const chunks = [...files.keys()].filter((name) => CHUNK.test(name)).sort();
  const stem = (name) => name.slice(0, -'.js'.length);
  const mentions = new Map(chunks.map((name) => [name, chunks.filter((other) => other !== name && files.get(name).includes(stem(other)))]));

  // Tarjan's strongly connected components: each component comes after every one it reaches.
  const index = new Map();
  const low = new Map();
  const stack = [];
  const components = [];
  const visit = (name) => {
    index.set(name, index.size);
    low.set(name, index.get(name));
    stack.push(name);
    for (const next of mentions.get(name)) {
      if (!index.has(next)) {
        visit(next);
        low.set(name, Math.min(low.get(name), low.get(next)));
      } else if (stack.includes(next)) low.set(name, Math.min(low.get(name), index.get(next)));
    }
    if (low.get(name) === index.get(name)) {
      const component = [];
      for (let member = stack.pop(); ; member = stack.pop()) {
        component.push(member);
        if (member === name) break;
      }
      components.push(component.sort());
    }
  };
  for (const name of chunks) if (!index.has(name)) visit(name);

  const names = new Map();
  const rename = (text) => {
    for (const [from, to] of names) text = text.split(stem(from)).join(stem(to));
    return text;
  };
  for (const component of components) {
    // Inside a component the names are left out of the hash (each depends on the others');
    // names outside it are already final.
    const inside = (text) => component.reduce((t, member) => t.split(stem(member)).join(CHUNK.exec(member)[1]), text);
    const hash = createHash('sha256');
    for (const member of component) hash.update(`${CHUNK.exec(member)[1]}\0${inside(rename(files.get(member)))}\0`);
    const digest = hash.digest();
    // Each member by the component's hash and its own text (two members may share a base name).
    for (const member of component) {
      const own = createHash('sha256').update(digest).update(inside(rename(files.get(member)))).digest();
      names.set(member, `${CHUNK.exec(member)[1]}-${base32(own).slice(0, 8)}.js`);
    }
  }
  const out = new Map();
  for (const [name, text] of files) {
    const mapOf = name.endsWith('.js.map') ? name.slice(0, -'.map'.length) : undefined;
    const renamedName = mapOf !== undefined && names.has(mapOf) ? `${names.get(mapOf)}.map` : (names.get(name) ?? name);
    out.set(renamedName, rename(text));
  }
  return { files: out, names };
}

/** RFC 4648 base32 (A–Z, 2–7), as esbuild's own hashes look. */
function base32(bytes) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** One sentence per row over its budget; empty when every budgeted row fits. */
export function overBudget(rows) {
  return rows
    .filter((row) => row.budget !== undefined && row.gzip > row.budget)
    .map((row) => `over budget: ${row.name} is ${row.gzip} B gzipped, budget ${row.budget} B (${row.gzip - row.budget} B over)`);
}

function printTable(rows) {
  const kb = (n) => `${(n / 1024).toFixed(2)} KB`;
  const lines = [['bundle', 'minified', 'gzipped', 'budget (gzipped)', 'headroom']];
  for (const row of rows) {
    const budgeted = row.budget !== undefined;
    lines.push([row.name, kb(row.bytes), kb(row.gzip), budgeted ? kb(row.budget) : '-', budgeted ? `${row.budget - row.gzip} B` : '-']);
  }
  const widths = lines[0].map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  for (const [i, line] of lines.entries()) {
    console.log(line.map((cell, j) => (j === 0 ? cell.padEnd(widths[j]) : cell.padStart(widths[j]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

/** The entries' declarations, relative to dist/types (package.json's `types` conditions). */
const TYPES_ENTRIES = ['main/index.d.ts', 'main/react/index.d.ts'];

/** Emits the declarations into a scratch folder and copies the entries' reachable ones to `types`; returns their count. */
function buildTypes(types) {
  const scratch = mkdtempSync(join(tmpdir(), 'sa-client-types-'));
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', join(root, 'scripts/tsconfig.client-types.json'), '--outDir', scratch], { stdio: 'inherit', cwd: root });
    const files = reachableDeclarations(scratch, TYPES_ENTRIES);
    for (const file of files) {
      mkdirSync(dirname(join(types, file)), { recursive: true });
      cpSync(join(scratch, file), join(types, file));
    }
    return files.length;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main() {
  const sizeOnly = process.argv.includes('--size');
  const { files, rows } = await buildClient();
  if (!sizeOnly) {
    rmSync(CLIENT_DIST, { recursive: true, force: true });
    mkdirSync(CLIENT_DIST, { recursive: true });
    for (const [name, text] of files) writeFileSync(join(CLIENT_DIST, name), text);
    const typeCount = buildTypes(join(CLIENT_DIST, 'types'));
    console.log(`built ${relative(root, CLIENT_DIST)} (${[...files.keys()].filter((f) => f.endsWith('.js')).join(', ')}) and ${typeCount} declaration files in types/`);
  }
  printTable(rows);
  for (const row of rows) if (row.budget !== undefined) console.log(`${row.name}: ${row.gzip} B of ${row.budget} B gzipped`);
  const over = overBudget(rows);
  if (over.length > 0) {
    for (const line of over) console.error(line);
    process.exit(1);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
