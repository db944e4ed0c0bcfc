/**
 * SessionRecorder's states and transitions (docs/decisions.md, "Recording upload and the recorder's
 * states"), one test per transition, with a fake rrweb and the real delivery core in-process (what
 * the worker does) behind a fake fetch.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { RECORDING_UPLOAD_INTERVAL_MS } from '../../worker/recording-uploader.js';
import { STOP_MARKER_TAG } from './engine.js';
import { SessionRecorder } from './session-recorder.js';
import { assembled, createMemoryLogger, recorderFixture, settle, stopRecorders } from '../../test-support/client/recorder-fakes.js';

const START = Date.UTC(2026, 10, 22, 10, 0, 0);
beforeAll(async () => {
  await import('./engine.js');
});
beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  stopRecorders();
  vi.useRealTimers();
});

const isStopMarker = (event: { type: number; data: unknown } | undefined) =>
  event?.type === 5 && (event.data as { tag?: string }).tag === STOP_MARKER_TAG;

describe('SessionRecorder: its states and transitions (docs/decisions.md, "Recording upload and the recorder\'s states")', () => {
  it('inactive → start() in a browser → recording: rrweb is loaded, capture begins, a chunk is uploaded every 10 s', async () => {
    const { recorder, rrweb, chunks } = recorderFixture();
    expect(recorder.isActive()).toBe(false);
    recorder.start();
    expect(recorder.isActive()).toBe(true);
    await settle();
    expect(rrweb.running()).toBe(1);
    rrweb.emit(3);
    await vi.advanceTimersByTimeAsync(1_000); // handed to the worker, which uploads 10 s later
    expect(chunks()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(RECORDING_UPLOAD_INTERVAL_MS);
    expect(chunks()).toHaveLength(1);
    expect(chunks()[0]).toMatchObject({ event_offset: 0, is_final: false, user_id: 'user-1' });
    expect(chunks()[0]!.events.map((e) => e.type)).toEqual([4, 2, 3, 3, 3]);
    rrweb.emit(2);
    await vi.advanceTimersByTimeAsync(1_000 + RECORDING_UPLOAD_INTERVAL_MS);
    expect(chunks().map((c) => [c.event_offset, c.events.length])).toEqual([
      [0, 5],
      [5, 2],
    ]);
  });

  it('inactive → start() outside a browser → inactive: nothing happens, a warning when debug is on', async () => {
    const log = createMemoryLogger();
    const loadRecord = vi.fn();
    const recorder = new SessionRecorder({ apiKey: 'k', projectId: 'p', debug: true }, 's', {}, { win: undefined, logger: log.logger, loadRecord });
    recorder.start();
    await settle();
    expect(recorder.isActive()).toBe(false);
    expect(loadRecord).not.toHaveBeenCalled();
    expect(log.lines).toEqual([{ level: 'warn', message: expect.stringContaining('needs a browser') }]);
  });

  it('recording → start() → recording: nothing', async () => {
    const { recorder, rrweb, messages } = recorderFixture();
    recorder.start();
    await settle();
    recorder.start();
    await settle();
    expect(rrweb.captures).toHaveLength(1);
    expect(recorder.isActive()).toBe(true);
    expect(messages).toEqual([]);
  });

  it('recording → stop() → inactive: capture stops, the upload timer is cleared, the rest is uploaded with is_final, state reset', async () => {
    const { recorder, rrweb, chunks, kinds, core } = recorderFixture();
    recorder.start();
    await settle();
    rrweb.emit(2);
    recorder.stop();
    expect(recorder.isActive()).toBe(false);
    expect(rrweb.running()).toBe(0);
    expect(kinds()).toEqual(['recording', 'recording-stop']);
    await settle();
    const [final] = chunks();
    expect(chunks()).toHaveLength(1);
    expect(final).toMatchObject({ event_offset: 0, is_final: true });
    expect(final!.events.map((e) => e.type)).toEqual([4, 2, 3, 3, 5]);
    expect(isStopMarker(final!.events.at(-1))).toBe(true);
    expect(recorder.getEventCount()).toBe(0);
    // No timer is left: nothing more is uploaded however long we wait.
    await vi.advanceTimersByTimeAsync(10 * RECORDING_UPLOAD_INTERVAL_MS);
    expect(chunks()).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
    await core.shutdown(0);
  });

  it('recording → pause() → paused: capture stops, the upload timer is cleared, the rest is kept, not uploaded', async () => {
    const { recorder, rrweb, chunks, kinds } = recorderFixture();
    recorder.start();
    await settle();
    rrweb.emit(3);
    recorder.pause();
    expect(recorder.isActive()).toBe(false);
    expect(rrweb.running()).toBe(0);
    expect(kinds()).toEqual(['recording', 'recording-pause']);
    await vi.advanceTimersByTimeAsync(10 * RECORDING_UPLOAD_INTERVAL_MS);
    expect(chunks()).toEqual([]);
    expect(recorder.getEventCount()).toBe(5);
  });

  it('not recording → pause() → unchanged: nothing', async () => {
    const { recorder, rrweb, messages } = recorderFixture();
    recorder.pause();
    expect(recorder.isActive()).toBe(false);
    recorder.start();
    await settle();
    recorder.pause();
    recorder.pause();
    recorder.resume();
    await settle();
    expect(recorder.isActive()).toBe(true);
    expect(rrweb.captures).toHaveLength(2);
    expect(messages.map((m) => m.t)).toEqual(['recording', 'recording-pause']);
  });

  it('paused → resume() → recording: start() is called internally (a new capture with a full snapshot)', async () => {
    const { recorder, rrweb, chunks } = recorderFixture();
    recorder.start();
    await settle();
    rrweb.emit(1);
    recorder.pause();
    recorder.resume();
    expect(recorder.isActive()).toBe(true);
    await settle();
    expect(rrweb.captures).toHaveLength(2);
    expect(rrweb.running()).toBe(1);
    rrweb.emit(1);
    recorder.stop();
    await settle();
    // What pause() kept and what came after resume(), in order, numbered without a gap.
    expect(assembled(chunks()).map((e) => e.type)).toEqual([4, 2, 3, 4, 2, 3, 5]);
  });

  it('recording → resume() → recording: nothing', async () => {
    const { recorder, rrweb } = recorderFixture();
    recorder.start();
    await settle();
    recorder.resume();
    await settle();
    expect(rrweb.captures).toHaveLength(1);
    expect(recorder.isActive()).toBe(true);
  });

  it('inactive → resume() → inactive: nothing (resume continues a paused recording only)', async () => {
    const { recorder, rrweb } = recorderFixture();
    recorder.resume();
    await settle();
    expect(rrweb.captures).toHaveLength(0);
    expect(recorder.isActive()).toBe(false);
  });

  it('recording → maxDuration elapsed → inactive: recording stops and the rest is uploaded with is_final', async () => {
    const { recorder, rrweb, chunks, log } = recorderFixture({ recording: { maxDuration: 60_000 } });
    recorder.start();
    await settle();
    rrweb.emit(1);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(recorder.isActive()).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(recorder.isActive()).toBe(false);
    expect(rrweb.running()).toBe(0);
    await settle();
    const final = chunks().at(-1)!;
    expect(final.is_final).toBe(true);
    expect((final.events.at(-1)!.data as { payload: { reason: string } }).payload.reason).toBe('max-duration');
    expect(log.text()).toContain('maxDuration');
  });

  it('maxDuration counts recording time: paused time does not count', async () => {
    const { recorder } = recorderFixture({ recording: { maxDuration: 60_000 } });
    recorder.start();
    await settle();
    await vi.advanceTimersByTimeAsync(40_000);
    recorder.pause();
    await vi.advanceTimersByTimeAsync(600_000);
    recorder.resume();
    await settle();
    await vi.advanceTimersByTimeAsync(19_000);
    expect(recorder.isActive()).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(recorder.isActive()).toBe(false);
  });

  it('paused → stop() → inactive: what pause() kept is uploaded with is_final', async () => {
    const { recorder, rrweb, chunks } = recorderFixture();
    recorder.start();
    await settle();
    rrweb.emit(2);
    recorder.pause();
    recorder.stop();
    expect(recorder.isActive()).toBe(false);
    await settle();
    expect(chunks()).toHaveLength(1);
    expect(chunks()[0]).toMatchObject({ is_final: true, event_offset: 0 });
    expect(chunks()[0]!.events.map((e) => e.type)).toEqual([4, 2, 3, 3, 5]);
  });

  it('inactive → stop() → inactive: nothing', async () => {
    const { recorder, messages } = recorderFixture();
    recorder.stop();
    await settle();
    expect(messages).toEqual([]);
  });
});

describe('SessionRecorder.getEventCount() and clearEvents()', () => {
  it('counts the events queued for upload, on the main thread and in the worker', async () => {
    const { recorder, rrweb } = recorderFixture();
    expect(recorder.getEventCount()).toBe(0);
    recorder.start();
    await settle();
    rrweb.emit(3);
    expect(recorder.getEventCount()).toBe(5); // Meta, FullSnapshot, 3 moves: still on the main thread
    await vi.advanceTimersByTimeAsync(1_000); // handed to the worker
    expect(recorder.getEventCount()).toBe(5);
    rrweb.emit(1);
    expect(recorder.getEventCount()).toBe(6);
    await vi.advanceTimersByTimeAsync(RECORDING_UPLOAD_INTERVAL_MS); // uploaded
    expect(recorder.getEventCount()).toBe(0);
  });

  it('clearEvents() discards queued events without uploading them and does not change the state', async () => {
    const { recorder, rrweb, chunks } = recorderFixture();
    recorder.start();
    await settle();
    rrweb.emit(2);
    await vi.advanceTimersByTimeAsync(1_000);
    rrweb.emit(2);
    recorder.clearEvents();
    expect(recorder.getEventCount()).toBe(0);
    expect(recorder.isActive()).toBe(true);
    rrweb.emit(1);
    recorder.stop();
    await settle();
    expect(chunks().flatMap((c) => c.events).map((e) => e.type)).toEqual([3, 5]);
    expect(chunks().at(-1)!.is_final).toBe(true);
  });

  it('clearEvents() while paused keeps the recorder paused', async () => {
    const { recorder } = recorderFixture();
    recorder.start();
    await settle();
    recorder.pause();
    recorder.clearEvents();
    expect(recorder.getEventCount()).toBe(0);
    recorder.resume();
    expect(recorder.isActive()).toBe(true);
  });
});
