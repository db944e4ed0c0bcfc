import { describe, expect, it } from 'vitest';
import { allPages, useStore, type MakeStore } from './event-store.contract-support.js';
import type { EventRow, EventStore, ExportQuery } from '../../server/store/event-store.js';
import { T0, eventId, makeChunk, makeEvent, makeKey, makeProject, newProjectId, recorded } from './event-store.fixtures.js';

/** Every page of an export, walked as the server walks it (`export.ts`). */
async function exportAll(store: EventStore, query: Omit<ExportQuery, 'after'>): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  let after: ExportQuery['after'];
  for (let page = 0; page < 10_000; page++) {
    const result = await store.exportEvents({ ...query, ...(after ? { after } : {}) });
    expect(result.length).toBeLessThanOrEqual(query.limit);
    rows.push(...result);
    const last = result[result.length - 1];
    if (result.length < query.limit || last === undefined) return rows;
    after = { timestamp: last.timestamp, eventId: last.eventId };
  }
  throw new Error('export did not end');
}

/**
 * The contract of the store methods behind bot filtering, cookieless visitor ids, erasure and
 * export (docs/decisions.md), run by `describeEventStore` against every store.
 */
export function describePrivacyContract(name: string, makeStore: MakeStore): void {
  describe(`${name} store: bots, visitors, erasure, export`, () => {
    const ctx = useStore(makeStore);

    describe('projects: bot policy', () => {
      it('stores the policy, changes it with updateProject, and authentication sees the change at once', async () => {
        const p = makeProject(ctx.projectId, { bots: 'flag' });
        await ctx.store.createProject(p);
        expect(await ctx.store.getProject(p.id)).toEqual(p);
        const key = makeKey(p.id);
        await ctx.store.createKey(key);
        // Twice: the second answer may come from the credential cache, which the change must reach.
        expect((await ctx.store.findCredential(key.hash))?.project.bots).toBe('flag');
        expect((await ctx.store.findCredential(key.hash))?.project.bots).toBe('flag');
        expect(await ctx.store.updateProject(p.id, { bots: 'keep' })).toBe(true);
        expect((await ctx.store.findCredential(key.hash))?.project.bots).toBe('keep');
        expect(await ctx.store.getProject(p.id)).toEqual({ ...p, bots: 'keep' });
        expect(await ctx.store.updateProject(p.id, {})).toBe(true);
        expect(await ctx.store.updateProject('missing', { bots: 'drop' })).toBe(false);
        expect(await ctx.store.updateProject('missing', {})).toBe(false);
      });
    });

    describe('write(batch): bot flag and visitor id', () => {
      it('returns isBot and visitorId as written, null visitor included', async () => {
        const p = ctx.projectId;
        const flagged = makeEvent(p, 1, { isBot: true, visitorId: 'AbC-_123' });
        const plain = makeEvent(p, 2, { visitorId: null });
        await ctx.store.write({ events: [flagged, plain], chunks: [] });
        const rows = await allPages(ctx.store, { projectId: p, limit: 10 });
        expect(rows.map((r) => [r.eventId, r.isBot, r.visitorId])).toEqual([
          [eventId(2), false, null],
          [eventId(1), true, 'AbC-_123'],
        ]);
      });
    });

    describe('exportEvents(query)', () => {
      it('walks every event of the project once, oldest first, across pages and shared timestamps', async () => {
        const p = ctx.projectId;
        const events = Array.from({ length: 37 }, (_, n) => makeEvent(p, n, { timestamp: T0 + (n % 7) * 10 }));
        await ctx.store.write({ events: [...events, makeEvent(newProjectId(), 99)], chunks: [] });
        const expected = [...events].sort((a, b) => a.timestamp - b.timestamp || (a.eventId < b.eventId ? -1 : 1)).map((e) => e.eventId);
        for (const limit of [1, 5, 37, 1000]) {
          expect((await exportAll(ctx.store, { projectId: p, limit })).map((r) => r.eventId)).toEqual(expected);
        }
        const [first] = await ctx.store.exportEvents({ projectId: p, limit: 1 });
        const { projectId: _p, ...row } = events.find((e) => e.eventId === first?.eventId) ?? events[0];
        expect(first).toEqual(row);
      });

      it('keeps to from (inclusive) and to (exclusive)', async () => {
        const p = ctx.projectId;
        await ctx.store.write({ events: Array.from({ length: 10 }, (_, n) => makeEvent(p, n, { timestamp: T0 + n * 100 })), chunks: [] });
        const rows = await exportAll(ctx.store, { projectId: p, limit: 3, from: T0 + 200, to: T0 + 700 });
        expect(rows.map((r) => r.eventId)).toEqual([2, 3, 4, 5, 6].map(eventId));
        expect(await ctx.store.exportEvents({ projectId: p, limit: 10, from: T0 + 5000 })).toEqual([]);
      });
    });

    describe('deleteUser(projectId, userId)', () => {
      it("deletes the user's events and the chunks with their id, and nothing else", async () => {
        const p = ctx.projectId;
        const other = newProjectId();
        await ctx.store.write({
          events: [
            makeEvent(p, 1, { userId: 'alice', sessionId: 's-a' }),
            makeEvent(p, 2, { userId: 'alice', sessionId: 's-a2' }),
            makeEvent(p, 3, { userId: 'alice', sessionId: null }),
            makeEvent(p, 4, { userId: 'bob', sessionId: 's-b' }),
            makeEvent(p, 5, { userId: null, sessionId: 's-anon' }),
            makeEvent(other, 6, { userId: 'alice', sessionId: 's-a' }),
          ],
          chunks: [
            // Alice's events name this session, but its chunks carry no user id: they stay.
            makeChunk(p, 's-a', 0, 2, { userId: null }),
            makeChunk(p, 's-a', 2, 2, { userId: null }),
            makeChunk(p, 's-a2', 0, 1, { userId: 'alice' }),
            // No event of this session names alice, but the chunk does.
            makeChunk(p, 's-only-recorded', 0, 1, { userId: 'alice' }),
            makeChunk(p, 's-b', 0, 1, { userId: 'bob' }),
            makeChunk(p, 's-anon', 0, 1, { userId: null }),
            makeChunk(other, 's-a', 0, 1, { userId: 'alice' }),
          ],
        });
        expect(await ctx.store.deleteUser(p, 'alice')).toEqual({ events: 3, recordings: 2 });
        expect((await allPages(ctx.store, { projectId: p, limit: 10 })).map((r) => r.eventId)).toEqual([eventId(5), eventId(4)]);
        expect((await ctx.store.getRecording(p, 's-a'))?.events).toEqual(recorded(0, 4));
        expect(await ctx.store.getRecording(p, 's-a2')).toBeNull();
        expect(await ctx.store.getRecording(p, 's-only-recorded')).toBeNull();
        expect((await ctx.store.getRecording(p, 's-b'))?.events).toEqual(recorded(0, 1));
        expect((await ctx.store.getRecording(p, 's-anon'))?.events).toEqual(recorded(0, 1));
        // Another project's user of the same id is untouched.
        expect(await allPages(ctx.store, { projectId: other, limit: 10 })).toHaveLength(1);
        expect((await ctx.store.getRecording(other, 's-a'))?.events).toEqual(recorded(0, 1));
        expect(await ctx.store.deleteUser(p, 'alice')).toEqual({ events: 0, recordings: 0 });
        expect(await ctx.store.deleteUser(p, 'nobody')).toEqual({ events: 0, recordings: 0 });
      });

      it("keeps another user's recording when the erased user sent an event naming that session", async () => {
        const p = ctx.projectId;
        // Session ids are the client's: with the public write key, mallory names the victim's session.
        await ctx.store.write({
          events: [
            makeEvent(p, 1, { userId: 'victim', sessionId: 's-victim' }),
            makeEvent(p, 2, { userId: 'mallory', sessionId: 's-victim' }),
            makeEvent(p, 3, { userId: 'mallory', sessionId: 's-mallory' }),
          ],
          chunks: [
            makeChunk(p, 's-victim', 0, 2, { userId: 'victim' }),
            makeChunk(p, 's-victim', 2, 1, { userId: 'victim' }),
            makeChunk(p, 's-mallory', 0, 1, { userId: 'mallory' }),
            makeChunk(p, 's-mallory', 1, 1, { userId: 'mallory' }),
          ],
        });
        expect(await ctx.store.deleteUser(p, 'mallory')).toEqual({ events: 2, recordings: 2 });
        expect((await ctx.store.getRecording(p, 's-victim'))?.events).toEqual(recorded(0, 3));
        expect(await ctx.store.getRecording(p, 's-mallory')).toBeNull();
        expect((await allPages(ctx.store, { projectId: p, limit: 10 })).map((r) => [r.eventId, r.userId])).toEqual([[eventId(1), 'victim']]);
      });
    });

    describe('dailySalt(day, candidate) and deleteSaltsBefore(day)', () => {
      // Days far from today's, so that stores shared between tests (one PostgreSQL database per
      // file) keep no salt another test could see.
      const day = (n: number) => `1990-01-${String(n).padStart(2, '0')}`;

      it('keeps the first salt of a day, whoever offers another later, and one salt per day', async () => {
        expect(await ctx.store.dailySalt(day(2), 'first')).toBe('first');
        expect(await ctx.store.dailySalt(day(2), 'second')).toBe('first');
        expect(await ctx.store.dailySalt(day(3), 'third')).toBe('third');
        expect(await ctx.store.deleteSaltsBefore(day(3))).toBe(1);
        // Deleted: the day's next salt is a new one.
        expect(await ctx.store.dailySalt(day(2), 'again')).toBe('again');
        expect(await ctx.store.dailySalt(day(3), 'other')).toBe('third');
        expect(await ctx.store.deleteSaltsBefore(day(4))).toBe(2);
        expect(await ctx.store.deleteSaltsBefore(day(4))).toBe(0);
      });
    });
  });
}
