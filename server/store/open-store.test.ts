import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isPostgresUrl, openStore } from './open-store.js';

const dir = mkdtempSync(join(tmpdir(), 'open-store-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openStore(location)', () => {
  it('opens PostgreSQL for postgres:// and postgresql:// URLs', async () => {
    for (const url of ['postgres://u@127.0.0.1:1/db', 'postgresql://u@127.0.0.1:1/db', 'POSTGRES://h/db']) {
      expect(isPostgresUrl(url)).toBe(true);
      const store = openStore(url);
      expect(store.kind).toBe('postgres');
      await store.close();
    }
  });

  it('opens a SQLite file for anything else and creates its directory', async () => {
    const path = join(dir, 'nested', 'deeper', 'events.db');
    const store = openStore(path);
    expect(store.kind).toBe('sqlite');
    await store.init();
    await store.ping();
    await store.close();
    expect(existsSync(path)).toBe(true);
  });

  it('accepts :memory: and refuses an empty location', async () => {
    const store = openStore(':memory:');
    await store.init();
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
    expect(() => openStore('  ')).toThrow(/empty/);
  });
});
