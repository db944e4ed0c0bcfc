import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordedEvent, RecordingUpload } from '../protocol/recording.js';
import { isRecordingUpload } from '../protocol/recording.js';
import { MAX_CHUNK_CHARS, RECORDING_UPLOAD_INTERVAL_MS, createRecordingUploader } from './recording-uploader.js';
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

function setup(script: SendOutcome[] = []) {
  const uploads: Array<{ sessionId: string; body: RecordingUpload }> = [];
  const ok: SendOutcome = { kind: 'ok', status: 200, rejected: [] };
  const uploader = createRecordingUploader({
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    send: async (sessionId, body) => {
      const parsed = JSON.parse(body) as RecordingUpload;
      expect(isRecordingUpload(parsed)).toBe(true);
      uploads.push({ sessionId, body: parsed });
      return script.shift() ?? ok;
    },
    retry: { retryAttempts: 3, retryDelay: 1000 },
    log: () => {},
    onChange: () => {},
  });
  const record = (events: RecordedEvent[], sessionId = 'sess_1') => uploader.receive({ t: 'recording', sessionId, meta, events });
  const summary = () => uploads.map(({ body }) => ({ offset: body.event_offset, count: body.events.length, final: body.is_final }));
  return { uploader, uploads, record, summary };
}

const tick = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('createRecordingUploader', () => {
  it('uploads a chunk every 10 s with event_offset = events already uploaded, duration, start_url and user_id', async () => {
    const { record, uploads, summary } = setup();
    record(recorded(3));
    await tick(RECORDING_UPLOAD_INTERVAL_MS - 1);
    expect(uploads).toHaveLength(0);
    await tick(1);
    record(recorded(2, 3));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    // Each periodic cut keeps the newest event back for the next chunk (see the module comment).
    expect(summary()).toEqual([
      { offset: 0, count: 2, final: false },
      { offset: 2, count: 2, final: false },
    ]);
    expect(uploads[0]).toMatchObject({
      sessionId: 'sess_1',
      body: { duration: 10, start_url: 'https://shop.test/', user_id: 'user-1', events: recorded(2) },
    });
    expect(uploads[1]!.body).toMatchObject({ duration: 20, events: recorded(2, 2) });
  });

  it('on recording-stop uploads the rest with is_final: true', async () => {
    const { uploader, record, summary } = setup();
    record(recorded(4));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(summary()).toEqual([
      { offset: 0, count: 3, final: false },
      { offset: 3, count: 1, final: true },
    ]);
    expect(uploader.queued).toBe(0);
  });

  it('on recording-stop sends an empty final chunk when nothing is left, and a second stop sends nothing', async () => {
    const { uploader, record, summary } = setup();
    record(recorded(2));
    uploader.uploadNow(true);
    await tick(0);
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(summary()).toEqual([
      { offset: 0, count: 2, final: false },
      { offset: 2, count: 0, final: true },
    ]);
  });

  it('continues offsets when recording starts again in the same session after a stop', async () => {
    const { uploader, record, summary } = setup();
    record(recorded(2));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    record(recorded(1, 2));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(summary()).toEqual([
      { offset: 0, count: 2, final: true },
      { offset: 2, count: 1, final: true },
    ]);
  });

  it('on recording-pause stops the timer and keeps the buffer for after resume', async () => {
    const { uploader, record, summary } = setup();
    record(recorded(2));
    uploader.receive({ t: 'recording-pause', sessionId: 'sess_1' });
    await tick(60_000);
    expect(summary()).toEqual([]);
    expect(uploader.queued).toBe(2);
    record(recorded(1, 2)); // resumed
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    expect(summary()).toEqual([{ offset: 0, count: 2, final: false }]);
    expect(uploader.queued).toBe(1);
  });

  it('on recording-clear drops the buffer without uploading; offsets continue', async () => {
    const { uploader, record, summary } = setup();
    record(recorded(2));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    record(recorded(5, 2));
    uploader.receive({ t: 'recording-clear', sessionId: 'sess_1' });
    expect(uploader.queued).toBe(0);
    record(recorded(1, 7));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(summary()).toEqual([
      { offset: 0, count: 1, final: false },
      { offset: 1, count: 1, final: true },
    ]);
  });

  it('retries a failed chunk with the same offset and body before any later chunk', async () => {
    const failure: SendOutcome = { kind: 'http', status: 503, retryAfterMs: undefined, code: undefined, message: 'busy' };
    const { uploader, record, uploads, summary } = setup([failure, failure]);
    record(recorded(2));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    record(recorded(3, 2));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(999);
    expect(uploads).toHaveLength(1);
    await tick(1);
    expect(uploads).toHaveLength(2);
    await tick(2_000);
    expect(summary()).toEqual([
      { offset: 0, count: 1, final: false },
      { offset: 0, count: 1, final: false },
      { offset: 0, count: 1, final: false },
      { offset: 1, count: 4, final: true },
    ]);
    expect(uploads[2]!.body).toEqual(uploads[0]!.body);
  });

  it('waits out 429s without spending its retries, as event batches do, and delivers the chunk', async () => {
    const busy: SendOutcome = { kind: 'http', status: 429, retryAfterMs: 2_000, code: 'RATE_LIMITED', message: 'slow down' };
    // Five deferrals: more than retryAttempts (3), none of them an attempt.
    const { uploader, record, summary } = setup([busy, busy, busy, busy, busy]);
    record(recorded(2));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    for (let i = 0; i < 5; i++) await tick(2_000);
    expect(summary()).toEqual(Array.from({ length: 6 }, () => ({ offset: 0, count: 2, final: true })));
  });

  it('does not retry a send that failed for a reason of its own', async () => {
    const own: SendOutcome = { kind: 'failed', message: 'request could not be made: RangeError' };
    const { uploader, record, summary } = setup([own]);
    record(recorded(2));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(10_000);
    expect(summary()).toEqual([{ offset: 0, count: 2, final: true }]);
  });

  it('drops a chunk the server refuses and never reuses its offset', async () => {
    const refused: SendOutcome = { kind: 'http', status: 400, retryAfterMs: undefined, code: 'VALIDATION_ERROR', message: 'bad' };
    const { uploader, record, summary } = setup([refused]);
    record(recorded(2));
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    record(recorded(1, 2));
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(summary()).toEqual([
      { offset: 0, count: 1, final: false },
      { offset: 1, count: 2, final: true },
    ]);
  });

  it('splits a large buffer into chunks of about 1 MB, only the last one final', async () => {
    const { uploader, record, uploads } = setup();
    const big = (n: number): RecordedEvent => ({ type: 2, data: { html: 'x'.repeat(300_000), n }, timestamp: START + n });
    record([big(0), big(1), big(2), big(3), big(4)]);
    uploader.receive({ t: 'recording-stop', sessionId: 'sess_1' });
    await tick(0);
    expect(uploads.map((u) => [u.body.event_offset, u.body.events.length, u.body.is_final])).toEqual([
      [0, 3, false],
      [3, 2, true],
    ]);
    for (const upload of uploads) expect(JSON.stringify(upload.body.events).length).toBeLessThan(MAX_CHUNK_CHARS);
  });

  it('uploadNow() sends what is buffered without waiting for the timer; uploadNow(true) sends everything', async () => {
    const { uploader, record, summary } = setup();
    record(recorded(3));
    uploader.uploadNow();
    await tick(0);
    expect(summary()).toEqual([{ offset: 0, count: 2, final: false }]);
    uploader.uploadNow(true);
    await tick(0);
    expect(summary()).toEqual([
      { offset: 0, count: 2, final: false },
      { offset: 2, count: 1, final: false },
    ]);
  });

  it('keeps offsets per session', async () => {
    const { record, uploads } = setup();
    record(recorded(2), 'sess_a');
    record(recorded(3), 'sess_b');
    await tick(RECORDING_UPLOAD_INTERVAL_MS);
    expect(uploads.map((u) => [u.sessionId, u.body.event_offset, u.body.events.length])).toEqual([
      ['sess_a', 0, 1],
      ['sess_b', 0, 2],
    ]);
  });
});
