import { describe, expect, it } from 'vitest';
import { allPages, useStore, type MakeStore } from './event-store.contract-support.js';
import type { EventStore, StoredEvent } from '../../server/store/event-store.js';
import { T0, eventId, makeChunk, makeEvent, makeKey, makeProject, newProjectId, recorded } from './event-store.fixtures.js';
import { describePrivacyContract } from './event-store.privacy-contract.js';
import { describeRecordingContract } from './event-store.recording-contract.js';

export type { MakeStore } from './event-store.contract-support.js';

const ids = (rows: readonly { eventId: string }[]): string[] => rows.map((r) => r.eventId);

/** Sorts the way the read API must: newest first by `(timestamp, eventId)`. */
function newestFirst(events: readonly StoredEvent[]): string[] {
  return [...events]
    .sort((a, b) => b.timestamp - a.timestamp || (a.eventId < b.eventId ? 1 : a.eventId > b.eventId ? -1 : 0))
    .map((e) => e.eventId);
}

/**
 * The one contract every {@link EventStore} passes (docs/architecture.md, "Conventions"): SQLite
 * and PostgreSQL run the same suite, so the server cannot tell them apart.
 */
export function describeEventStore(name: string, makeStore: MakeStore): void {
  describe(`${name} store: EventStore contract`, () => {
    const ctx = useStore(makeStore);

    describe('init() and ping()', () => {
      it('can be called again on an initialised store', async () => {
        await ctx.store.init();
        await expect(ctx.store.ping()).resolves.toBeUndefined();
      });
    });

    describe('write(batch) events', () => {
      it('reports each event inserted in batch order and a resent one as a duplicate', async () => {
        const p = ctx.projectId;
        const first = await ctx.store.write({ events: [makeEvent(p, 1), makeEvent(p, 2)], chunks: [] });
        expect(first).toEqual({ eventInserted: [true, true], chunkInserted: [] });
        const second = await ctx.store.write({ events: [makeEvent(p, 3), makeEvent(p, 1), makeEvent(p, 4)], chunks: [] });
        expect(second.eventInserted).toEqual([true, false, true]);
        expect(ids(await allPages(ctx.store, { projectId: p, limit: 100 }))).toEqual([eventId(4), eventId(3), eventId(2), eventId(1)]);
      });

      it('stores the first copy of an id repeated inside one batch and reports the second as a duplicate', async () => {
        const p = ctx.projectId;
        const result = await ctx.store.write({
          events: [makeEvent(p, 1), makeEvent(p, 1, { eventType: 'second_copy' }), makeEvent(p, 2), makeEvent(p, 1)],
          chunks: [],
        });
        expect(result.eventInserted).toEqual([true, false, true, false]);
        const rows = await allPages(ctx.store, { projectId: p, limit: 100 });
        expect(ids(rows)).toEqual([eventId(2), eventId(1)]);
        expect(rows[1]?.eventType).toBe('page_view');
      });

      it('keeps the same event id apart in two projects', async () => {
        const other = newProjectId();
        const result = await ctx.store.write({ events: [makeEvent(ctx.projectId, 1), makeEvent(other, 1)], chunks: [] });
        expect(result.eventInserted).toEqual([true, true]);
        expect(await allPages(ctx.store, { projectId: other, limit: 10 })).toHaveLength(1);
      });

      it('returns every stored field unchanged', async () => {
        const p = ctx.projectId;
        const full = makeEvent(p, 7, {
          clientTimestamp: T0 - 60_000,
          properties: { s: 'text ünïcødé 😀', int: 42, float: -1.5, yes: true, no: false, nothing: null, page: '{"url":"/"}' },
        });
        const sparse = makeEvent(p, 8, { userId: null, sessionId: null, userAgent: null, ipAddress: null, properties: {} });
        await ctx.store.write({ events: [full, sparse], chunks: [] });
        const rows = await allPages(ctx.store, { projectId: p, limit: 10 });
        const { projectId: _p1, ...fullRow } = full;
        const { projectId: _p2, ...sparseRow } = sparse;
        expect(rows).toEqual([sparseRow, fullRow]);
      });

      it('replaces NUL characters and lone surrogates with U+FFFD instead of failing the batch', async () => {
        const p = ctx.projectId;
        const event = makeEvent(p, 1, {
          eventId: 'id-\udc00',
          userAgent: 'a\u0000b',
          properties: { nul: 'x\u0000y', lone: 'x\ud800y', pair: '😀', escaped: '\\u0000 stays text' },
        });
        expect((await ctx.store.write({ events: [event], chunks: [] })).eventInserted).toEqual([true]);
        const [row] = await allPages(ctx.store, { projectId: p, limit: 10 });
        expect(row?.userAgent).toBe('a\uFFFDb');
        expect(row?.eventId).toBe('id-\uFFFD');
        expect(row?.properties).toEqual({ nul: 'x\uFFFDy', lone: 'x\uFFFDy', pair: '😀', escaped: '\\u0000 stays text' });
      });

      it('accepts an empty batch', async () => {
        await expect(ctx.store.write({ events: [], chunks: [] })).resolves.toEqual({ eventInserted: [], chunkInserted: [] });
      });

      it('writes a batch far larger than one statement can carry, duplicates included', async () => {
        const p = ctx.projectId;
        const events = Array.from({ length: 7000 }, (_, i) => makeEvent(p, i));
        events.splice(6500, 0, makeEvent(p, 3), makeEvent(p, 6999));
        const result = await ctx.store.write({ events, chunks: [] });
        // Index 6500 repeats event 3; 6501 is the first copy of event 6999, whose original is now at 7001.
        const expected = events.map((_, i) => i !== 6500 && i !== 7001);
        expect(result.eventInserted).toEqual(expected);
        expect(await allPages(ctx.store, { projectId: p, limit: 1000 })).toHaveLength(7000);
      });
    });

    describe('write(batch) chunks', () => {
      it('stores a chunk once per (project, session, offset), in batch order with events', async () => {
        const p = ctx.projectId;
        const result = await ctx.store.write({
          events: [makeEvent(p, 1)],
          chunks: [makeChunk(p, 's1', 0, 2), makeChunk(p, 's1', 2, 2), makeChunk(p, 's1', 0, 5), makeChunk(p, 's2', 0, 1)],
        });
        expect(result).toEqual({ eventInserted: [true], chunkInserted: [true, true, false, true] });
        const again = await ctx.store.write({ events: [], chunks: [makeChunk(p, 's1', 2, 2), makeChunk(newProjectId(), 's1', 2, 2)] });
        expect(again.chunkInserted).toEqual([false, true]);
        // Any integer offset the wire allows is stored, even one beyond 64 bits.
        const far = await ctx.store.write({ events: [], chunks: [makeChunk(p, 'far', 1e20, 1, { receivedAt: T0 })] });
        expect(far.chunkInserted).toEqual([true]);
        expect((await ctx.store.getRecording(p, 'far'))?.gaps).toEqual([{ from: 0, to: 1e20 }]);
        expect((await ctx.store.getRecording(p, 's1'))?.events).toEqual(recorded(0, 4));
      });
    });

    describe('queryEvents(query)', () => {
      it('lists newest first by timestamp, then event id, and only the project asked for', async () => {
        const p = ctx.projectId;
        const events = [
          makeEvent(p, 1, { timestamp: T0 + 10 }),
          makeEvent(p, 2, { timestamp: T0 + 30 }),
          makeEvent(p, 3, { timestamp: T0 + 10 }),
          makeEvent(p, 4, { timestamp: T0 + 20 }),
          makeEvent(newProjectId(), 5, { timestamp: T0 + 40 }),
        ];
        await ctx.store.write({ events, chunks: [] });
        const page = await ctx.store.queryEvents({ projectId: p, limit: 10 });
        expect(ids(page.events)).toEqual([eventId(2), eventId(4), eventId(3), eventId(1)]);
        expect(page.nextCursor).toBeNull();
      });

      it('filters by type, user, session and time range, alone and together', async () => {
        const p = ctx.projectId;
        const events = Array.from({ length: 40 }, (_, n) =>
          makeEvent(p, n, {
            eventType: n % 2 === 0 ? 'click' : 'page_view',
            userId: n % 3 === 0 ? null : `u${n % 3}`,
            sessionId: n % 5 === 0 ? null : `s${n % 5}`,
            timestamp: T0 + Math.floor(n / 4) * 100,
          }),
        );
        await ctx.store.write({ events, chunks: [] });
        const check = async (query: Omit<Parameters<EventStore['queryEvents']>[0], 'projectId' | 'limit'>, keep: (e: StoredEvent) => boolean) => {
          const rows = await allPages(ctx.store, { projectId: p, limit: 3, ...query });
          expect(ids(rows)).toEqual(newestFirst(events.filter(keep)));
        };
        await check({ eventType: 'click' }, (e) => e.eventType === 'click');
        await check({ userId: 'u1' }, (e) => e.userId === 'u1');
        await check({ sessionId: 's2' }, (e) => e.sessionId === 's2');
        await check({ from: T0 + 300 }, (e) => e.timestamp >= T0 + 300);
        await check({ to: T0 + 300 }, (e) => e.timestamp < T0 + 300);
        await check({ from: T0 + 199.5, to: T0 + 500.5 }, (e) => e.timestamp >= T0 + 199.5 && e.timestamp < T0 + 500.5);
        await check(
          { eventType: 'page_view', userId: 'u2', sessionId: 's1', from: T0 + 100, to: T0 + 900 },
          (e) => e.eventType === 'page_view' && e.userId === 'u2' && e.sessionId === 's1' && e.timestamp >= T0 + 100 && e.timestamp < T0 + 900,
        );
        expect(await allPages(ctx.store, { projectId: p, limit: 5, userId: 'nobody' })).toEqual([]);
      });

      it("filters by the reports' dimensions, each compared with its report column, with the other filters and across pages", async () => {
        const p = ctx.projectId;
        const none = { path: null, host: null, referrerHost: null, channel: null, utmSource: null, utmMedium: null, utmCampaign: null };
        const more = { browser: null, os: null, screenClass: null, anonymousId: null };
        const events = Array.from({ length: 12 }, (_, n) =>
          makeEvent(p, n, {
            eventType: n % 2 === 0 ? 'page_view' : 'click',
            timestamp: T0 + n * 10,
            dimensions: {
              ...none,
              ...more,
              path: n % 3 === 0 ? '/pricing' : '/',
              device: n % 4 === 0 ? 'mobile' : 'desktop',
              channel: n < 6 ? 'search' : null,
              country: n % 5 === 0 ? 'GB' : n % 5 === 1 ? 'US' : null,
            },
          }),
        );
        await ctx.store.write({ events, chunks: [] });
        const d = (e: StoredEvent) => e.dimensions!;
        const check = async (query: Omit<Parameters<EventStore['queryEvents']>[0], 'projectId' | 'limit'>, keep: (e: StoredEvent) => boolean) => {
          const rows = await allPages(ctx.store, { projectId: p, limit: 2, ...query });
          expect(ids(rows)).toEqual(newestFirst(events.filter(keep)));
        };
        await check({ filters: { page: '/pricing' } }, (e) => d(e).path === '/pricing');
        await check({ filters: { page: '/pricing', device: 'mobile' } }, (e) => d(e).path === '/pricing' && d(e).device === 'mobile');
        await check({ filters: { channel: 'search' }, eventType: 'click', from: T0 + 20 }, (e) => d(e).channel === 'search' && e.eventType === 'click' && e.timestamp >= T0 + 20);
        await check({ filters: { country: 'GB' } }, (e) => d(e).country === 'GB');
        await check({ filters: { country: 'US', page: '/' } }, (e) => d(e).country === 'US' && d(e).path === '/');
        await check({ filters: { device: 'tablet' } }, () => false);
      });

      it('walks every event exactly once across pages when many share a timestamp', async () => {
        const p = ctx.projectId;
        const events = Array.from({ length: 25 }, (_, n) => makeEvent(p, n, { timestamp: T0 + (n % 3) }));
        await ctx.store.write({ events, chunks: [] });
        for (const limit of [1, 4, 5, 25, 1000]) {
          const rows = await allPages(ctx.store, { projectId: p, limit });
          expect(ids(rows)).toEqual(newestFirst(events));
        }
        const exact = await ctx.store.queryEvents({ projectId: p, limit: 25 });
        expect(exact.events).toHaveLength(25);
        expect(exact.nextCursor).toBeNull();
      });

      it('keeps pages stable while events are inserted between them', async () => {
        const p = ctx.projectId;
        const original = Array.from({ length: 12 }, (_, n) => makeEvent(p, n, { timestamp: T0 + n * 10 }));
        await ctx.store.write({ events: original, chunks: [] });
        const first = await ctx.store.queryEvents({ projectId: p, limit: 5 });
        // A newer event (before the cursor) and an older one (after it) arrive mid-walk.
        await ctx.store.write({ events: [makeEvent(p, 100, { timestamp: T0 + 1000 }), makeEvent(p, 101, { timestamp: T0 + 1 })], chunks: [] });
        const rest = await allPages(ctx.store, { projectId: p, limit: 5, cursor: first.nextCursor ?? undefined });
        const seen = [...ids(first.events), ...ids(rest)];
        expect(new Set(seen).size).toBe(seen.length);
        expect(seen).not.toContain(eventId(100));
        expect(seen.filter((id) => id !== eventId(101))).toEqual(newestFirst(original));
        expect(seen).toContain(eventId(101));
      });

      it('rejects a cursor it did not issue with code INVALID_CURSOR', async () => {
        for (const cursor of ['not a cursor', 'AAAA', Buffer.from('abc:def').toString('base64url')]) {
          await expect(ctx.store.queryEvents({ projectId: ctx.projectId, limit: 5, cursor })).rejects.toMatchObject({
            code: 'INVALID_CURSOR',
          });
        }
      });
    });

    describe('deleteOlderThan(cutoff)', () => {
      it('deletes events by timestamp and chunks by received_at, and keeps the rest', async () => {
        // Far older than every other test's data, so a store shared between tests loses nothing else.
        const p = ctx.projectId;
        const old = (n: number, at: number) => makeEvent(p, n, { timestamp: at, receivedAt: T0 });
        await ctx.store.write({
          events: [old(1, 1_000), old(2, 2_000), old(3, 3_000), old(4, 4_000)],
          chunks: [
            makeChunk(p, 'old', 0, 1, { receivedAt: 1_000 }),
            makeChunk(p, 'old', 1, 1, { receivedAt: 2_999 }),
            makeChunk(p, 'old', 2, 1, { receivedAt: 3_000 }),
          ],
        });
        expect(await ctx.store.deleteOlderThan(3_000)).toEqual({ events: 2, chunks: 2 });
        expect(ids(await allPages(ctx.store, { projectId: p, limit: 10 }))).toEqual([eventId(4), eventId(3)]);
        expect((await ctx.store.getRecording(p, 'old'))?.events).toEqual(recorded(2, 1));
        expect(await ctx.store.deleteOlderThan(3_000)).toEqual({ events: 0, chunks: 0 });
      });
    });

    describe('projects', () => {
      it('creates, reads and lists projects; a duplicate id is refused with DUPLICATE', async () => {
        const a = makeProject(newProjectId(), { fullIp: true, corsOrigins: ['https://a.test', 'https://b.test'], createdAt: T0 + 1 });
        const b = makeProject(newProjectId(), { createdAt: T0 + 2 });
        await ctx.store.createProject(a);
        await ctx.store.createProject(b);
        expect(await ctx.store.getProject(a.id)).toEqual(a);
        expect(await ctx.store.getProject('missing')).toBeNull();
        const listed = (await ctx.store.listProjects()).filter((x) => x.id === a.id || x.id === b.id);
        expect(listed).toEqual([a, b]);
        await expect(ctx.store.createProject(a)).rejects.toMatchObject({ code: 'DUPLICATE' });
      });
    });

    describe('keys', () => {
      it('finds a live key by hash, lists all keys, and stops finding it once revoked', async () => {
        const p = makeProject(ctx.projectId);
        await ctx.store.createProject(p);
        const write = makeKey(p.id, { createdAt: T0 + 1 });
        const read = makeKey(p.id, { kind: 'read', createdAt: T0 + 2 });
        const admin = makeKey(p.id, { kind: 'admin', createdAt: T0 + 3 });
        await ctx.store.createKey(write);
        await ctx.store.createKey(read);
        await ctx.store.createKey(admin);
        expect(await ctx.store.findKeyByHash(write.hash)).toEqual(write);
        expect(await ctx.store.findKeyByHash(read.hash)).toEqual(read);
        expect(await ctx.store.findKeyByHash(admin.hash)).toEqual(admin);
        expect(await ctx.store.findKeyByHash('0'.repeat(64))).toBeNull();
        expect(await ctx.store.revokeKey(write.id, T0 + 50)).toBe(true);
        expect(await ctx.store.revokeKey(write.id, T0 + 60)).toBe(false);
        expect(await ctx.store.revokeKey('no-such-key', T0)).toBe(false);
        expect(await ctx.store.findKeyByHash(write.hash)).toBeNull();
        expect(await ctx.store.listKeys(p.id)).toEqual([{ ...write, revokedAt: T0 + 50 }, read, admin]);
        expect(await ctx.store.listKeys('missing')).toEqual([]);
      });

      it('finds a live key with its project in one lookup, and never a revoked one, even after a cached hit', async () => {
        const p = makeProject(ctx.projectId, { fullIp: true });
        await ctx.store.createProject(p);
        const write = makeKey(p.id, { createdAt: T0 + 1 });
        const read = makeKey(p.id, { kind: 'read', createdAt: T0 + 2 });
        await ctx.store.createKey(write);
        expect(await ctx.store.findCredential(read.hash)).toBeNull();
        await ctx.store.createKey(read);
        // Asked twice: the second answer may come from a cache, and a key created in between must show.
        expect(await ctx.store.findCredential(write.hash)).toEqual({ key: write, project: p });
        expect(await ctx.store.findCredential(write.hash)).toEqual({ key: write, project: p });
        expect(await ctx.store.findCredential(read.hash)).toEqual({ key: read, project: p });
        expect(await ctx.store.findCredential('0'.repeat(64))).toBeNull();
        await ctx.store.revokeKey(write.id, T0 + 50);
        expect(await ctx.store.findCredential(write.hash)).toBeNull();
        expect(await ctx.store.findCredential(read.hash)).toEqual({ key: read, project: p });
      });

      it('refuses a duplicate hash with DUPLICATE and a key of an unknown project with UNKNOWN_PROJECT', async () => {
        await ctx.store.createProject(makeProject(ctx.projectId));
        const key = makeKey(ctx.projectId);
        await ctx.store.createKey(key);
        await expect(ctx.store.createKey({ ...key, id: 'other-id' })).rejects.toMatchObject({ code: 'DUPLICATE' });
        await expect(ctx.store.createKey(makeKey(newProjectId()))).rejects.toMatchObject({ code: 'UNKNOWN_PROJECT' });
      });
    });

    describe('close()', () => {
      it('makes later calls reject with NOT_OPEN', async () => {
        await ctx.store.close();
        await expect(ctx.store.ping()).rejects.toMatchObject({ code: 'NOT_OPEN' });
        await expect(ctx.store.write({ events: [], chunks: [] })).rejects.toMatchObject({ code: 'NOT_OPEN' });
      });
    });
  });

  describeRecordingContract(name, makeStore);
  describePrivacyContract(name, makeStore);
}
