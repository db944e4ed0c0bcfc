/**
 * Security properties of the server (SECURITY.md), on SQLite and PostgreSQL: keys stored only as
 * hashes and compared in constant time, key kinds and projects kept apart on every endpoint,
 * revocation at once, CORS for configured origins only, no cookies, and no key or event body in
 * the logs of a real server process.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey, hashesEqual } from '../api-keys.js';
import { buildCli, runCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { openStoredRows } from '../../test-support/server/stored-rows.js';
import { STORE_KINDS, type TestProject, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { createCliProject, dbArgs, exitWithin, freshLocation } from '../../test-support/server/reliability-support.js';

const ROOT = join(import.meta.dirname, '../..');

/** One request of each endpoint, made with the given key and project id. */
type Call = (s: TestServer, key: string, projectId: string) => Promise<Response>;

const chunk = { events: [{ type: 4, data: { href: 'https://app.example/' }, timestamp: 1_763_805_600_000 }], duration: 0, is_final: true, event_offset: 0 };
const json = (key: string, projectId: string) => ({ 'content-type': 'application/json', authorization: `ApiKey ${key}`, 'x-project-id': projectId });
const beaconUrl = (s: TestServer, path: string, key: string, projectId: string) =>
  `${s.url}${path}?api_key=${encodeURIComponent(key)}&project_id=${encodeURIComponent(projectId)}`;

const WRITES: Array<[string, Call]> = [
  ['POST /api/v1/events/batch', (s, k, p) => fetch(`${s.url}/api/v1/events/batch`, { method: 'POST', headers: json(k, p), body: JSON.stringify([makeEvent()]) })],
  [
    'POST /api/v1/events/batch (beacon form)',
    (s, k, p) => fetch(beaconUrl(s, '/api/v1/events/batch', k, p), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify([makeEvent()]) }),
  ],
  ['POST /api/v1/sessions/:id/recordings', (s, k, p) => fetch(`${s.url}/api/v1/sessions/sec-1/recordings`, { method: 'POST', headers: json(k, p), body: JSON.stringify(chunk) })],
  [
    'POST /api/v1/sessions/:id/recordings (beacon form)',
    (s, k, p) => fetch(beaconUrl(s, '/api/v1/sessions/sec-1/recordings', k, p), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(chunk) }),
  ],
];
const READS: Array<[string, Call]> = [
  ['GET /api/v1/events', (s, k, p) => fetch(`${s.url}/api/v1/events`, { headers: json(k, p) })],
  ['GET /api/v1/sessions', (s, k, p) => fetch(`${s.url}/api/v1/sessions`, { headers: json(k, p) })],
  ['GET /api/v1/sessions/:id/recording', (s, k, p) => fetch(`${s.url}/api/v1/sessions/sec-1/recording`, { headers: json(k, p) })],
];
const ALL = [...WRITES.map(([n, c]) => [n, c, 'write'] as const), ...READS.map(([n, c]) => [n, c, 'read'] as const)];

async function expectAuthError(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(await res.json()).toMatchObject({ code: 'AUTH_ERROR', error: expect.any(String) });
}

