import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEventStore } from './event-store.contract.js';
import { makeEvent, newProjectId } from './event-store.fixtures.js';
import { createSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-store-test-'));
let files = 0;
const newPath = () => join(dir, `store-${++files}.db`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeEventStore('sqlite', async () => createSqliteStore({ path: newPath() }));

describe('createSqliteStore({ path })', () => {
  it('keeps the data in the file across a close and reopen', async () => {
    const path = newPath();
    const p = newProjectId();
    const first = createSqliteStore({ path });
    await first.init();
    await first.write({ events: [makeEvent(p, 1)], chunks: [] });
    await first.close();
    const second = createSqliteStore({ path });
    await second.init();
    expect((await second.write({ events: [makeEvent(p, 1), makeEvent(p, 2)], chunks: [] })).eventInserted).toEqual([false, true]);
    await second.close();
  });

  it('opens the file in WAL mode and refuses a schema newer than it knows', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = newPath();
    const store = createSqliteStore({ path });
    await store.init();
    await store.close();
    const raw = new Database(path);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(1);
    raw.pragma('user_version = 99');
    raw.close();
    await expect(createSqliteStore({ path }).init()).rejects.toThrow(/schema version 99/);
  });

  it('deletes a retention backlog larger than one delete slice, across projects', async () => {
    const store = createSqliteStore({ path: newPath() });
    await store.init();
    const [a, b] = [newProjectId(), newProjectId()];
    const old = (p: string, n: number) => makeEvent(p, n, { timestamp: 1_000 + n });
    await store.write({ events: Array.from({ length: 12_000 }, (_, n) => old(n % 2 ? a : b, n)), chunks: [] });
    await store.write({ events: [makeEvent(a, 99_999)], chunks: [] });
    expect(await store.deleteOlderThan(1_000_000)).toEqual({ events: 12_000, chunks: 0 });
    expect((await store.queryEvents({ projectId: a, limit: 10 })).events).toHaveLength(1);
    await store.close();
  });

  it('lets two connections (e.g. the server and the CLI) share one file without double-storing', async () => {
    const path = newPath();
    const [one, two] = [createSqliteStore({ path }), createSqliteStore({ path })];
    await Promise.all([one.init(), two.init()]);
    const p = newProjectId();
    const first = await one.write({ events: [makeEvent(p, 1), makeEvent(p, 2)], chunks: [] });
    const second = await two.write({ events: [makeEvent(p, 2), makeEvent(p, 3)], chunks: [] });
    expect([first.eventInserted, second.eventInserted]).toEqual([
      [true, true],
      [false, true],
    ]);
    expect((await one.queryEvents({ projectId: p, limit: 10 })).events).toHaveLength(3);
    await Promise.all([one.close(), two.close()]);
  });

  it('rejects calls before init() with NOT_OPEN', async () => {
    await expect(createSqliteStore({ path: newPath() }).ping()).rejects.toMatchObject({ code: 'NOT_OPEN' });
  });
});
