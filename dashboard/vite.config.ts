/**
 * The dashboard's Vite config: `npm run build:dashboard` writes
 * `packages/service-analytics-server/dist/dashboard`, which `service-analytics-server start` serves
 * at `/dashboard/` (under the base path when there is one). `SA_DASHBOARD_OUT_DIR` moves the output.
 *
 * Asset URLs are relative (`base: './'`) and routes live in the hash (`#/sessions`), so the same
 * build works under any mount path, with no rewrite on the server.
 */
import { join, resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const dashboardRoot = import.meta.dirname;
const repoRoot = resolve(dashboardRoot, '..');
/** The server `npm start` runs, for `vite` dev mode (`npx vite --config dashboard/vite.config.ts`). */
const devServer = process.env.SA_DASHBOARD_SERVER ?? 'http://127.0.0.1:8787';

export default defineConfig({
  root: dashboardRoot,
  base: './',
  publicDir: false,
  plugins: [react()],
  build: {
    outDir: resolve(process.env.SA_DASHBOARD_OUT_DIR ?? join(repoRoot, 'packages/service-analytics-server/dist/dashboard')),
    emptyOutDir: true,
    // The server package ships the built files, not maps of them.
    sourcemap: false,
    chunkSizeWarningLimit: 400,
  },
  server: {
    proxy: { '/api/': devServer, '/demo/config.json': devServer },
  },
});