describe.each(STORE_KINDS)('security on %s', (kind) => {
  let server: TestServer;
  let a: TestProject;
  let b: TestProject;
  beforeAll(async () => {
    server = await startTestServer(kind, { corsOrigins: ['https://app.example'] });
    a = server.project;
    b = await server.createProject();
    // Project A has one of everything, so every read has something to refuse to show.
    expect((await WRITES[0]![1](server, a.writeKey, a.id)).status).toBe(200);
    expect((await WRITES[2]![1](server, a.writeKey, a.id)).status).toBe(200);
  });
  afterAll(() => server.close());

  it('stores keys only as SHA-256 hashes, and never a key sent in a request', async () => {
    // A key in a beacon's query string, and one in a header, after a write of each kind.
    expect((await WRITES[1]![1](server, a.writeKey, a.id)).status).toBe(200);
    const rows = await openStoredRows(server.location);
    const dump = await rows.dump().finally(() => rows.close());
    let bytes = dump;
    if (kind === 'sqlite') {
      for (const suffix of ['', '-wal']) bytes += readFileSync(`${server.location}${suffix}`, { flag: 'a+' }).toString('latin1');
    }
    for (const key of [a.writeKey, a.readKey, b.writeKey, b.readKey]) {
      expect(bytes).not.toContain(key);
      expect(dump).toContain(hashKey(key));
    }
  });

  it('compares key hashes in constant time', () => {
    // Keys are looked up by their SHA-256 and the stored hash is compared with timingSafeEqual.
    const apiKeys = readFileSync(join(ROOT, 'server/api-keys.ts'), 'utf8');
    const authenticate = readFileSync(join(ROOT, 'server/middleware/authenticate.ts'), 'utf8');
    expect(apiKeys).toMatch(/hashesEqual[\s\S]*timingSafeEqual\(/);
    expect(authenticate).toContain('hashesEqual(found.key.hash, hash)');
    expect(authenticate).not.toMatch(/\.hash\s*[!=]==/);
    const h = hashKey('sa_w_x');
    expect(hashesEqual(h, hashKey('sa_w_x'))).toBe(true);
    expect(hashesEqual(h, hashKey('sa_w_y'))).toBe(false);
    expect(hashesEqual(h, h.slice(0, 10))).toBe(false);
  });

  it.each(WRITES)('a read key cannot write: %s', async (_name, call) => {
    const before = await server.store.queryEvents({ projectId: a.id, limit: 1000 });
    await expectAuthError(await call(server, a.readKey, a.id));
    expect((await server.store.queryEvents({ projectId: a.id, limit: 1000 })).events).toHaveLength(before.events.length);
  });

  it.each(READS)('a write key cannot read: %s', async (_name, call) => {
    await expectAuthError(await call(server, a.writeKey, a.id));
    expect((await call(server, a.readKey, a.id)).status).toBe(200);
  });

  it.each(ALL)("a key of project A gets AUTH_ERROR on project B: %s", async (_name, call, kindOfKey) => {
    const rows = await openStoredRows(server.location);
    try {
      const before = await rows.count(b.id);
      await expectAuthError(await call(server, kindOfKey === 'write' ? a.writeKey : a.readKey, b.id));
      expect(await rows.count(b.id)).toEqual(before);
    } finally {
      await rows.close();
    }
  });

  it.each(ALL)('revoked and rotated keys stop working at once: %s', async (_name, call, kindOfKey) => {
    const fresh = generateKey(a.id, kindOfKey, Date.now());
    await server.store.createKey(fresh.record);
    expect((await call(server, fresh.key, a.id)).status).toBe(200);
    await server.store.revokeKey(fresh.record.id, Date.now());
    await expectAuthError(await call(server, fresh.key, a.id));
  });

  it('answers CORS for configured origins only, never with credentials, and sets no cookie', async () => {
    const preflight = (origin: string) =>
      fetch(`${server.url}/api/v1/events/batch`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    const allowed = await preflight('https://app.example');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    for (const origin of ['https://evil.example', 'https://app.example.evil', 'http://app.example', 'https://APP.example', 'null']) {
      const res = await preflight(origin);
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      const post = await server.postBatch([makeEvent()], { headers: { origin } });
      expect(post.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
    for (const [, call] of [...WRITES, ...READS]) {
      const res = await call(server, a.writeKey, a.id);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });
});

describe('key rotation through the CLI on a running PostgreSQL server process', () => {
  it('a rotated read key and a revoked write key stop working at once', { timeout: 60_000 }, async () => {
    const cli = await buildCli();
    const db = await freshLocation('postgres');
    try {
      const project = await createCliProject(cli, db.location);
      const server = await startServerProcess(cli, dbArgs(db.location));
      try {
        const read = (key: string) => fetch(`${server.url}/api/v1/events`, { headers: json(key, project.projectId) });
        expect((await read(project.readKey)).status).toBe(200);
        const rotated = JSON.parse(
          (await runCli(cli, ['key', 'rotate', '--project', project.projectId, '--kind', 'read', '--json', ...dbArgs(db.location)])).stdout,
        ) as { key: string };
        await expectAuthError(await read(project.readKey));
        expect((await read(rotated.key)).status).toBe(200);

        const keys = JSON.parse((await runCli(cli, ['key', 'list', '--project', project.projectId, '--json', ...dbArgs(db.location)])).stdout) as Array<{ id: string; kind: string; revokedAt: number | null }>;
        const write = keys.find((k) => k.kind === 'write' && k.revokedAt === null);
        expect((await runCli(cli, ['key', 'revoke', '--key-id', write!.id, ...dbArgs(db.location)])).code).toBe(0);
        const post = await fetch(`${server.url}/api/v1/events/batch`, { method: 'POST', headers: json(project.apiKey, project.projectId), body: '[]' });
        await expectAuthError(post);
      } finally {
        server.child.kill('SIGTERM');
      }
      expect(await exitWithin(server, 15_000)).toBe(0);
    } finally {
      await db.dispose();
    }
  });
});

describe('log hygiene of a server process', () => {
  let cli: string;
  beforeAll(async () => {
    cli = await buildCli();
  });

  it('logs no key and no event body, at debug level, through good and bad requests', { timeout: 60_000 }, async () => {
    const db = await freshLocation('sqlite');
    const sentinel = 'SENTINEL-7f3a9c';
    try {
      const project = await createCliProject(cli, db.location);
      const server = await startServerProcess(cli, ['--log-level', 'debug', '--rate-limit-ip', '0.01:11', ...dbArgs(db.location)]);
      const post = (path: string, headers: Record<string, string>, body: string) => fetch(`${server.url}${path}`, { method: 'POST', headers, body });
      const good = json(project.apiKey, project.projectId);
      try {
        const answers = [
          await post('/api/v1/events/batch', good, JSON.stringify([makeEvent({ properties: { secret: sentinel } })])),
          await post('/api/v1/events/batch', good, `[{"event_type":"${sentinel}",`),
          await post('/api/v1/events/batch', good, JSON.stringify([{ event_type: 7, user_id: sentinel }])),
          await post('/api/v1/events/batch', json(`sa_w_${sentinel}`, project.projectId), '[]'),
          await post('/api/v1/events/batch', json(project.apiKey, `proj_${sentinel}`), '[]'),
          await post(`/api/v1/events/batch?api_key=${project.apiKey}&project_id=${project.projectId}&x=${sentinel}`, { 'content-type': 'text/plain' }, '[]'),
          await post(`/api/v1/sessions/${sentinel}/recordings`, good, JSON.stringify({ ...chunk, events: [{ type: 3, data: { text: sentinel }, timestamp: 1 }] })),
          await post(`/api/v1/sessions/${sentinel}.x/recordings`, good, '{}'),
          await post('/api/v1/events/batch', good, JSON.stringify([{ event_type: 'x', properties: { s: sentinel.repeat(80_000) } }])),
          await fetch(`${server.url}/api/v1/events?event_type=${sentinel}`, { headers: json(project.readKey, project.projectId) }),
          await fetch(`${server.url}/api/v1/events?cursor=${sentinel}`, { headers: json(project.readKey, project.projectId) }),
          await fetch(`${server.url}/${sentinel}`),
          // The 12th API request trips the per-IP limit (burst 11).
          await post('/api/v1/events/batch', good, JSON.stringify([makeEvent({ properties: { secret: sentinel } })])),
        ];
        const statuses = answers.map((r) => r.status);
        expect(statuses).toContain(200);
        expect(statuses).toContain(400);
        expect(statuses).toContain(401);
        expect(statuses).toContain(429);
      } finally {
        server.child.kill('SIGTERM');
      }
      expect(await exitWithin(server, 15_000)).toBe(0);
      const log = server.log();
      for (const line of log.split('\n').filter(Boolean)) expect(() => JSON.parse(line), line).not.toThrow();
      expect(log).toContain('"msg":"stopped"');
      for (const secret of [project.apiKey, project.readKey, sentinel, project.apiKey.slice(5)]) expect(log).not.toContain(secret);
    } finally {
      await db.dispose();
    }
  });
});
