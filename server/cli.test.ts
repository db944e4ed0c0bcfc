import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, startServerProcess } from '../test-support/server/cli-process.js';
import { makeEvent } from '../test-support/server/test-server.js';

interface Created {
  projectId: string;
  writeKey: string;
  readKey: string;
  /** The write key under its earlier name. */
  apiKey: string;
}

function post(url: string, project: { projectId: string }, key: string, body: unknown) {
  return fetch(`${url}/api/v1/events/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `ApiKey ${key}`, 'x-project-id': project.projectId },
    body: JSON.stringify(body),
  });
}

describe('service-analytics-server CLI on SQLite', () => {
  let cli: string;
  let dir: string;
  let db: string;
  beforeAll(async () => {
    cli = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'sa-cli-'));
    db = join(dir, 'nested', 'analytics.db');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--help, -h, help and no arguments print the usage to stdout and exit 0; --version prints the version', async () => {
    const { SERVER_VERSION } = await import('./version.js');
    for (const args of [['--help'], ['-h'], ['help'], []]) {
      const out = await runCli(cli, args);
      expect(out.code).toBe(0);
      expect(out.stdout).toMatch(/^Usage: service-analytics-server <command> \[options\]/);
      expect(out.stderr).toBe('');
    }
    const version = await runCli(cli, ['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${SERVER_VERSION}\n` });
  });

  it('the help table is aligned: every option row starts its description and its variable in one column', async () => {
    const out = await runCli(cli, ['--help']);
    const rows = out.stdout.split('Options (each also an environment variable):\n')[1]!.split('\n').filter(Boolean);
    const descriptionColumn = new Set(rows.map((row) => /^ {2}(?:\S.*?\s{2,}|\s+)(\S)/.exec(row)!.index + /^ {2}(?:\S.*?\s{2,}|\s+)/.exec(row)![0].length));
    expect(descriptionColumn.size).toBe(1);
    const variableColumns = new Set(rows.filter((row) => / SA_/.test(row)).map((row) => row.indexOf(' SA_')));
    expect(variableColumns.size).toBe(1);
  });

  it('a bad flag is named and exits 2, with a pointer to --help', async () => {
    const unknown = await runCli(cli, ['project', 'list', '--bogus']);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^Unknown option --bogus\.\n\nRun service-analytics-server --help/);
    expect((await runCli(cli, ['project', 'create', '--name'])).stderr).toMatch(/^--name needs a value\./);
    expect((await runCli(cli, ['project', 'list', '--json=yes'])).stderr).toMatch(/^--json takes no value\./);
  });

  it('project create --json prints exactly one line with the project id and both keys', async () => {
    const out = await runCli(cli, ['project', 'create', '--name', 'Shop', '--json', '--db', db]);
    expect(out.code).toBe(0);
    const lines = out.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0] ?? '') as Created;
    expect(Object.keys(created)).toEqual(['projectId', 'writeKey', 'readKey', 'apiKey']);
    expect(created.writeKey).toMatch(/^sa_w_/);
    expect(created.apiKey).toBe(created.writeKey);
    expect(created.readKey).toMatch(/^sa_r_/);
  });

  it('stores keys only as hashes', async () => {
    const out = await runCli(cli, ['project', 'create', '--name', 'Hashed', '--json', '--db', db]);
    const created = JSON.parse(out.stdout) as Created;
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(db).toString('latin1') + readFileSync(`${db}-wal`, { flag: 'a+' }).toString('latin1');
    expect(bytes).not.toContain(created.apiKey);
    expect(bytes).not.toContain(created.readKey);
  });

  it('lists projects, reads options from the environment, and refuses bad usage with exit 2', async () => {
    const list = await runCli(cli, ['project', 'list', '--json'], { SA_DB: db });
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as Array<{ name: string }>).map((p) => p.name)).toContain('Shop');
    const bad = await runCli(cli, ['project', 'create', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--name is required');
    const unknown = await runCli(cli, ['frobnicate']);
    expect(unknown.code).toBe(2);
  });

  it('starts, serves with the created keys, rotates and revokes keys at once, and stops on SIGTERM', async () => {
    const created = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Live', '--bots', 'keep', '--json', '--db', db])).stdout) as Created;
    const server = await startServerProcess(cli, [], { SA_DB: db });
    try {
      expect(server.log()).toMatch(/"msg":"listening","address":"http:\/\/127\.0\.0\.1:\d+"/);
      expect((await post(server.url, created, created.apiKey, [makeEvent()])).status).toBe(200);

      const rotated = JSON.parse(
        (await runCli(cli, ['key', 'rotate', '--project', created.projectId, '--kind', 'write', '--json', '--db', db])).stdout,
      ) as { key: string; revoked: string[] };
      expect(rotated.revoked).toHaveLength(1);
      const old = await post(server.url, created, created.apiKey, [makeEvent()]);
      expect(old.status).toBe(401);
      expect(await old.json()).toMatchObject({ code: 'AUTH_ERROR' });
      expect((await post(server.url, created, rotated.key, [makeEvent()])).status).toBe(200);

      const extra = JSON.parse(
        (await runCli(cli, ['key', 'create', '--project', created.projectId, '--kind', 'write', '--json', '--db', db])).stdout,
      ) as { key: string; keyId: string };
      expect((await post(server.url, created, extra.key, [makeEvent()])).status).toBe(200);
      const revoke = await runCli(cli, ['key', 'revoke', '--key-id', extra.keyId, '--db', db]);
      expect(revoke.code).toBe(0);
      expect((await post(server.url, created, extra.key, [makeEvent()])).status).toBe(401);
      expect((await post(server.url, created, rotated.key, [makeEvent()])).status).toBe(200);

      const keys = JSON.parse((await runCli(cli, ['key', 'list', '--project', created.projectId, '--json', '--db', db])).stdout) as Array<{ revokedAt: number | null }>;
      expect(keys.filter((k) => k.revokedAt === null)).toHaveLength(2); // the rotated write key and the read key
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    expect(server.log()).toContain('"msg":"stopped"');
    expect(server.log()).not.toContain(created.apiKey);
  });

  it('prune --retention-days deletes old events and keeps new ones', async () => {
    const created = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Old', '--bots', 'keep', '--json', '--db', db])).stdout) as Created;
    const server = await startServerProcess(cli, ['--db', db]);
    const old = makeEvent({ timestamp: new Date(Date.now() - 40 * 86_400_000).toISOString() });
    const fresh = makeEvent();
    try {
      expect((await post(server.url, created, created.apiKey, [old, fresh])).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const pruned = await runCli(cli, ['prune', '--retention-days', '30', '--json', '--db', db]);
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ events: 1 });
  });

  it('project create --bots and project set ID --bots set the bot policy; a bad value or project is named', async () => {
    const byDefault = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Bots', '--json', '--db', db])).stdout) as Created;
    const flagged = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Flag', '--bots', 'flag', '--json', '--db', db])).stdout) as Created;
    const policies = async () => {
      const list = JSON.parse((await runCli(cli, ['project', 'list', '--json', '--db', db])).stdout) as Array<{ id: string; bots: string }>;
      return Object.fromEntries(list.filter((p) => p.id === byDefault.projectId || p.id === flagged.projectId).map((p) => [p.id, p.bots]));
    };
    expect(await policies()).toEqual({ [byDefault.projectId]: 'flag', [flagged.projectId]: 'flag' });
    const set = await runCli(cli, ['project', 'set', byDefault.projectId, '--bots', 'keep', '--json', '--db', db]);
    expect([set.code, JSON.parse(set.stdout)]).toEqual([0, { projectId: byDefault.projectId, bots: 'keep' }]);
    expect(await policies()).toEqual({ [byDefault.projectId]: 'keep', [flagged.projectId]: 'flag' });
    expect((await runCli(cli, ['project', 'list', '--db', db])).stdout).toMatch(new RegExp(`^${byDefault.projectId}\tBots\t\\S+\tbots keep$`, 'm'));

    const bad = await runCli(cli, ['project', 'create', '--name', 'X', '--bots', 'block', '--db', db]);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([2, '--bots must be drop, flag, keep; not "block".']);
    expect((await runCli(cli, ['project', 'set', 'proj_missing', '--bots', 'flag', '--db', db])).stderr).toMatch(/^No project proj_missing\./);
    expect((await runCli(cli, ['project', 'set', byDefault.projectId, '--db', db])).stderr).toMatch(/^project set needs a setting to change/);
    expect((await runCli(cli, ['project', 'set', '--bots', 'flag', '--db', db])).stderr).toMatch(/^project set needs the project id/);
    const help = (await runCli(cli, ['--help'])).stdout;
    for (const text of ['project set ID --bots drop|flag|keep', '--bots drop|flag|keep', 'export --project ID', 'delete-user --project ID USER_ID', '--base-path P', 'SA_BASE_PATH']) {
      expect(help).toContain(text);
    }
  });

  it('export writes every event as NDJSON oldest first, to --out or stdout, within --from/--to; delete-user deletes a user', async () => {
    const created = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Export', '--json', '--db', db])).stdout) as Created;
    const { createSqliteStore } = await import('./store/sqlite/sqlite-store.js');
    const { makeEvent: storedEvent } = await import('../test-support/store/event-store.fixtures.js');
    const store = createSqliteStore({ path: db });
    await store.init();
    const t0 = Date.parse('2026-03-01T00:00:00.000Z');
    // More than one export page (1000), so the CLI walks pages.
    const events = Array.from({ length: 1203 }, (_, n) =>
      storedEvent(created.projectId, n, { timestamp: t0 + n * 1000, userId: n % 100 === 0 ? 'erase-me' : 'stay' }),
    );
    await store.write({ events, chunks: [] });
    await store.close();

    const out = join(dir, 'export.ndjson');
    const toFile = await runCli(cli, ['export', '--project', created.projectId, '--out', out, '--db', db]);
    expect([toFile.code, toFile.stderr]).toEqual([0, `Exported 1203 events to ${out}.\n`]);
    const { readFileSync, statSync } = await import('node:fs');
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const lines = readFileSync(out, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as { event_id: string }).event_id)).toEqual(events.map((e) => e.eventId));

    const ranged = await runCli(cli, ['export', '--project', created.projectId, '--from', new Date(t0 + 10_000).toISOString(), '--to', String(t0 + 20_000), '--db', db]);
    const rangedIds = ranged.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { event_id: string }).event_id);
    expect(rangedIds).toEqual(events.slice(10, 20).map((e) => e.eventId));
    expect((await runCli(cli, ['export', '--project', created.projectId, '--from', 'soon', '--db', db])).code).toBe(2);
    expect((await runCli(cli, ['export', '--project', 'proj_missing', '--db', db])).stderr).toMatch(/^No project proj_missing\./);

    const deleted = await runCli(cli, ['delete-user', '--project', created.projectId, 'erase-me', '--json', '--db', db]);
    expect(JSON.parse(deleted.stdout)).toEqual({ projectId: created.projectId, userId: 'erase-me', events: 13, recordings: 0 });
    const after = await runCli(cli, ['export', '--project', created.projectId, '--db', db]);
    expect(after.stdout.trim().split('\n')).toHaveLength(1190);
    expect(after.stdout).not.toContain('erase-me');
    expect((await runCli(cli, ['delete-user', '--project', created.projectId, '--db', db])).stderr).toMatch(/^delete-user needs the user id/);
  });

  it('key create --kind admin makes the key that erases and exports; the read key of project create does neither', async () => {
    const created = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Admin', '--json', '--db', db])).stdout) as Created;
    const plain = await runCli(cli, ['project', 'create', '--name', 'Told', '--db', db]);
    expect(plain.stdout).toMatch(/erasure and export over HTTP take an admin key: key create --project proj_\w+ --kind admin/);
    const admin = JSON.parse((await runCli(cli, ['key', 'create', '--project', created.projectId, '--kind', 'admin', '--json', '--db', db])).stdout) as { key: string; kind: string };
    expect([admin.kind, admin.key.startsWith('sa_a_')]).toEqual(['admin', true]);
    const server = await startServerProcess(cli, ['--db', db]);
    try {
      const erase = (key: string) => fetch(`${server.url}/api/v1/users/nobody`, { method: 'DELETE', headers: { authorization: `ApiKey ${key}`, 'x-project-id': created.projectId } });
      expect((await erase(created.readKey)).status).toBe(401);
      expect(await (await erase(admin.key)).json()).toEqual({ success: true, events: 0, recordings: 0 });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const read = await runCli(cli, ['key', 'create', '--project', created.projectId, '--kind', 'read', '--db', db]);
    expect(read.stdout).toMatch(/^New read key key_\w+: sa_r_\w+\nA read key reads reports and events; erasure and export over HTTP take an admin key \(--kind admin\)\.\n$/);
    const bad = await runCli(cli, ['key', 'create', '--project', created.projectId, '--kind', 'root', '--db', db]);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([2, '--kind must be write, read or admin.']);
    expect((await runCli(cli, ['--help'])).stdout).toContain('key create --project ID --kind write|read|admin');
  });

  it('start --trust-proxy takes a list (bare: loopback), --durability full|relaxed, --read-budget-ms, --no-keep-filters-ahead; bad values are named', async () => {
    for (const args of [['--trust-proxy', '--durability', 'relaxed', '--read-budget-ms', '5000', '--no-keep-filters-ahead'], ['--trust-proxy', '127.0.0.1,10.0.0.0/8', '--durability', 'full'], ['--trust-proxy']]) {
      const server = await startServerProcess(cli, ['--db', db, ...args]);
      try {
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    }
    // Before it took a list it was a boolean: SA_TRUST_PROXY=0 or false still means no proxy.
    for (const off of ['0', 'false']) {
      const server = await startServerProcess(cli, ['--db', db], { SA_TRUST_PROXY: off });
      try {
        expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    }
    const badList = await runCli(cli, ['start', '--db', db, '--trust-proxy', '10.0.0.0/33']);
    expect([badList.code, badList.stderr.split('\n')[0]]).toEqual([2, '--trust-proxy: "10.0.0.0/33" is not an IP address or a CIDR range (like 10.0.0.0/8).']);
    const badDurability = await runCli(cli, ['start', '--db', db, '--durability', 'fast']);
    expect([badDurability.code, badDurability.stderr.split('\n')[0]]).toEqual([2, '--durability must be full or relaxed, not "fast".']);
    // A port in use is named with the flag and variable that change it.
    const holder = await startServerProcess(cli, ['--db', db]);
    try {
      const taken = await runCli(cli, ['start', '--db', db, '--port', new URL(holder.url).port]);
      expect([taken.code, taken.stderr]).toEqual([1, expect.stringMatching(/^Port \d+ on 127\.0\.0\.1 is in use: stop what listens there, or choose another port \(--port N, SA_PORT\)\./)]);
    } finally {
      holder.child.kill('SIGTERM');
      await holder.exited;
    }
    const badBudget = await runCli(cli, ['start', '--db', db, '--read-budget-ms', '0']);
    expect([badBudget.code, badBudget.stderr.split('\n')[0]]).toEqual([2, '--read-budget-ms must be at least 1.']);
    const demoBehindProxy = await runCli(cli, ['start', '--db', db, '--demo', '--trust-proxy']);
    expect([demoBehindProxy.code, demoBehindProxy.stderr]).toEqual([1, expect.stringMatching(/does not run behind a proxy/)]);
  });

  it('start --base-path serves the API under the prefix only, operations at the root; a bad prefix is named', async () => {
    const created = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'Prefixed', '--bots', 'keep', '--json', '--db', db])).stdout) as Created;
    const server = await startServerProcess(cli, ['--db', db, '--base-path', '/stats/']);
    try {
      expect(server.log()).toContain('"basePath":"/stats"');
      expect((await post(`${server.url}/stats`, created, created.apiKey, [makeEvent()])).status).toBe(200);
      const root = await post(server.url, created, created.apiKey, [makeEvent()]);
      expect([root.status, ((await root.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/stats/healthz`)).status).toBe(404);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const bad = await runCli(cli, ['start', '--db', db, '--base-path', 'stats/../x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^--base-path: The base path must look like \/stats/);
  });
});

/** A port on 127.0.0.1 that nobody listens on: one the system just gave out, closed again. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** An HTTP server on 127.0.0.1 answering every request with `answer`; resolves with its base URL and a stop. */
async function httpServer(answer: (url: string, res: ServerResponse) => void): Promise<{ url: string; stop: () => Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    answer(req.url ?? '/', res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Each case below must end the process on its own: the test's timeout is the bound on a hang.
describe('service-analytics-server CLI with --clickhouse-url', () => {
  let cli: string;
  let dir: string;
  let db: string;
  let nobody: string;
  beforeAll(async () => {
    cli = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'sa-cli-ch-'));
    db = join(dir, 'config.db');
    nobody = `http://sa:ch-secret-pw@127.0.0.1:${await closedPort()}/service_analytics`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is in --help with its environment variable', async () => {
    const help = (await runCli(cli, ['--help'])).stdout;
    expect(help).toMatch(/^ {2}--clickhouse-url URL +events, recordings, reports in ClickHouse +SA_CLICKHOUSE_URL$/m);
  });

  it('start fails at once, naming ClickHouse and the address without its password, when nothing listens there (flag or SA_CLICKHOUSE_URL)', async () => {
    for (const [args, env] of [[['--clickhouse-url', nobody], {}], [[], { SA_CLICKHOUSE_URL: nobody }]] as const) {
      const out = await runCli(cli, ['start', '--port', '0', '--db', db, ...args], env);
      expect([out.code, out.stdout]).toEqual([1, '']);
      expect(out.stderr).toMatch(/^ClickHouse at http:\/\/sa:\*\*\*@127\.0\.0\.1:\d+\/service_analytics does not answer \(ECONNREFUSED\): check --clickhouse-url \(SA_CLICKHOUSE_URL\)/);
      expect(out.stderr).not.toContain('ch-secret-pw');
    }
  }, 20_000);

  it('start names a server that is not ClickHouse, and ClickHouse refusing the user, and exits', async () => {
    const other = await httpServer((_, res) => res.end('<html>a web server</html>'));
    // What ClickHouse answers a wrong password: /ping needs no user, every statement does.
    const refusing = await httpServer((url, res) => {
      if (url === '/ping') return void res.end('Ok.\n');
      res.writeHead(516, { 'X-ClickHouse-Exception-Code': '516' });
      res.end('Code: 516. DB::Exception: sa: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED) (version 24.8.4.13 (official build))\n');
    });
    try {
      const notClickHouse = await runCli(cli, ['start', '--port', '0', '--db', db, '--clickhouse-url', `${other.url}/sa`]);
      expect([notClickHouse.code, notClickHouse.stderr.split('\n')[0]]).toEqual([
        1,
        `${other.url}/sa is not ClickHouse's HTTP interface: GET /ping answered 200 "<html>a web server</html>" (ClickHouse answers "Ok."; its HTTP port is 8123 by default, 9000 is the native protocol's).`,
      ]);
      const refused = await runCli(cli, ['start', '--port', '0', '--db', db, '--clickhouse-url', `${refusing.url.replace('//', '//sa:wrong-pw@')}/sa`]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^ClickHouse at http:\/\/sa:\*\*\*@127\.0\.0\.1:\d+\/sa refused to open the events' database: sa: Authentication failed/);
      expect(refused.stderr).not.toContain('wrong-pw');
    } finally {
      await other.stop();
      await refusing.stop();
    }
  }, 20_000);

  it('refuses an address that is not http(s) with exit 2', async () => {
    const bad = await runCli(cli, ['start', '--db', db, '--clickhouse-url', 'clickhouse://127.0.0.1:9000']);
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([2, "--clickhouse-url must be an http:// or https:// URL (ClickHouse's HTTP interface, port 8123 by default), not clickhouse://…"]);
    const notUrl = await runCli(cli, ['export', '--project', 'p', '--db', db, '--clickhouse-url', '127.0.0.1:8123']);
    expect([notUrl.code, notUrl.stderr.split('\n')[0]]).toEqual([2, '--clickhouse-url must be a URL like http://user:password@127.0.0.1:8123/service_analytics.']);
  });

  it('backup and restore refuse it with exit 2, pointing to ClickHouse\'s own backups', async () => {
    for (const [args, env] of [[['backup', '--to', join(dir, 'copy.db'), '--clickhouse-url', nobody], {}], [['restore', '--from', join(dir, 'copy.db')], { SA_CLICKHOUSE_URL: nobody }]] as const) {
      const out = await runCli(cli, [...args, '--db', db], env);
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(/^(backup|restore) copies a SQLite database, not ClickHouse, where --clickhouse-url \(SA_CLICKHOUSE_URL\) puts the events: use ClickHouse's own BACKUP and RESTORE/);
      expect(out.stderr).not.toContain('ch-secret-pw');
    }
    expect(existsSync(join(dir, 'copy.db'))).toBe(false);
  });

  it('project and key commands use only --db; export, prune and delete-user need ClickHouse', async () => {
    const env = { SA_CLICKHOUSE_URL: nobody };
    const created = await runCli(cli, ['project', 'create', '--name', 'Config only', '--json', '--db', db], env);
    expect(created.code).toBe(0);
    const { projectId } = JSON.parse(created.stdout) as Created;
    expect((await runCli(cli, ['key', 'list', '--project', projectId, '--json', '--db', db], env)).code).toBe(0);
    for (const args of [['export', '--project', projectId], ['prune', '--retention-days', '30'], ['delete-user', '--project', projectId, 'someone']]) {
      const out = await runCli(cli, [...args, '--db', db], env);
      expect([args[0], out.code, out.stderr.split(' does not answer')[0]]).toEqual([args[0], 1, expect.stringMatching(/^ClickHouse at http:\/\/sa:\*\*\*@127\.0\.0\.1:\d+\/service_analytics$/)]);
    }
  }, 20_000);

  // A real server, when one is given (docs/deploy.md, "ClickHouse"): the start line of that page.
  it.skipIf(process.env.CLICKHOUSE_URL === undefined)('start with a real ClickHouse (CLICKHOUSE_URL) stores events there and says so in its listening line', async () => {
    const { createHttpTransport } = await import('./store/index.js');
    const database = `sa_test_cli_${process.pid}`;
    const base = new URL(process.env.CLICKHOUSE_URL as string);
    base.pathname = `/${database}`;
    const created = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'On ClickHouse', '--bots', 'keep', '--json', '--db', db])).stdout) as Created;
    const server = await startServerProcess(cli, ['--db', db, '--clickhouse-url', base.toString()]);
    try {
      expect(server.log()).toMatch(/"msg":"listening","address":"[^"]+","store":"clickhouse","configStore":"sqlite"/);
      const event = makeEvent();
      expect((await post(server.url, created, created.writeKey, [event])).status).toBe(200);
      expect((await post(server.url, created, created.writeKey, [event])).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toBe(0);
    try {
      const exported = await runCli(cli, ['export', '--project', created.projectId, '--db', db, '--clickhouse-url', base.toString()]);
      expect([exported.code, exported.stdout.trim().split('\n')]).toEqual([0, [expect.any(String)]]);
    } finally {
      const transport = createHttpTransport({ url: process.env.CLICKHOUSE_URL as string });
      await transport.command(`DROP DATABASE IF EXISTS ${database}`).finally(() => transport.close());
    }
  }, 60_000);
});
