// Builds the server, the package `service-analytics-server`, into
// packages/service-analytics-server/dist: the CLI behind the `service-analytics-server` bin
// (cli.js) and the embeddable entry (index.js: createApp, the stores). Its npm dependencies stay
// external: the package lists them. (No type declarations yet: the stores' types reach into
// better-sqlite3's and pg's, which the package would have to carry.)
import { build } from 'esbuild';
import { chmodSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'packages', 'service-analytics-server', 'dist');

rmSync(outdir, { recursive: true, force: true });
await build({
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
});
chmodSync(join(outdir, 'cli.js'), 0o755);
console.log(`built ${relative(root, outdir)} (cli.js, index.js)`);
