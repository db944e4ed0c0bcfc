import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from './api-keys.js';
import { type DemoProject, ensureDemoProject, isLoopbackAddress, isLoopbackHost } from './demo-project.js';
import type { EventStore } from './store/event-store.js';
import { buildCli, runCli, startServerProcess, type ServerProcess } from '../test-support/server/cli-process.js';
import { openTestStore, startTestServer } from '../test-support/server/test-server.js';

/** GET with raw headers (fetch does not let a test set Host). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function keyOk(store: EventStore, demo: DemoProject, key: string, kind: 'write' | 'read'): Promise<boolean> {
  const record = await store.findKeyByHash(hashKey(key));
  return record?.projectId === demo.projectId && record.kind === kind && record.revokedAt === null;
}

describe('ensureDemoProject(store, { file })', () => {
  const disposers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const dispose of disposers.splice(0)) await dispose();
  });
  async function fresh(): Promise<{ store: EventStore; file: string }> {
    const opened = await openTestStore('sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'sa-demo-'));
    disposers.push(async () => {
      await opened.store.close();
      await opened.dispose();
      rmSync(dir, { recursive: true, force: true });
    });
    return { store: opened.store, file: join(dir, 'nested', 'demo-project.json') };
  }

  it('creates a project with live write and read keys, stored hashed, and writes them to a 0600 file', async () => {
    const { store, file } = await fresh();
    const { demo, created } = await ensureDemoProject(store, { file });
    expect(created).toBe(true);
    // The default of any project: an automated browser's events are stored, flagged.
    expect((await store.getProject(demo.projectId))?.bots).toBe('flag');
    expect(await keyOk(store, demo, demo.apiKey, 'write')).toBe(true);
    expect(await keyOk(store, demo, demo.readKey, 'read')).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(demo);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const keys = await store.listKeys(demo.projectId);
    expect(keys.map((k) => k.hash)).not.toContain(demo.apiKey);
  });

  it('reuses the project on a later start instead of making another', async () => {
    const { store, file } = await fresh();
    const first = await ensureDemoProject(store, { file });
    const second = await ensureDemoProject(store, { file });
    expect(second.created).toBe(false);
    expect(second.demo).toEqual(first.demo);
    expect(await store.listProjects()).toHaveLength(1);
  });

  it('makes a new project when the file belongs to another database, a key was revoked, or the file is corrupt', async () => {
    const a = await fresh();
    const b = await fresh();
    const inA = await ensureDemoProject(a.store, { file: a.file });
    // The same file against a database that never saw the project.
    const inB = await ensureDemoProject(b.store, { file: a.file });
    expect(inB.created).toBe(true);
    expect(inB.demo.projectId).not.toBe(inA.demo.projectId);

    const revoked = await ensureDemoProject(b.store, { file: b.file });
    const readKey = (await b.store.listKeys(revoked.demo.projectId)).find((k) => k.kind === 'read');
    await b.store.revokeKey(readKey!.id, Date.now());
    const afterRevoke = await ensureDemoProject(b.store, { file: b.file });
    expect(afterRevoke.created).toBe(true);

    writeFileSync(b.file, '{ not json');
    expect((await ensureDemoProject(b.store, { file: b.file })).created).toBe(true);
  });
});

describe('isLoopbackAddress / isLoopbackHost', () => {
  it('accepts only this machine', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', 'fe80::1', '', undefined]) expect(isLoopbackAddress(a), String(a)).toBe(false);
    for (const h of ['127.0.0.1:8787', 'localhost:8787', 'LOCALHOST', 'app.localhost:3000', '[::1]:8787', '127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['evil.example:8787', '127.0.0.1.evil.example', 'localhost.evil.example', '[::2]:80', '10.0.0.1:8787', '']) expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('GET /demo/config.json', () => {
  const demo: DemoProject = { projectId: 'proj_demo', apiKey: 'sa_w_demo', readKey: 'sa_r_demo' };

  it('answers a loopback client with the keys, never cached, with no CORS headers', async () => {
    const server = await startTestServer('sqlite', { demo });
    try {
      const res = await get(`${server.url}/demo/config.json`, { origin: server.url });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual(demo);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('answers 404 for another origin, a foreign Host (DNS rebinding), a proxied request, or a cross-site fetch', async () => {
    const server = await startTestServer('sqlite', { demo });
    try {
      const url = `${server.url}/demo/config.json`;
      const refused: Array<Record<string, string>> = [
        { origin: 'http://evil.example' },
        { host: 'evil.example' },
        { 'x-forwarded-for': '203.0.113.7' },
        { forwarded: 'for=203.0.113.7' },
        { 'x-real-ip': '203.0.113.7' },
        { via: '1.1 proxy' },
        { 'x-forwarded-host': 'analytics.example.com' },
        { 'sec-fetch-site': 'cross-site' },
      ];
      for (const headers of refused) {
        const res = await get(url, headers);
        expect(res.status, JSON.stringify(headers)).toBe(404);
        expect(res.body, JSON.stringify(headers)).not.toContain(demo.readKey);
      }
    } finally {
      await server.close();
    }
  });

  it('answers 404 to a client that is not on this machine', async () => {
    const server = await startTestServer('sqlite', { demo });
    // Not every machine has an address other than loopback to connect from, so the request goes
    // over loopback and the server's end of the connection reports the peer another machine would
    // have (198.51.100.7, a documentation address), as a listener on 0.0.0.0 would see it. The
    // same request from the unchanged loopback peer first shows that only the address differs.
    const { createServer } = await import('node:http');
    let peer: string | undefined;
    const listener = createServer(server.running.app.callback());
    listener.on('connection', (socket: Socket) => {
      if (peer !== undefined) Object.defineProperty(socket, 'remoteAddress', { value: peer });
    });
    try {
      await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
      const port = (listener.address() as AddressInfo).port;
      const ask = () => get(`http://127.0.0.1:${port}/demo/config.json`, { host: `localhost:${port}`, connection: 'close' });
      const local = await ask();
      expect(local.status).toBe(200);
      expect(JSON.parse(local.body)).toEqual(demo);
      peer = '198.51.100.7';
      const remote = await ask();
      expect(remote.status).toBe(404);
      expect(remote.body).not.toContain(demo.readKey);
    } finally {
      await new Promise<void>((r) => listener.close(() => r()));
      await server.close();
    }
  });

  it('does not exist without demo mode', async () => {
    const server = await startTestServer('sqlite');
    try {
      expect((await get(`${server.url}/demo/config.json`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});

describe('start --demo and --serve-example (the CLI, as npm start runs it)', () => {
  let cli: string;
  let dir: string;
  let site: string;
  const running: ServerProcess[] = [];
  beforeAll(async () => {
    cli = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'sa-demo-cli-'));
    site = join(dir, 'site');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(site);
    writeFileSync(join(site, 'index.html'), '<!doctype html><title>example</title>');
  });
  afterAll(async () => {
    for (const p of running) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(args: string[], env: Record<string, string> = {}): Promise<ServerProcess> {
    const p = await startServerProcess(cli, ['--db', join(dir, 'analytics.db'), ...args], env);
    running.push(p);
    return p;
  }
  async function stop(p: ServerProcess): Promise<void> {
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    running.splice(running.indexOf(p), 1);
  }

  it('creates the demo project once, beside the database, and reuses it on restart', async () => {
    const first = await start(['--demo', '--serve-example', site]);
    const config = (await (await fetch(`${first.url}/demo/config.json`)).json()) as DemoProject;
    expect(config.apiKey).toMatch(/^sa_w_/);
    expect(config.readKey).toMatch(/^sa_r_/);
    expect(JSON.parse(readFileSync(join(dir, 'demo-project.json'), 'utf8'))).toEqual(config);
    expect(statSync(join(dir, 'demo-project.json')).mode & 0o777).toBe(0o600);
    expect(first.log()).toContain('"msg":"demo project created"');
    // The keys work: the read key reads, the write key writes.
    const read = await fetch(`${first.url}/api/v1/events`, { headers: { authorization: `ApiKey ${config.readKey}`, 'x-project-id': config.projectId } });
    expect(read.status).toBe(200);
    await stop(first);

    const second = await start([], { SA_DEMO: '1', SA_SERVE_EXAMPLE: site });
    expect(((await (await fetch(`${second.url}/demo/config.json`)).json()) as DemoProject)).toEqual(config);
    expect(second.log()).toContain('"msg":"demo project reused"');
    const page = await fetch(`${second.url}/events`);
    expect(await page.text()).toContain('<title>example</title>');
    await stop(second);

    const projects = await runCli(cli, ['project', 'list', '--json', '--db', join(dir, 'analytics.db')]);
    expect(JSON.parse(projects.stdout)).toHaveLength(1);
  });

  it('prints one line with the address to open when it serves the example app', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [cli, 'start', '--port', '0', '--db', join(dir, 'analytics.db'), '--demo', '--serve-example', site]);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<string>((r) => child.on('close', (code, signal) => r(`${code} ${signal} ${stderr}`)));
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const match = /^Example app: open http:\/\/127\.0\.0\.1:\d+\/.*$/m.exec(out);
        if (match) resolve(match[0]);
      });
      child.on('close', () => reject(new Error(`exited before printing the address:\n${out}`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toMatch(/^0 null/);
    expect(line).toMatch(/\(demo project proj_\w+\)$/);
  });

  it('has no demo endpoint and serves no files without the flags', async () => {
    const plain = await start([]);
    expect((await fetch(`${plain.url}/demo/config.json`)).status).toBe(404);
    expect((await fetch(`${plain.url}/`)).status).toBe(404);
    await stop(plain);
  });

  it('refuses --serve-example for a directory without index.html, naming the fix', async () => {
    const out = await runCli(cli, ['start', '--port', '0', '--db', join(dir, 'analytics.db'), '--serve-example', join(dir, 'nothing')]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('npm run build:example');
  });
});
