import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../postgres.js';
import { generateKey } from '../../server/api-keys.js';
import type { AppOptions } from '../../server/app.js';
import { silentLogger } from '../../server/logger.js';
import { type RunningServer, serve } from '../../server/serve.js';
import type { BotPolicy, EventStore } from '../../server/store/event-store.js';
import { openStore } from '../../server/store/open-store.js';

/** The two stores every server test runs against. */
export const STORE_KINDS = ['sqlite', 'postgres'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** A project with its keys, as the CLI would create it. */
export interface TestProject {
  id: string;
  writeKey: string;
  readKey: string;
  /** For erasure and export. */
  adminKey: string;
}

/** A real server on 127.0.0.1 and an ephemeral port, on a real database. */
export interface TestServer {
  url: string;
  store: EventStore;
  running: RunningServer;
  /** Where the database is: a SQLite path or a postgres:// URL. */
  location: string;
  project: TestProject;
  createProject(options?: TestProjectOptions): Promise<TestProject>;
  /** POSTs a JSON body to the batch endpoint with the project's write key. */
  postBatch(body: unknown, init?: { headers?: Record<string, string>; project?: TestProject }): Promise<Response>;
  close(): Promise<void>;
}

/** Opens a fresh, empty database of the given kind. */
export async function openTestStore(kind: StoreKind): Promise<{ store: EventStore; location: string; dispose(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sa-test-'));
    const location = join(dir, 'analytics.db');
    const store = await openStore(location);
    await store.init();
    return { store, location, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const db = await createTestDatabase();
  const store = await openStore(db.url);
  await store.init();
  return { store, location: db.url, dispose: () => db.drop() };
}

/** Settings of a test project. */
export interface TestProjectOptions {
  fullIp?: boolean;
  /**
   * Bot policy. Tests keep bots: their events come from headless Chromium driven by playwright
   * (`navigator.webdriver`), which the default policy, `flag`, would leave out of the reports.
   * Tests of bot filtering choose a policy. @default 'keep'
   */
  bots?: BotPolicy;
}

/** Creates a project and its three keys directly in the store. */
export async function createTestProject(store: EventStore, options: TestProjectOptions = {}): Promise<TestProject> {
  const now = Date.now();
  const id = `proj_test${Math.random().toString(36).slice(2, 10)}`;
  await store.createProject({ id, name: id, createdAt: now, fullIp: options.fullIp ?? false, corsOrigins: [], bots: options.bots ?? 'keep' });
  const write = generateKey(id, 'write', now);
  const read = generateKey(id, 'read', now);
  const admin = generateKey(id, 'admin', now);
  await store.createKey(write.record);
  await store.createKey(read.record);
  await store.createKey(admin.record);
  return { id, writeKey: write.key, readKey: read.key, adminKey: admin.key };
}

/** Starts a server of the given store kind with one project. */
export async function startTestServer(kind: StoreKind, options: Partial<AppOptions> = {}): Promise<TestServer> {
  const { store, location, dispose } = await openTestStore(kind);
  const project = await createTestProject(store);
  const running = await serve({ ...options, store, logger: options.logger ?? silentLogger, port: 0, host: '127.0.0.1' });
  return {
    url: running.url,
    store,
    running,
    location,
    project,
    createProject: (o) => createTestProject(store, o),
    postBatch(body, init = {}) {
      const p = init.project ?? project;
      return fetch(`${running.url}/api/v1/events/batch`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `ApiKey ${p.writeKey}`,
          'x-project-id': p.id,
          ...init.headers,
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    },
    async close() {
      await running.close();
      await dispose();
    },
  };
}

let counter = 0;

/** A valid backend event with a fresh id; `overrides` replace fields. */
export function makeEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  counter++;
  return {
    event_id: `evt-${process.pid}-${Date.now()}-${counter}`,
    event_type: 'button_clicked',
    user_id: 'user-1',
    session_id: 'session-1',
    timestamp: new Date().toISOString(),
    properties: { plan: 'pro', count: 3, beta: true, none: null },
    user_agent: 'test-agent',
    ...overrides,
  };
}
