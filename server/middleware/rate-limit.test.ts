import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { addressKey } from './rate-limit.js';

describe('addressKey(address)', () => {
  it('keys IPv4 by the address and IPv6 by its /64, whatever the spelling', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('64:ff9b::1.2.3.4')).toBe('64:ff9b:0:0::/64');
  });
});

describe('rate limiting in the app (429 RATE_LIMITED with Retry-After)', () => {
  let server: TestServer | undefined;
  // The real time: the server refuses event times more than a day after its own clock.
  let time = Date.now();
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const read = (s: TestServer, key: string, projectId: string) =>
    fetch(`${s.url}/api/v1/events`, { headers: { authorization: `ApiKey ${key}`, 'x-project-id': projectId } });

  it('limits a client address before authentication, counts it in /metrics, and lets CORS readers see Retry-After', async () => {
    server = await startTestServer('sqlite', { now: () => time, rateLimit: { ip: { ratePerSecond: 1, burst: 3 }, project: false }, corsOrigins: ['https://app.example'] });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await server.postBatch([makeEvent()])).status);
    // A wrong key costs the address a token too: that is what slows down key guessing.
    const limited = await server.postBatch([makeEvent()], { headers: { authorization: 'ApiKey nope', origin: 'https://app.example' } });
    expect(statuses).toEqual([200, 200, 200]);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(await limited.json()).toMatchObject({ code: 'RATE_LIMITED', error: expect.stringContaining('retry after 1 s') });
    // Operations endpoints are not limited.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('sa_rate_limited_total{scope="ip"} 1');
    expect(metrics).toContain('sa_http_requests_total{route="/api/v1/events/batch",status="429"} 1');
    time += 1000;
    expect((await server.postBatch([makeEvent()])).status).toBe(200);
  });

  it('limits each project and key kind apart, after authentication, and stores nothing it refused', async () => {
    server = await startTestServer('sqlite', { now: () => time, rateLimit: { project: { ratePerSecond: 0.5, burst: 2 }, ip: false } });
    const s = server;
    const other = await s.createProject();
    // Requests with a wrong key never reach the project's bucket.
    for (let i = 0; i < 5; i++) expect((await s.postBatch([makeEvent()], { headers: { authorization: 'ApiKey sa_w_wrong' } })).status).toBe(401);
    expect((await s.postBatch([makeEvent()])).status).toBe(200);
    expect((await s.postBatch([makeEvent()])).status).toBe(200);
    const refusedEvent = makeEvent();
    const limited = await s.postBatch([refusedEvent]);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(await limited.json()).toMatchObject({ code: 'RATE_LIMITED' });
    // Another project, and the same project's reads, have buckets of their own.
    expect((await s.postBatch([makeEvent()], { project: other })).status).toBe(200);
    expect((await read(s, s.project.readKey, s.project.id)).status).toBe(200);
    const rows = await openStoredRows(s.location);
    const ids = await rows.eventIds(s.project.id).finally(() => rows.close());
    expect(ids.has(refusedEvent.event_id as string)).toBe(false);
    expect(await (await fetch(`${s.url}/metrics`)).text()).toContain('sa_rate_limited_total{scope="project"} 1');
  });

  it('is off unless configured (createApp), and `false` turns it off', async () => {
    for (const options of [{}, { rateLimit: false as const }]) {
      server = await startTestServer('sqlite', { now: () => time, ...options });
      const statuses = new Set<number>();
      for (let i = 0; i < 60; i++) statuses.add((await server.postBatch([])).status);
      expect(statuses).toEqual(new Set([200]));
      await server.close();
      server = undefined;
    }
  });

  it('keys by the forwarded address only behind a trusted proxy', async () => {
    server = await startTestServer('sqlite', { now: () => time, trustProxy: true, rateLimit: { ip: { ratePerSecond: 1, burst: 1 }, project: false } });
    const from = (ip: string) => server!.postBatch([], { headers: { 'x-forwarded-for': ip } });
    expect((await from('198.51.100.1')).status).toBe(200);
    expect((await from('198.51.100.1')).status).toBe(429);
    expect((await from('198.51.100.2')).status).toBe(200);
    expect((await from('2001:db8:1:2::1')).status).toBe(200);
    // The same /64: the same bucket.
    expect((await from('2001:db8:1:2::ffff')).status).toBe(429);
  });
});

describe('rate limiting from the CLI: flags, environment, defaults', () => {
  let cli: string;
  beforeAll(async () => {
    cli = await buildCli();
  });

  it('documents the flags, their variables and defaults in --help', async () => {
    const help = await runCli(cli, ['--help']);
    for (const text of ['--rate-limit-project', 'SA_RATE_LIMIT_PROJECT', '1000:2000', '--rate-limit-ip', 'SA_RATE_LIMIT_IP', '200:400', '--no-rate-limit', 'SA_NO_RATE_LIMIT']) {
      expect(help.stdout).toContain(text);
    }
  });

  it('refuses a malformed limit with exit 2', async () => {
    const bad = await runCli(cli, ['start', '--db', ':memory:', '--rate-limit-ip', 'fast']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--rate-limit-ip must be RATE or RATE:BURST');
  });

  it.each([
    ['--rate-limit-ip 0.01:2', ['--rate-limit-ip', '0.01:2'], {}, 2],
    ['SA_RATE_LIMIT_PROJECT=0.01:3', [], { SA_RATE_LIMIT_PROJECT: '0.01:3' }, 3],
    ['--no-rate-limit with a tight limit', ['--rate-limit-ip', '0.01:1', '--no-rate-limit'], {}, Infinity],
    ['SA_RATE_LIMIT_IP=off', [], { SA_RATE_LIMIT_IP: 'off', SA_RATE_LIMIT_PROJECT: 'off' }, Infinity],
  ] as const)('%s: a real server process answers 429 past the burst (never when off)', async (_name, args, env, burst) => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'sa-rl-'));
    const db = join(dir, 'a.db');
    try {
      const project = JSON.parse((await runCli(cli, ['project', 'create', '--name', 'RL', '--json', '--db', db])).stdout) as { projectId: string; apiKey: string };
      const server = await startServerProcess(cli, ['--db', db, ...args], env);
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          const res = await fetch(`${server.url}/api/v1/events/batch`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `ApiKey ${project.apiKey}`, 'x-project-id': project.projectId },
            body: '[]',
          });
          statuses.push(res.status);
          if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        }
        expect(statuses).toEqual(Array.from({ length: 6 }, (_, i) => (i < burst ? 200 : 429)));
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
