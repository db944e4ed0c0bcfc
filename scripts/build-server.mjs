// Builds the server, the package `service-analytics-server`, into
// packages/service-analytics-server/dist:
//
//   cli.js          the CLI behind the `service-analytics-server` bin
//   index.js        the embeddable entry (createApp, serve, the stores, the logger, the key helpers)
//   types/**.d.ts   the entry's declarations (types/server/index.d.ts), from tsc
//   dashboard/      the dashboard app (dashboard/), built by Vite, which `start` serves at /dashboard/
//
//   node scripts/build-server.mjs                  everything above (npm run build:server)
//   node scripts/build-server.mjs --no-dashboard   all but dashboard/, which stays as it is (npm
//                                                  start builds the dashboard on its own, when its
//                                                  sources changed: scripts/build-plan.mjs)
//
// Its npm dependencies stay external: the package lists them. tsc emits a declaration for every
// file the entry reaches, internals included; only those that the entry's declarations reach
// through their own imports ship, so a user's compiler never loads a store's internals (which name
// better-sqlite3's and pg's types). What they do name beyond our own types is Koa (`AnalyticsApp`
// is a Koa app, whose types the package therefore depends on) and Node's `http`.
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { reachableDeclarations } from './reachable-declarations.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'packages', 'service-analytics-server', 'dist');
/** The entry's declaration, relative to dist/types. */
const TYPES_ENTRY = 'server/index.d.ts';

/** Emits the declarations into a scratch folder and copies the entry's reachable ones to `types`. */
async function buildTypes(types) {
  const scratch = mkdtempSync(join(tmpdir(), 'sa-server-types-'));
  try {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'scripts/tsconfig.server-types.json'), '--outDir', scratch], { cwd: root }).catch((error) => {
      // tsc reports its errors on stdout.
      throw new Error(`tsc could not emit the server's declarations:\n${error.stdout || error.message}`);
    });
    const files = reachableDeclarations(scratch, [TYPES_ENTRY]);
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
  const dashboard = !process.argv.includes('--no-dashboard');
  if (dashboard) rmSync(outdir, { recursive: true, force: true });
  else for (const entry of existsSync(outdir) ? readdirSync(outdir) : []) if (entry !== 'dashboard') rmSync(join(outdir, entry), { recursive: true, force: true });
  // tsc takes a few seconds; esbuild runs meanwhile.
  const [, , typeCount] = await Promise.all([
    dashboard && viteBuild({ configFile: join(root, 'dashboard/vite.config.ts'), logLevel: 'warn', build: { outDir: join(outdir, 'dashboard') } }),
    build({
      absWorkingDir: root,
      entryPoints: { cli: 'server/cli.ts', index: 'server/index.ts' },
      outdir,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: true,
      logLevel: 'warning',
    }),
    buildTypes(join(outdir, 'types')),
  ]);
  chmodSync(join(outdir, 'cli.js'), 0o755);
  console.log(`built ${relative(root, outdir)} (cli.js, index.js, ${typeCount} declaration files in types/${dashboard ? ', dashboard/' : ''})`);
}

await main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
