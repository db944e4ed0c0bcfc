import { describe, expect, it } from 'vitest';
import { useStore, type MakeStore } from './event-store.contract-support.js';
import { T0, makeChunk, recorded } from './event-store.fixtures.js';

/** The recording half of the EventStore contract: `listSessions` and `getRecording`. */
export function describeRecordingContract(name: string, makeStore: MakeStore): void {
  describe(`${name} store: recordings contract`, () => {
    const ctx = useStore(makeStore);

    describe('getRecording(projectId, sessionId)', () => {
      it('is null for a session with no chunk', async () => {
        expect(await ctx.store.getRecording(ctx.projectId, 'nothing')).toBeNull();
      });

      it('returns the events of chunks that arrived out of order in offset order, without gaps', async () => {
        const p = ctx.projectId;
        await ctx.store.write({ events: [], chunks: [makeChunk(p, 's', 5, 3), makeChunk(p, 's', 8, 2, { isFinal: true })] });
        await ctx.store.write({ events: [], chunks: [makeChunk(p, 's', 0, 5)] });
        expect(await ctx.store.getRecording(p, 's')).toEqual({ sessionId: 's', events: recorded(0, 10), gaps: [], finished: true });
      });

      it('emits each event once when chunks overlap', async () => {
        const p = ctx.projectId;
        await ctx.store.write({
          events: [],
          chunks: [makeChunk(p, 's', 0, 4), makeChunk(p, 's', 2, 4), makeChunk(p, 's', 3, 1), makeChunk(p, 's', 6, 2)],
        });
        const recording = await ctx.store.getRecording(p, 's');
        expect(recording?.events).toEqual(recorded(0, 8));
        expect(recording?.gaps).toEqual([]);
        expect(recording?.finished).toBe(false);
      });

      it('reports the offsets no chunk covered as [from, to) gaps, a leading one included', async () => {
        const p = ctx.projectId;
        await ctx.store.write({
          events: [],
          chunks: [makeChunk(p, 's', 3, 2), makeChunk(p, 's', 9, 1), makeChunk(p, 's', 12, 0, { isFinal: true })],
        });
        const recording = await ctx.store.getRecording(p, 's');
        expect(recording?.events).toEqual([...recorded(3, 2), ...recorded(9, 1)]);
        expect(recording?.gaps).toEqual([
          { from: 0, to: 3 },
          { from: 5, to: 9 },
          { from: 10, to: 12 },
        ]);
        expect(recording?.finished).toBe(true);
      });

      it('keeps sessions and projects apart', async () => {
        const p = ctx.projectId;
        await ctx.store.write({ events: [], chunks: [makeChunk(p, 'a', 0, 2), makeChunk(p, 'b', 0, 3), makeChunk('other', 'a', 0, 9)] });
        expect((await ctx.store.getRecording(p, 'a'))?.events).toEqual(recorded(0, 2));
        expect((await ctx.store.getRecording(p, 'b'))?.events).toEqual(recorded(0, 3));
      });
    });

    describe('listSessions(projectId, limit)', () => {
      it('summarises each session, most recently active first', async () => {
        const p = ctx.projectId;
        await ctx.store.write({
          events: [],
          chunks: [
            // 'a': identified mid-session, overlapping chunks, finished.
            makeChunk(p, 'a', 4, 4, { receivedAt: T0 + 200, duration: 20, userId: 'u-a', startUrl: 'https://x.test/later' }),
            makeChunk(p, 'a', 0, 4, { receivedAt: T0 + 100, duration: 10, userId: null, startUrl: 'https://x.test/a' }),
            makeChunk(p, 'a', 6, 4, { receivedAt: T0 + 300, duration: 15, userId: 'u-late', isFinal: true }),
            // 'b': one chunk, most recent.
            makeChunk(p, 'b', 0, 3, { receivedAt: T0 + 500, duration: 5, userId: null, startUrl: null }),
            // 'c': a gap, oldest.
            makeChunk(p, 'c', 0, 2, { receivedAt: T0 + 10, duration: 1, userId: 'u-c' }),
            makeChunk(p, 'c', 5, 2, { receivedAt: T0 + 20, duration: 2, userId: 'u-c' }),
            makeChunk('other-project', 'z', 0, 1, { receivedAt: T0 + 900 }),
          ],
        });
        const sessions = await ctx.store.listSessions(p, 10);
        expect(sessions).toEqual([
          {
            sessionId: 'b',
            userId: null,
            startUrl: null,
            duration: 5,
            chunkCount: 1,
            eventCount: 3,
            firstReceivedAt: T0 + 500,
            lastReceivedAt: T0 + 500,
            finished: false,
          },
          {
            sessionId: 'a',
            userId: 'u-a',
            startUrl: 'https://x.test/a',
            duration: 20,
            chunkCount: 3,
            eventCount: 10,
            firstReceivedAt: T0 + 100,
            lastReceivedAt: T0 + 300,
            finished: true,
          },
          {
            sessionId: 'c',
            userId: 'u-c',
            startUrl: 'https://example.test/start',
            duration: 2,
            chunkCount: 2,
            eventCount: 4,
            firstReceivedAt: T0 + 10,
            lastReceivedAt: T0 + 20,
            finished: false,
          },
        ]);
        expect((await ctx.store.listSessions(p, 2)).map((s) => s.sessionId)).toEqual(['b', 'a']);
        expect(await ctx.store.listSessions('no-such-project', 10)).toEqual([]);
      });
    });
  });
}
