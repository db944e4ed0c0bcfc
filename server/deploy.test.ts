/**
 * docs/deploy.md's recipes, run: the environment table is the CLI's own option list; the systemd
 * unit passes `systemd-analyze verify` where the machine has it, and its command line and
 * environment start a real server (paths moved into a temporary directory) that SIGTERM stops
 * cleanly; the nginx site, with a certificate made here, carries a batch over TLS to that server,
 * which stores the address nginx saw, not the one the client wrote.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Nginx, requestFrom } from '../test-support/nginx.js';
import { buildCli } from '../test-support/server/cli-process.js';
import { repositoryFile as read, startNginxSite, startUnitServer, unitOf } from '../test-support/server/deploy-recipes.js';
import { makeEvent } from '../test-support/server/test-server.js';
import { OPTIONS, environmentTable } from './cli-options.js';

const run = promisify(execFile);

describe('docs/deploy.md', () => {
  it('holds the environment table of the CLI option list, and every variable the CLI reads is in it', () => {
    const page = read('docs/deploy.md');
    const block = /<!-- options:start -->\n([\s\S]*?)\n<!-- options:end -->/.exec(page)?.[1];
    expect(block, 'run: node scripts/run-ts.mjs scripts/write-options-table.ts').toBe(environmentTable());
    for (const [flag, spec] of Object.entries(OPTIONS)) {
      if ('env' in spec && !['SA_PROJECT_NAME', 'SA_PROJECT_ID'].includes(spec.env)) expect(block, flag).toContain(`\`${spec.env}`);
    }
  });
});

describe('deploy/service-analytics.service and deploy/nginx-site.conf', () => {
  let dir: string;
  let cli: string;
  let server: ChildProcess | undefined;
  let nginx: Nginx | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sa-deploy-'));
    cli = await buildCli();
  });
  afterAll(async () => {
    await nginx?.stop();
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the unit passes systemd-analyze verify, where the machine has it, with its paths on this machine', async () => {
    const text = read('deploy/service-analytics.service');
    const unit = unitOf(text);
    expect(unit.exec.slice(0, 2)).toEqual(['/usr/bin/node', '/opt/service-analytics/node_modules/service-analytics-server/dist/cli.js']);
    expect(unit.exec.slice(2)).toEqual(['start']);
    const verifier = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((path) => existsSync(path));
    if (verifier === undefined) return;
    const file = join(dir, 'service-analytics.service');
    writeFileSync(file, text.replace('/usr/bin/node', process.execPath).replace('/opt/service-analytics/node_modules/service-analytics-server/dist/cli.js', cli));
    const verified = await run(verifier, ['verify', file]).then(
      (out) => ({ code: 0, stderr: out.stderr }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? 1, stderr: error.stderr ?? '' }),
    );
    expect(verified).toEqual({ code: 0, stderr: '' });
  });

  it('starts from the unit command line and environment, and carries a batch over TLS through the nginx site, storing the address nginx saw', async () => {
    const started = await startUnitServer(cli, dir);
    server = started.child;
    const { env, project } = started;
    expect(started.log()).toContain('"basePath":"/stats"');
    const site = await startNginxSite(started.url, dir);
    nginx = site.nginx;
    const { base, ca } = site;
    const event = makeEvent();
    const sent = await requestFrom('127.0.0.5', `${base}/stats/api/v1/events/batch`, {
      method: 'POST',
      ca,
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.writeKey}`, 'x-project-id': project.projectId, 'x-forwarded-for': '203.0.113.66' },
      body: JSON.stringify([event]),
    });
    expect([sent.status, JSON.parse(sent.body)]).toEqual([200, { success: true, processed: 1 }]);
    // The API is only under the base path; the probes are not forwarded.
    expect((await requestFrom('127.0.0.5', `${base}/healthz`, { ca })).status).toBe(404);
    const db = new Database(env.SA_DB as string, { readonly: true });
    try {
      expect(db.prepare('SELECT ip_address FROM events WHERE event_id = ?').get(event.event_id)).toEqual({ ip_address: '127.0.0.0' });
    } finally {
      db.close();
    }

    // SIGTERM, as systemd stops it: a clean exit.
    const exited = new Promise<number | null>((resolve) => server?.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(started.log()).toContain('"msg":"stopped"');
  }, 60_000);
});
