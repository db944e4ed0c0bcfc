/**
 * What every browser test file starts in `beforeAll`: the real ingestion server on SQLite
 * (`startTestServer`), the static server with the client build (on another port: cross-origin),
 * and headless Chromium.
 */
import type { Browser } from 'playwright-core';
import { afterEach, inject } from 'vitest';
import { type TestServer, startTestServer } from '../server/test-server.js';
import { launchChromium } from '../chromium.js';
import { pageLog } from './harness.js';
import { type StaticServer, type StaticServerOptions, startStaticServer } from './static-server.js';

/** Everything a browser test file runs against. */
export interface BrowserTestEnvironment {
  server: TestServer;
  web: StaticServer;
  browser: Browser;
  /** Closes the browser and both servers. */
  close(): Promise<void>;
}

/**
 * Starts the environment. Every response of the static server carries `Referrer-Policy: unsafe-url`
 * so that a request's `Referer` names the realm that made it (see `request-origins.ts`).
 */
export async function startEnvironment(staticOptions: Omit<StaticServerOptions, 'clientDir'> = {}): Promise<BrowserTestEnvironment> {
  const server = await startTestServer('sqlite');
  const web = await startStaticServer({
    ...staticOptions,
    clientDir: inject('clientDir'),
    headers: { 'referrer-policy': 'unsafe-url', ...staticOptions.headers },
  });
  const browser = await launchChromium().catch(async (error: unknown) => {
    await Promise.allSettled([server.close(), web.close()]);
    throw error;
  });
  return {
    server,
    web,
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      await Promise.allSettled([web.close(), server.close()]);
    },
  };
}

/** Prints what the pages logged (console, uncaught errors) after a failed test; call once per file. */
export function printPageLogOnFailure(): void {
  afterEach((context) => {
    if (context.task.result?.state === 'fail' && pageLog.length > 0) console.log(`what the pages logged:\n${pageLog.join('\n')}`);
    pageLog.length = 0;
  });
}
