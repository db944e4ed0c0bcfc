/**
 * The example app's Vite config: `npm run build:example` (`vite build --config
 * examples/app/vite.config.ts`) writes `dist/example`, which `npm start` serves.
 *
 * The app imports `service-analytics` and `service-analytics/react` as a user would; here they
 * resolve to the BUILT client (`packages/service-analytics/dist`, made by `npm run build:client`), never to the sources,
 * so the app exercises exactly what the package ships. `SA_EXAMPLE_CLIENT_DIR` points at another
 * build of the same files (the end-to-end tests use a private one); `SA_EXAMPLE_OUT_DIR` moves the
 * output.
 */
import { join, resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const appRoot = import.meta.dirname;
const repoRoot = resolve(appRoot, '../..');
const clientDir = resolve(process.env.SA_EXAMPLE_CLIENT_DIR ?? join(repoRoot, 'packages/service-analytics/dist'));
/** The server `npm start` runs, for `vite` dev mode (`npx vite examples/app`). */
const devServer = process.env.SA_EXAMPLE_SERVER ?? 'http://127.0.0.1:8787';

export default defineConfig({
  root: appRoot,
  // The repository's public/ is not the app's; the app has no static assets of its own.
  publicDir: false,
  plugins: [react()],
  resolve: {
    alias: [
      { find: /^service-analytics$/, replacement: join(clientDir, 'index.js') },
      { find: /^service-analytics\/react$/, replacement: join(clientDir, 'react.js') },
    ],
    // The client build imports React as a peer: one copy, the app's.
    dedupe: ['react', 'react-dom'],
  },
  build: {
    outDir: resolve(process.env.SA_EXAMPLE_OUT_DIR ?? join(repoRoot, 'dist/example')),
    emptyOutDir: true,
    sourcemap: true,
  },
  server: {
    // Dev mode talks to the running server (`npm start`) as if it were the same origin.
    proxy: { '/api/': devServer, '/demo/config.json': devServer },
  },
});
