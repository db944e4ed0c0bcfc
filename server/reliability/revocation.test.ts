/**
 * Revocation across processes (SECURITY.md): every server process caches credentials, and a key
 * revoked or rotated through the CLI must stop working at once on each of them, the caches warm.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, buildCli, runCli, startServerProcess } from '../../test-support/server/cli-process.js';
import { STORE_KINDS, makeEvent } from '../../test-support/server/test-server.js';
import { type CliProject, createCliProject, dbArgs, exitWithin, freshLocation } from '../../test-support/server/reliability-support.js';

describe.each(STORE_KINDS)('revocation across two server processes on one %s database', (kind) => {
  let cli: string;
  let db: { location: string; dispose(): Promise<void> };
  let project: CliProject;
  let servers: ServerProcess[] = [];
  beforeAll(async () => {
    cli = await buildCli();
    db = await freshLocation(kind);
    project = await createCliProject(cli, db.location);
    servers = await Promise.all([0, 1].map(() => startServerProcess(cli, ['--no-rate-limit', ...dbArgs(db.location)])));
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGTERM');
    for (const s of servers) await exitWithin(s, 15_000);
    await db.dispose();
  });

  const headers = (key: string) => ({ 'content-type': 'application/json', authorization: `ApiKey ${key}`, 'x-project-id': project.projectId });
  const write = (s: ServerProcess, key: string) =>
    fetch(`${s.url}/api/v1/events/batch`, { method: 'POST', headers: headers(key), body: JSON.stringify([makeEvent()]) }).then((r) => r.status);
  const read = (s: ServerProcess, key: string) => fetch(`${s.url}/api/v1/events?limit=1`, { headers: headers(key) }).then((r) => r.status);
  const cliJson = async <T>(args: string[]): Promise<T> => {
    const out = await runCli(cli, [...args, '--json', ...dbArgs(db.location)]);
    expect(out.code).toBe(0);
    return JSON.parse(out.stdout) as T;
  };

  it('a write key revoked by the CLI is refused by both processes on their next request', { timeout: 60_000 }, async () => {
    // Warm both caches: several answers from each with the key.
    for (let i = 0; i < 3; i++) for (const s of servers) expect(await write(s, project.apiKey)).toBe(200);
    const keys = await cliJson<Array<{ id: string; kind: string; revokedAt: number | null }>>(['key', 'list', '--project', project.projectId]);
    const writeKey = keys.find((k) => k.kind === 'write' && k.revokedAt === null);
    expect((await runCli(cli, ['key', 'revoke', '--key-id', writeKey?.id ?? '', ...dbArgs(db.location)])).code).toBe(0);
    expect(await Promise.all(servers.map((s) => write(s, project.apiKey)))).toEqual([401, 401]);
  });

  it('a rotated read key is refused by both processes at once, and the new one works on both', { timeout: 60_000 }, async () => {
    for (const s of servers) expect(await read(s, project.readKey)).toBe(200);
    const rotated = await cliJson<{ key: string }>(['key', 'rotate', '--project', project.projectId, '--kind', 'read']);
    expect(await Promise.all(servers.map((s) => read(s, project.readKey)))).toEqual([401, 401]);
    expect(await Promise.all(servers.map((s) => read(s, rotated.key)))).toEqual([200, 200]);
  });
});
