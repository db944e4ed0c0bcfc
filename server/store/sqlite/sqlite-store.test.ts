import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { describeAccountStore } from '../../../test-support/store/account-store.contract.js';
import { describeEventStore } from '../../../test-support/store/event-store.contract.js';
import { describeReportStore } from '../../../test-support/store/report-store.contract.js';
import { T0, frequentValueDay, makeEvent, makeKey, makeProject, newProjectId } from '../../../test-support/store/event-store.fixtures.js';
import { SQLITE_ACCOUNT_TABLES, SQLITE_SCHEMA, SQLITE_SCHEMA_VERSION } from './sqlite-schema.js';

/** Version 6's schema: this one without `events.country`, added by version 7. */
const SQLITE_V6_SCHEMA = SQLITE_SCHEMA.replace('  country TEXT,\n', '');
/** Version 5's: version 6's with the keys' CHECK that knew no admin key. */
const SQLITE_V5_SCHEMA = SQLITE_V6_SCHEMA.replace("CHECK (kind IN ('write', 'read', 'admin'))", "CHECK (kind IN ('write', 'read'))");
import { createSqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-store-test-'));
let files = 0;
const newPath = () => join(dir, `store-${++files}.db`);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeEventStore('sqlite', async () => createSqliteStore({ path: newPath() }));
describeReportStore('sqlite', async () => createSqliteStore({ path: newPath() }));
describeAccountStore('sqlite', async () => createSqliteStore({ path: newPath() }));

describe('createSqliteStore({ path })', () => {
  it('refuses a count of reader threads that is not a positive integer', () => {
    for (const readThreads of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createSqliteStore({ path: newPath(), readThreads })).toThrow(/readThreads must be a positive integer/);
    }
  });

  describe('keeping frequent filters ahead in the background', () => {
    // A past day of the last year with one device on 1,000 events: frequent enough to be kept ahead.
    const day = Math.floor(Date.now() / 86_400_000) - 2;
    const keptDays = (path: string, projectId: string): number => {
      const db = new Database(path, { readonly: true });
      try {
        return (db.prepare('SELECT COUNT(*) AS n FROM rollup_filtered WHERE project_id = ? AND value IS NULL').get(projectId) as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const fill = async (store: ReturnType<typeof createSqliteStore>, projectId: string) => {
      expect((await store.write({ events: frequentValueDay(projectId, day), chunks: [] })).eventInserted.every(Boolean)).toBe(true);
      await store.reports.refreshRollups();
    };

    it('keeps a frequent value ahead by default', { timeout: 60_000 }, async () => {
      const path = newPath();
      const store = createSqliteStore({ path });
      try {
        await store.init();
        const projectId = newProjectId();
        await fill(store, projectId);
        // The refresher ticks every second; bounded so that a failure ends as one.
        for (let i = 0; i < 200 && keptDays(path, projectId) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
        expect(keptDays(path, projectId)).toBeGreaterThan(0);
      } finally {
        await store.close();
      }
    });

    it('keeps none with keepFiltersAhead: false, though a caller still can', async () => {
      const path = newPath();
      const store = createSqliteStore({ path, keepFiltersAhead: false });
      try {
        await store.init();
        const projectId = newProjectId();
        await fill(store, projectId);
        // Several of the background's ticks, with nothing kept.
        await new Promise((resolve) => setTimeout(resolve, 3000));
        expect(keptDays(path, projectId)).toBe(0);
        // The same day was worth keeping: a caller's turns keep it.
        while (await store.reports.keepFilteredAhead());
        expect(keptDays(path, projectId)).toBeGreaterThan(0);
      } finally {
        await store.close();
      }
    });
  });

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
    expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    raw.pragma('user_version = 99');
    raw.close();
    await expect(createSqliteStore({ path }).init()).rejects.toThrow(/schema version 99/);
  });

  it('copies no database that needs no migration, nor one whose owner said not to', async () => {
    const { default: Database } = await import('better-sqlite3');
    const { readdirSync } = await import('node:fs');
    const { basename, dirname } = await import('node:path');
    const copies: string[] = [];
    const fresh = newPath();
    const store = createSqliteStore({ path: fresh, onMigrationBackup: (copy) => void copies.push(copy) });
    await store.init();
    await store.close();
    const old = newPath();
    const raw = new Database(old);
    raw.exec(SQLITE_V5_SCHEMA);
    raw.pragma('user_version = 5');
    raw.close();
    const told = createSqliteStore({ path: old, migrationBackup: false, onMigrationBackup: (copy) => void copies.push(copy) });
    await told.init();
    await told.close();
    expect(copies).toEqual([]);
    for (const path of [fresh, old]) expect(readdirSync(dirname(path)).filter((f) => f.startsWith(`${basename(path)}.before-`))).toEqual([]);
  });

  it('migrates a version 1 database: drops the per-filter indexes, keeps every event, filters still work', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = newPath();
    const p = newProjectId();
    const store = createSqliteStore({ path });
    await store.init();
    await store.write({ events: [makeEvent(p, 1, { eventType: 'a' }), makeEvent(p, 2, { eventType: 'b' })], chunks: [] });
    await store.close();
    // Make it the version 1 layout again.
    const raw = new Database(path);
    raw.exec(`DROP INDEX events_by_user;
      DROP INDEX events_by_heatmap;
      CREATE INDEX events_by_type ON events (project_id, event_type, timestamp, event_id);
      CREATE INDEX events_by_user ON events (project_id, user_id, timestamp, event_id) WHERE user_id IS NOT NULL;
      CREATE INDEX events_by_session ON events (project_id, session_id, timestamp, event_id) WHERE session_id IS NOT NULL;`);
    raw.pragma('user_version = 1');
    raw.close();

    const reopened = createSqliteStore({ path });
    await reopened.init();
    expect((await reopened.queryEvents({ projectId: p, eventType: 'b', limit: 10 })).events.map((e) => e.eventType)).toEqual(['b']);
    expect((await reopened.queryEvents({ projectId: p, limit: 10 })).events).toHaveLength(2);
    await reopened.close();
    const check = new Database(path, { readonly: true });
    const indexes = (check.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events' AND sql IS NOT NULL").pluck().all() as string[]).sort();
    // Version 8 brings back an index of identified events by user, without the time: for erasure only.
    // Version 10 adds one of only the clicks and scroll depths, by page: for the heatmap report.
    expect(indexes).toEqual(['events_by_heatmap', 'events_by_time', 'events_by_user']);
    expect(check.prepare("SELECT sql FROM sqlite_master WHERE name = 'events_by_user'").pluck().get()).toMatch(/\(project_id, user_id\) WHERE user_id IS NOT NULL$/);
    expect(check.prepare("SELECT sql FROM sqlite_master WHERE name = 'events_by_heatmap'").pluck().get()).toMatch(
      /\(project_id, path, timestamp\) WHERE event_type IN \('click', 'scroll_depth'\)$/,
    );
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
  });

  it('migrates a version 3 database: projects get bots drop, events is_bot false and no visitor, salts are kept apart', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = newPath();
    const p = newProjectId();
    // The version 3 layout of the two tables that changed, with a row in each.
    const raw = new Database(path);
    raw.exec(`CREATE TABLE projects (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL,
        full_ip INTEGER NOT NULL DEFAULT 0, cors_origins TEXT NOT NULL DEFAULT '[]');
      CREATE TABLE events (project_id TEXT NOT NULL, event_id TEXT NOT NULL, event_type TEXT NOT NULL, user_id TEXT,
        session_id TEXT, timestamp INTEGER NOT NULL, client_timestamp INTEGER, received_at INTEGER NOT NULL,
        properties TEXT NOT NULL, user_agent TEXT, ip_address TEXT, UNIQUE (project_id, event_id));`);
    raw.prepare("INSERT INTO projects (id, name, created_at) VALUES (?, 'Old', 1)").run(p);
    raw.prepare("INSERT INTO events VALUES (?, 'e1', 'old', 'u', 's', ?, NULL, ?, '{}', 'ua', '203.0.113.0')").run(p, T0, T0);
    raw.pragma('user_version = 3');
    raw.close();

    const store = createSqliteStore({ path });
    await store.init();
    expect((await store.getProject(p))?.bots).toBe('drop');
    const [row] = (await store.queryEvents({ projectId: p, limit: 10 })).events;
    expect([row?.eventId, row?.isBot, row?.visitorId]).toEqual(['e1', false, null]);
    expect(await store.dailySalt('2026-01-01', 'x')).toBe('x');
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
  });

  it('migrates a version 8 database: projects, keys and events kept, the accounts, sessions and links tables added', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = newPath();
    const p = makeProject(newProjectId());
    const read = makeKey(p.id, { kind: 'read' });
    const raw = new Database(path);
    raw.exec(SQLITE_SCHEMA.replace(SQLITE_ACCOUNT_TABLES, ''));
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE name = 'accounts'").all()).toEqual([]);
    raw.prepare('INSERT INTO projects (id, name, created_at, bots) VALUES (?, ?, ?, ?)').run(p.id, p.name, p.createdAt, p.bots);
    raw.prepare('INSERT INTO api_keys (id, project_id, kind, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(read.id, p.id, read.kind, read.hash, read.prefix, read.createdAt);
    raw.pragma('user_version = 8');
    raw.close();
    const store = createSqliteStore({ path, migrationBackup: false });
    await store.init();
    expect(await store.findCredential(read.hash)).toEqual({ key: read, project: p });
    const account = { id: 'acct_migrated', email: 'migrated@example.com', role: 'viewer', passwordHash: 'scrypt$x', createdAt: T0, disabledAt: null } as const;
    await store.createAccount(account);
    await store.createAccountSession({ id: 'sess_1', accountId: account.id, createdAt: T0, lastSeenAt: T0 });
    expect(await store.findAccountSession('sess_1')).toEqual({ session: { id: 'sess_1', accountId: account.id, createdAt: T0, lastSeenAt: T0 }, account });
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(check.pragma('foreign_key_check')).toEqual([]);
    check.close();
  });

  it('migrates a version 5 database: keys kept, an admin key can be created and found, the index and triggers back', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = newPath();
    const p = makeProject(newProjectId());
    const read = makeKey(p.id, { kind: 'read' });
    expect(SQLITE_V6_SCHEMA).not.toBe(SQLITE_SCHEMA);
    expect(SQLITE_V5_SCHEMA).not.toBe(SQLITE_V6_SCHEMA);
    const raw = new Database(path);
    raw.exec(SQLITE_V5_SCHEMA);
    raw.prepare('INSERT INTO projects (id, name, created_at, bots) VALUES (?, ?, ?, ?)').run(p.id, p.name, p.createdAt, p.bots);
    raw.prepare('INSERT INTO api_keys (id, project_id, kind, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(read.id, p.id, read.kind, read.hash, read.prefix, read.createdAt);
    expect(() => raw.prepare("INSERT INTO api_keys VALUES ('k', ?, 'admin', 'h', 'p', 1, NULL)").run(p.id)).toThrow(/CHECK/);
    raw.pragma('user_version = 5');
    raw.close();

    const copies: Array<[string, number]> = [];
    const store = createSqliteStore({ path, onMigrationBackup: (copy, from) => void copies.push([copy, from]) });
    await store.init();
    // Copied whole before the migration changed anything: the version 5 file, its key in it.
    expect(copies.map(([copy, from]) => [copy.startsWith(`${path}.before-v${SQLITE_SCHEMA_VERSION}-`), from])).toEqual([[true, 5]]);
    const copy = new Database((copies[0] as [string, number])[0], { readonly: true });
    expect([copy.pragma('user_version', { simple: true }), copy.prepare('SELECT id FROM api_keys').pluck().all()]).toEqual([5, [read.id]]);
    copy.close();
    const admin = makeKey(p.id, { kind: 'admin', createdAt: T0 + 1 });
    await store.createKey(admin);
    expect(await store.findCredential(admin.hash)).toEqual({ key: admin, project: p });
    expect(await store.findCredential(read.hash)).toEqual({ key: read, project: p });
    expect(await store.listKeys(p.id)).toEqual([read, admin]);
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    const objects = check
      .prepare("SELECT type, name FROM sqlite_master WHERE tbl_name = 'api_keys' AND sql IS NOT NULL ORDER BY type, name")
      .all();
    expect(objects).toEqual([
      { type: 'index', name: 'api_keys_by_project' },
      { type: 'table', name: 'api_keys' },
      { type: 'trigger', name: 'api_keys_deleted' },
      { type: 'trigger', name: 'api_keys_inserted' },
      { type: 'trigger', name: 'api_keys_updated' },
    ]);
    // The triggers count again: a key change made on another connection reaches the credential cache.
    const changes = check.prepare('SELECT n FROM auth_changes').pluck();
    const before = changes.get() as number;
    check.close();
    const other = createSqliteStore({ path });
    await other.init();
    await other.revokeKey(read.id, T0 + 2);
    await other.close();
    const after = new Database(path, { readonly: true });
    expect(after.prepare('SELECT n FROM auth_changes').pluck().get()).toBe(before + 1);
    expect(after.pragma('foreign_key_check')).toEqual([]);
    after.close();
  });

  it('migrates a version 6 database: events kept, `country` added and null for them, filled for new ones and reported', async () => {
    const { default: Database } = await import('better-sqlite3');
    const path = newPath();
    const p = makeProject(newProjectId());
    const raw = new Database(path);
    raw.exec(SQLITE_V6_SCHEMA);
    raw.prepare('INSERT INTO projects (id, name, created_at, bots) VALUES (?, ?, ?, ?)').run(p.id, p.name, p.createdAt, p.bots);
    // An event of version 6, with its report columns, stored with its address truncated.
    raw.prepare(
      `INSERT INTO events (project_id, event_id, event_type, timestamp, received_at, properties, ip_address, path, browser)
       VALUES (?, 'old-1', 'page_view', ?, ?, '{}', '81.2.69.0', '/old', 'Firefox')`,
    ).run(p.id, T0, T0);
    raw.pragma('user_version = 6');
    raw.close();

    const store = createSqliteStore({ path });
    await store.init();
    const none = { path: '/new', host: null, referrerHost: null, channel: null, utmSource: null, utmMedium: null, utmCampaign: null };
    const fresh = makeEvent(p.id, 2, { dimensions: { ...none, browser: 'Firefox', os: null, device: null, screenClass: null, anonymousId: 'a', country: 'GB' } });
    expect((await store.write({ events: [fresh], chunks: [] })).eventInserted).toEqual([true]);
    const query = { projectId: p.id, from: T0 - 1000, to: T0 + 1000, filters: {}, includeBots: false, visitorKey: 'anonymous' } as const;
    expect((await store.reports.totals(query)).events).toBe(2);
    expect(await store.reports.top(query, 'country', 10)).toEqual([{ value: 'GB', events: 1, visitors: 1 }]);
    expect(await store.reports.top({ ...query, filters: { browser: 'Firefox' } }, 'page', 10)).toEqual([
      { value: '/new', events: 1, visitors: 1 },
      { value: '/old', events: 1, visitors: 0 },
    ]);
    await store.close();
    const check = new Database(path, { readonly: true });
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(check.prepare('SELECT event_id, ip_address, path, country FROM events ORDER BY event_id').all()).toEqual([
      { event_id: fresh.eventId, ip_address: fresh.ipAddress, path: '/new', country: 'GB' },
      { event_id: 'old-1', ip_address: '81.2.69.0', path: '/old', country: null },
    ]);
    check.close();
  });

  it('stops authenticating a key from the next turn of the event loop when another connection (the CLI, another process) revokes it', async () => {
    const path = newPath();
    const [server, cli] = [createSqliteStore({ path }), createSqliteStore({ path })];
    await Promise.all([server.init(), cli.init()]);
    const p = makeProject(newProjectId());
    await cli.createProject(p);
    const key = makeKey(p.id);
    await cli.createKey(key);
    expect(await server.findCredential(key.hash)).toEqual({ key, project: p });
    expect(await server.findCredential(key.hash)).toEqual({ key, project: p });
    await cli.revokeKey(key.id, Date.now());
    // Lookups of one turn share one read of the change counter (docs/decisions.md, "Key kinds and
    // hashing"); a request that comes in over a socket is always authenticated in a later turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await server.findCredential(key.hash)).toBeNull();
    await Promise.all([server.close(), cli.close()]);
  });

  it('commits every group handed to the writer thread before close() resolves', async () => {
    const path = newPath();
    const p = newProjectId();
    const store = createSqliteStore({ path });
    await store.init();
    const writes = Array.from({ length: 20 }, (_, g) =>
      store.write({ events: Array.from({ length: 50 }, (_, i) => makeEvent(p, g * 50 + i)), chunks: [] }),
    );
    const closed = store.close();
    expect((await Promise.all(writes)).every((r) => r.eventInserted.every(Boolean))).toBe(true);
    await closed;
    const reopened = createSqliteStore({ path });
    await reopened.init();
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await reopened.queryEvents({ projectId: p, limit: 500, cursor });
      count += page.events.length;
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(count).toBe(1000);
    await reopened.close();
  });

  it('opens once when init() is called again before the first finished, and refuses use after a close during init', async () => {
    const store = createSqliteStore({ path: newPath() });
    const [a, b] = [store.init(), store.init()];
    expect(a).toBe(b);
    await a;
    const p = newProjectId();
    expect((await store.write({ events: [makeEvent(p, 1)], chunks: [] })).eventInserted).toEqual([true]);
    await store.close();

    const early = createSqliteStore({ path: newPath() });
    const opening = early.init();
    await early.close();
    await expect(opening).rejects.toMatchObject({ code: 'NOT_OPEN' });
    await expect(early.write({ events: [makeEvent(p, 2)], chunks: [] })).rejects.toMatchObject({ code: 'NOT_OPEN' });
  });

  it('fails only the group the writer thread could not commit, with its SQLite code, and keeps writing', async () => {
    const store = createSqliteStore({ path: newPath() });
    await store.init();
    const p = newProjectId();
    // NOT NULL on timestamp (NaN binds as NULL): the whole group rolls back, the event before it too.
    const bad = { ...makeEvent(p, 2), timestamp: Number.NaN };
    await expect(store.write({ events: [makeEvent(p, 1), bad], chunks: [] })).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_NOTNULL' });
    expect((await store.write({ events: [makeEvent(p, 1)], chunks: [] })).eventInserted).toEqual([true]);
    await store.close();
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
