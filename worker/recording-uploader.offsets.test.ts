/**
 * Offsets numbered by the recorder (`RecordingMeta.offset`): a recording continued in the same
 * session after a reload or a worker restart must never reuse an offset, since the server keeps
 * only the first chunk at each (session, event_offset).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordedEvent, RecordingUpload } from '../protocol/recording.js';
import { RECORDING_UPLOAD_INTERVAL_MS, createRecordingUploader } from './recording-uploader.js';
import type { SendOutcome } from './sender.js';
import type { RecordingMeta } from '../protocol/worker/worker-contract.js';

const START = Date.UTC(2026, 10, 22, 10, 0, 0);
const meta: RecordingMeta = { startUrl: 'https://shop.test/', userId: 'user-1', startedAt: START };

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  vi.useRealTimers();
});

const recorded = (count: number, from = 0): RecordedEvent[] =>
  Array.from({ length: count }, (_, i) => ({ type: 3, data: { n: from + i }, timestamp: START + from + i }));

const tick = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('createRecordingUploader with offsets numbered by the recorder (meta.offset)', () => {
  /** A server that, like the real one, keeps the first chunk at each (session, event_offset). */
  function dedupingServer() {
    const chunks = new Map<string, RecordingUpload>();
    let dropped = 0;
    const send = async (sessionId: string, body: string): Promise<SendOutcome> => {
      const parsed = JSON.parse(body) as RecordingUpload;
      const key = `${sessionId}@${parsed.event_offset}`;
      if (chunks.has(key)) dropped += parsed.events.length;
      else chunks.set(key, parsed);
      return { kind: 'ok', status: 200, rejected: [] };
    };
    /** The stored events in offset order, as the server reassembles them, and the gaps. */
    const recording = (sessionId = 'sess_1') => {
      const own = [...chunks].filter(([key]) => key.startsWith(`${sessionId}@`)).map(([, chunk]) => chunk);
      own.sort((a, b) => a.event_offset - b.event_offset);
      const events: RecordedEvent[] = [];
      const gaps: Array<[number, number]> = [];
      for (const chunk of own) {
        if (chunk.event_offset > events.length) gaps.push([events.length, chunk.event_offset]);
        events.length = Math.max(events.length, chunk.event_offset);
        chunk.events.forEach((event, i) => (events[chunk.event_offset + i] = event));
      }
      return { events, gaps, finished: own.some((chunk) => chunk.is_final) };
    };
    return { send, recording, dropped: () => dropped };
  }

  function uploaderFor(server: ReturnType<typeof dedupingServer>) {
    return createRecordingUploader({
      now: () => Date.now(),
      setTimeout: (callback, ms) => setTimeout(callback, ms),
      clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
      send: server.send,
      retry: { retryAttempts: 3, retryDelay: 1000 },
      log: () => {},
      onChange: () => {},
    });
  }

  const post = (uploader: ReturnType<typeof uploaderFor>, offset: number, events: RecordedEvent[], sessionId = 'sess_1') =>
    uploader.receive({ t: 'recording', sessionId, meta: { ...meta, offset }, events });

  it('resumes at the persisted offset after a restart: nothing the first worker uploaded is overwritten or dropped', async () => {
    const server = dedupingServer();
    const first = uploaderFor(server);
    post(first, 0, recorded(3));
    post(first, 3, recorded(2, 3));
    first.uploadNow();
    await tick(0);
    first.close(); // the page reloads: this worker and its memory are gone

    const second = uploaderFor(server);
    post(second, 5, recorded(4, 5));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    post(second, 9, recorded(1, 9));
    second.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);

    expect(server.dropped()).toBe(0);
    expect(server.recording()).toEqual({ events: recorded(10), gaps: [], finished: true });
  });

  it('without meta.offset a restarted worker starts again at 0, and the server drops its chunks (why the recorder numbers events)', async () => {
    const server = dedupingServer();
    const first = uploaderFor(server);
    first.receive({ t: 'recording', sessionId: 'sess_1', meta, events: recorded(3) });
    first.uploadNow(true);
    await tick(0);
    const second = uploaderFor(server);
    second.receive({ t: 'recording', sessionId: 'sess_1', meta, events: recorded(3, 3) });
    second.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(server.dropped()).toBe(3);
  });

  it('sends everything at every cut (the recorder ends each recording with its own stop marker)', async () => {
    const server = dedupingServer();
    const uploader = uploaderFor(server);
    post(uploader, 0, recorded(3));
    uploader.uploadNow();
    await tick(0);
    expect(server.recording().events).toEqual(recorded(3));
    expect(uploader.queued).toBe(0);
    post(uploader, 3, recorded(2, 3));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    expect(server.recording().events).toEqual(recorded(5));
  });

  it('a message that skips indexes (another page of the session took them) closes the buffer and continues at its index', async () => {
    const server = dedupingServer();
    const uploader = uploaderFor(server);
    post(uploader, 0, recorded(2));
    post(uploader, 6, recorded(2, 6));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    const { events, gaps, finished } = server.recording();
    expect(gaps).toEqual([[2, 6]]);
    expect(events.slice(6)).toEqual(recorded(2, 6));
    expect(finished).toBe(true);
  });

  it('a message whose index is behind the buffer end never reuses an index: it continues at the end', async () => {
    const server = dedupingServer();
    const uploader = uploaderFor(server);
    post(uploader, 4, recorded(3));
    post(uploader, 0, recorded(2, 3));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(server.dropped()).toBe(0);
    expect(server.recording().events.slice(4)).toEqual(recorded(5));
  });

  it('an event that cannot be serialised leaves its index unused; the others keep theirs', async () => {
    const server = dedupingServer();
    const uploader = uploaderFor(server);
    const broken = { type: 3, data: { big: 1n }, timestamp: START } as unknown as RecordedEvent;
    post(uploader, 0, [...recorded(2), broken, ...recorded(2, 3)]);
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    const { events, gaps } = server.recording();
    expect(gaps).toEqual([[2, 3]]);
    expect(events.slice(0, 2)).toEqual(recorded(2));
    expect(events.slice(3)).toEqual(recorded(2, 3));
  });
});
