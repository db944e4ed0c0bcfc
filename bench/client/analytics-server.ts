/**
 * Our ingestion server for the client benchmark: SQLite in a temporary directory, one project with
 * a write key, listening on 127.0.0.1 and an ephemeral port. Runs in the benchmark's process (the
 * browser is another process; the driver is idle while the page runs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey } from '../../server/api-keys.js';
import { silentLogger } from '../../server/logger.js';
import { serve } from '../../server/serve.js';
import type { EventStore } from '../../server/store/event-store.js';
import { openStore } from '../../server/store/open-store.js';

/** A running server with one project. */
export interface BenchServer {
  url: string;
  store: EventStore;
  /** Creates another project and returns its id and write key (one per measured run). */
  createProject(): Promise<{ id: string; writeKey: string }>;
  close(): Promise<void>;
}

/** Starts the server on a fresh SQLite file. */
export async function startBenchServer(): Promise<BenchServer> {
  const dir = mkdtempSync(join(tmpdir(), 'sa-client-bench-'));
  const store = openStore(join(dir, 'analytics.db'));
  await store.init();
  const running = await serve({ store, logger: silentLogger, port: 0, host: '127.0.0.1' });
  let projects = 0;
  return {
    url: running.url,
    store,
    async createProject() {
      const now = Date.now();
      const id = `proj_clientbench${++projects}`;
      // Headless Chromium under playwright is a bot to the server (navigator.webdriver, HeadlessChrome):
      // the benchmark's events must be stored, so its projects keep bots.
      await store.createProject({ id, name: id, createdAt: now, fullIp: false, corsOrigins: [], bots: 'keep' });
      const { key, record } = generateKey(id, 'write', now);
      await store.createKey(record);
      return { id, writeKey: key };
    },
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
