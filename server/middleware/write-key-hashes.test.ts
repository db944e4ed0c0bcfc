import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, hashKey } from '../api-keys.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';
import { createKeyHashes } from './write-key-hashes.js';

describe('createKeyHashes()', () => {
  it('answers the SHA-256 of any key, remembered or not', () => {
    const hashes = createKeyHashes(2);
    expect(hashes.hashOf('sa_w_one')).toBe(hashKey('sa_w_one'));
    hashes.remember('sa_w_one', hashKey('sa_w_one'));
    expect(hashes.hashOf('sa_w_one')).toBe(hashKey('sa_w_one'));
    expect(hashes.hashOf('sa_w_two')).toBe(hashKey('sa_w_two'));
  });

  it('answers what it was told for a remembered key, and forgets everything past its bound', () => {
    const hashes = createKeyHashes(2);
    hashes.remember('a', 'hash-a');
    hashes.remember('b', 'hash-b');
    expect([hashes.hashOf('a'), hashes.hashOf('b')]).toEqual(['hash-a', 'hash-b']);
    // The third key starts the memory afresh: only it is remembered.
    hashes.remember('c', 'hash-c');
    expect([hashes.hashOf('a'), hashes.hashOf('b'), hashes.hashOf('c')]).toEqual([hashKey('a'), hashKey('b'), 'hash-c']);
  });
});

describe.each(STORE_KINDS)('write keys on the ingest path, their hash remembered (%s)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(async () => {
    await server?.close();
  });

  const post = (key: string, projectId = server.project.id) =>
    fetch(`${server.url}/api/v1/events/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `ApiKey ${key}`, 'x-project-id': projectId },
      body: JSON.stringify([makeEvent()]),
    });

  it('refuses a revoked write key on its next request, however often it was accepted before', async () => {
    const fresh = generateKey(server.project.id, 'write', Date.now());
    await server.store.createKey(fresh.record);
    for (let i = 0; i < 3; i++) expect((await post(fresh.key)).status).toBe(200);
    await server.store.revokeKey(fresh.record.id, Date.now());
    const refused = await post(fresh.key);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('AUTH_ERROR');
    // Still refused after the refusal, and the project's other key still works.
    expect((await post(fresh.key)).status).toBe(401);
    expect((await post(server.project.writeKey)).status).toBe(200);
  });

  it('refuses an accepted write key on another project, and a read key on the write path', async () => {
    const other = await server.createProject();
    expect((await post(server.project.writeKey)).status).toBe(200);
    expect((await post(server.project.writeKey, other.id)).status).toBe(401);
    expect((await post(server.project.readKey)).status).toBe(401);
    // A key one character off an accepted one.
    const key = server.project.writeKey;
    expect((await post(key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a'))).status).toBe(401);
  });
});
