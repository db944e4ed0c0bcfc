import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventDimensions, StoredEvent } from '../event-store.js';
import { makeEvent, makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { SQLITE_PAGE_SIZE } from './sqlite-database.js';
import { createSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-writes-test-'));
let files = 0;
const newPath = () => join(dir, `writes-${++files}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DIMENSIONS: EventDimensions = {
  path: '/pricing',
  host: 'example.com',
  referrerHost: '',
  channel: 'search',
  utmSource: 'news\tletter',
  utmMedium: null,
  utmCampaign: 'été 🎉',
  browser: 'Chrome',
  os: null,
  device: 'desktop',
  screenClass: 'xl',
  anonymousId: 'anon-1',
  country: 'GB',
};

/** The events columns of every row, by event id, as SQLite holds them. */
function readRows(path: string): Map<string, Record<string, unknown>> {
  const raw = new Database(path, { readonly: true });
  try {
    const rows = raw.prepare('SELECT * FROM events').all() as Array<Record<string, unknown>>;
    return new Map(rows.map((row) => [row.event_id as string, row]));
  } finally {
    raw.close();
  }
}

describe('the SQLite store\'s group commits through its writer thread', () => {
  it('stores every column as given: nulls apart from empty text, NUL and lone surrogates cleaned, multi-byte text, numbers, bot flag', async () => {
    const path = newPath();
    const p = newProjectId();
    const store = createSqliteStore({ path });
    await store.init();
    await store.createProject(makeProject(p));
    const events: StoredEvent[] = [
      makeEvent(p, 1, { dimensions: DIMENSIONS, clientTimestamp: 1_795_000_000_000.6, isBot: true, userId: '' }),
      makeEvent(p, 2, {
        userId: null,
        sessionId: null,
        userAgent: null,
        ipAddress: null,
        visitorId: null,
        eventType: 'a\0b',
        properties: { text: 'x\0y', lone: '\ud800', quote: 'say "hi"\\', emoji: '🎉', n: 1.5, none: null, yes: false },
      }),
      makeEvent(p, 3, { eventId: 'id-with-\0-nul', userAgent: 'agent \ud83d alone', timestamp: 1_795_000_000_000.4 }),
    ];
    const result = await store.write({ events, chunks: [] });
    expect(result.eventInserted).toEqual([true, true, true]);
    await store.close();

    const rows = readRows(path);
    const first = rows.get(events[0]!.eventId)!;
    expect(first).toMatchObject({
      project_id: p,
      event_type: 'page_view',
      user_id: '',
      session_id: 'session-1',
      client_timestamp: 1_795_000_000_001,
      is_bot: 1,
      path: '/pricing',
      referrer_host: '',
      utm_source: 'news\tletter',
      utm_medium: null,
      utm_campaign: 'été 🎉',
      os: null,
      anonymous_id: 'anon-1',
      country: 'GB',
    });
    expect(JSON.parse(first.properties as string)).toEqual(events[0]!.properties);

    const second = rows.get(events[1]!.eventId)!;
    expect(second).toMatchObject({
      user_id: null,
      session_id: null,
      user_agent: null,
      ip_address: null,
      visitor_id: null,
      client_timestamp: null,
      is_bot: 0,
      event_type: 'a\uFFFDb',
      path: null,
      anonymous_id: null,
      country: null,
    });
    expect(JSON.parse(second.properties as string)).toEqual({
      text: 'x\uFFFDy',
      lone: '\uFFFD',
      quote: 'say "hi"\\',
      emoji: '🎉',
      n: 1.5,
      none: null,
      yes: false,
    });

    const third = rows.get('id-with-\uFFFD-nul')!;
    expect(third).toMatchObject({ user_agent: 'agent \uFFFD alone', timestamp: 1_795_000_000_000 });
  });

  it('tells duplicates apart within a group and across groups, on the writer thread and in memory', async () => {
    for (const path of [newPath(), ':memory:']) {
      const p = newProjectId();
      const store = createSqliteStore({ path });
      await store.init();
      await store.createProject(makeProject(p));
      const first = await store.write({ events: [makeEvent(p, 1), makeEvent(p, 2), makeEvent(p, 1)], chunks: [] });
      expect(first.eventInserted).toEqual([true, true, false]);
      const second = await store.write({ events: [makeEvent(p, 3), makeEvent(p, 2)], chunks: [] });
      expect(second.eventInserted).toEqual([true, false]);
      await store.close();
    }
  });

  it('writes a group of megabytes whole, and keeps committing groups after it', async () => {
    const path = newPath();
    const p = newProjectId();
    const store = createSqliteStore({ path });
    await store.init();
    await store.createProject(makeProject(p));
    // About 3 MB of text in one group.
    const big = 'é'.repeat(30_000);
    const events = Array.from({ length: 100 }, (_, i) => makeEvent(p, i, { properties: { big, i } }));
    expect((await store.write({ events, chunks: [] })).eventInserted.every(Boolean)).toBe(true);
    for (let round = 0; round < 6; round++) {
      const group = Array.from({ length: 50 }, (_, i) => makeEvent(p, 1000 + round * 50 + i));
      expect((await store.write({ events: group, chunks: [] })).eventInserted.every(Boolean)).toBe(true);
    }
    await store.close();
    const rows = readRows(path);
    expect(rows.size).toBe(400);
    expect(JSON.parse(rows.get(events[99]!.eventId)!.properties as string)).toEqual({ big, i: 99 });
  });

  it('makes a new file with 16 KB pages, and keeps writing, deduplicating and reading a file made with 4 KB pages', async () => {
    const pageSize = (path: string): number => {
      const raw = new Database(path, { readonly: true });
      try {
        return raw.pragma('page_size', { simple: true }) as number;
      } finally {
        raw.close();
      }
    };
    const fresh = newPath();
    const store = createSqliteStore({ path: fresh });
    await store.init();
    await store.close();
    expect(pageSize(fresh)).toBe(SQLITE_PAGE_SIZE);

    // A file of an earlier version of the server: SQLite's default page size, WAL already on.
    const old = newPath();
    const made = new Database(old);
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.exec('CREATE TABLE earlier (x INTEGER)');
    made.close();
    const p = newProjectId();
    const oldStore = createSqliteStore({ path: old });
    await oldStore.init();
    try {
      await oldStore.createProject(makeProject(p));
      const events = Array.from({ length: 600 }, (_, i) => makeEvent(p, i));
      expect((await oldStore.write({ events, chunks: [] })).eventInserted.every(Boolean)).toBe(true);
      expect((await oldStore.write({ events: [makeEvent(p, 1), makeEvent(p, 600)], chunks: [] })).eventInserted).toEqual([false, true]);
      const page = await oldStore.queryEvents({ projectId: p, limit: 1000 });
      expect(page.events).toHaveLength(601);
    } finally {
      await oldStore.close();
    }
    expect(pageSize(old)).toBe(4096);
  });
});
