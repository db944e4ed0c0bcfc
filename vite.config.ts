import { defineConfig } from 'vitest/config';

/**
 * One config for the library build and the tests. Test projects follow runtime boundaries:
 * `node` for the server, the worker core and the protocol; `dom` (happy-dom) for main-thread code;
 * `browser` for end-to-end tests that drive the real Chromium against a real server.
 */
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['protocol/**/*.test.ts', 'server/**/*.test.ts', 'worker/**/*.test.ts', 'scripts/**/*.test.ts', 'bench/**/*.test.ts'],
          globalSetup: ['test-support/postgres-global-setup.ts'],
          // A bound on a test that hangs, not on its speed: the aggregate contract's cases through
          // late events, an erasure and retention took 41 s on PostgreSQL on a slower 2-core machine.
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'dom',
          environment: 'happy-dom',
          include: ['main/**/*.test.ts', 'main/**/*.test.tsx', 'dashboard/**/*.test.ts'],
          setupFiles: ['test-support/client/idle-callback.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          environment: 'node',
          include: ['examples/**/*.e2e.test.ts'],
          // Builds the client once per run (the real client package build, in a private directory).
          globalSetup: ['examples/browser-tests/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // One Chromium at a time: the machine has two cores.
          fileParallelism: false,
        },
      },
    ],
  },
});
