// Bundles the server (its npm dependencies stay external) into dist/server: the CLI behind the
// `service-analytics-server` bin, and the `service-analytics/server` entry.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';

await build({
  entryPoints: { cli: 'server/cli.ts', index: 'server/index.ts' },
  outdir: 'dist/server',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
});
chmodSync('dist/server/cli.js', 0o755);
console.log('built dist/server (cli.js, index.js)');
