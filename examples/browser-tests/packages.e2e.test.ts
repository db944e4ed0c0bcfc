/**
 * The packages as a user gets them: `npm pack` of both workspaces (their `prepack` builds them),
 * the client tarball installed into a fresh Vite app that imports `service-analytics` and is built
 * with Vite, the server started from its own tarball (`service-analytics-server start`), and the
 * app loaded in Chromium: the worker the bundler emitted starts, the batch leaves from it, and the
 * server stores the event.
 *
 * Nothing is fetched from the registry: the fixture lives under this repository's
 * node_modules/.cache, so Vite, React and the server's dependencies resolve from the repository's
 * node_modules, while `service-analytics` and `service-analytics-server` resolve to the unpacked
 * tarballs beside the fixture (scripts/packages.test.ts checks that the server's package lists
 * every dependency it imports, and that the client's has none).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Request } from 'playwright-core';
import { type PreviewServer, build, preview } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../test-support/chromium.js';
import { type ServerProcess, runCli, startServerProcess } from '../../test-support/server/cli-process.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Unpacks tarball `file` into `<dir>/node_modules/<name>`. */
function install(tarball: string, dir: string, name: string): string {
  const target = join(dir, 'node_modules', name);
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  return target;
}

const APP_HTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>packaged client</title></head>
<body><p>packaged client</p><script type="module" src="/src/main.js"></script></body></html>`;

const APP_MAIN = `import { createAnalytics } from 'service-analytics';

const q = new URLSearchParams(location.search);
const analytics = createAnalytics({ apiKey: q.get('key'), projectId: q.get('project'), endpoint: q.get('endpoint'), enableAutoPageTracking: false });
window.packaged = {
  async send(run) {
    analytics.track('packaged_install', { run });
    await analytics.flush();
    return analytics.getDeliveryStats();
  },
};
`;

let work: string;
let server: ServerProcess | undefined;
let web: PreviewServer | undefined;
let project: { projectId: string; writeKey: string; readKey: string };
let tarballs: string[];

beforeAll(async () => {
  const cache = join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  work = mkdtempSync(join(cache, 'sa-packages-'));
  // Both packages, as `npm pack` makes them (prepack builds each).
  execFileSync('npm', ['pack', '-w', 'service-analytics', '-w', 'service-analytics-server', '--pack-destination', work], { cwd: ROOT, stdio: 'ignore' });
  tarballs = readdirSync(work).filter((f) => f.endsWith('.tgz'));
  const tarball = (prefix: string): string => join(work, tarballs.find((f) => new RegExp(`^${prefix}-\\d`).test(f))!);

  const app = join(work, 'app');
  mkdirSync(join(app, 'src'), { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'packaged-app', private: true, type: 'module' }));
  writeFileSync(join(app, 'index.html'), APP_HTML);
  writeFileSync(join(app, 'src', 'main.js'), APP_MAIN);
  install(tarball('service-analytics'), app, 'service-analytics');
  await build({ root: app, configFile: false, logLevel: 'warn', build: { outDir: join(app, 'dist') } });
  web = await preview({ root: app, configFile: false, logLevel: 'warn', build: { outDir: join(app, 'dist') }, preview: { host: '127.0.0.1', port: 0, strictPort: false, headers: { 'referrer-policy': 'unsafe-url' } } });

  const serverDir = install(tarball('service-analytics-server'), join(work, 'server'), 'service-analytics-server');
  const cli = join(serverDir, 'dist', 'cli.js');
  const db = join(work, 'data', 'analytics.db');
  const created = await runCli(cli, ['project', 'create', '--name', 'Packaged', '--json', '--db', db]);
  if (created.code !== 0) throw new Error(`project create failed: ${created.stderr}`);
  project = JSON.parse(created.stdout) as typeof project;
  server = await startServerProcess(cli, ['--db', db]);
}, 300_000);

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await web?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the packed packages in a fresh Vite app', () => {
  it('makes two tarballs', () => {
    expect(tarballs.sort()).toEqual([expect.stringMatching(/^service-analytics-\d+\.\d+\.\d+\.tgz$/), expect.stringMatching(/^service-analytics-server-\d+\.\d+\.\d+\.tgz$/)]);
  });

  it('Vite emits the worker; in Chromium the worker starts, sends the batch, and the server from its tarball stores it', async () => {
    const emitted = readdirSync(join(work, 'app', 'dist', 'assets'));
    expect(emitted.some((f) => /^worker-.+\.js$/.test(f))).toBe(true);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const batchReferers: string[] = [];
      page.on('request', (request: Request) => {
        if (request.method() === 'POST' && request.url().includes('/api/v1/events/batch')) {
          void request.headerValue('referer').then((value) => batchReferers.push(value ?? '(none)'));
        }
      });
      const base = web!.resolvedUrls!.local[0]!;
      const query = new URLSearchParams({ key: project.writeKey, project: project.projectId, endpoint: server!.url });
      await page.goto(`${base}?${query.toString()}`);
      await page.waitForFunction(() => 'packaged' in window, undefined, { timeout: 30_000 });
      const run = `run-${Date.now()}`;
      const stats = await page.evaluate((r) => (window as unknown as { packaged: { send(run: string): Promise<{ mode: string; strategy: string | null }> } }).packaged.send(r), run);
      expect(stats).toMatchObject({ mode: 'worker', strategy: 'shipped-worker' });

      const answer = await fetch(`${server!.url}/api/v1/events?event_type=packaged_install`, {
        headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.projectId },
      });
      const { events } = (await answer.json()) as { events: Array<{ properties: Record<string, unknown> }> };
      expect(events.map((e) => e.properties.run)).toEqual([run]);
      // The batch came from the worker Vite emitted, not from the page (the app is served with
      // `Referrer-Policy: unsafe-url`, so a request's Referer names the script that made it).
      expect(batchReferers.length).toBeGreaterThan(0);
      expect(batchReferers.every((referer) => /\/assets\/worker-[^/]+\.js$/.test(referer))).toBe(true);
    } finally {
      await browser.close();
    }
  });
});
