/**
 * The recorder's engine (engine.ts) through SessionRecorder: batching, the hidden-page flush, the
 * mutation cap, rrweb that cannot be loaded or started, offsets that continue across a reload,
 * one capture per page, and the delivery of a recorder used on its own.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RecordingUpload } from '../../protocol/recording.js';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import { POST_BATCH_EVENTS, POST_INTERVAL_MS } from './engine.js';
import { SessionRecorder } from './session-recorder.js';
import { assembled, createFakeRrweb, createMemoryLogger, recorderFixture, settle, stopRecorders } from '../../test-support/client/recorder-fakes.js';

beforeAll(async () => {
  // Loaded for real before the fake timers: the lazily imported chunks resolve at once afterwards.
  await Promise.all([import('./engine.js'), import('../delivery/core-connection.js'), import('../delivery/delivery-link.js'), import('../../worker/delivery-core.js')]);
});
beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 22, 10, 0, 0) });
});
afterEach(() => {
  stopRecorders();
  vi.useRealTimers();
});

function setVisibility(state: DocumentVisibilityState): void {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
}

describe('handing events to the worker', () => {
  it('posts captured events in batches, at most once a second, never one post per event', async () => {
    const { recorder, rrweb, messages } = recorderFixture();
    recorder.start();
    await settle();
    for (let i = 0; i < 20; i++) rrweb.emit(1);
    expect(messages).toEqual([]);
    await vi.advanceTimersByTimeAsync(POST_INTERVAL_MS);
    expect(messages.map((m) => (m.t === 'recording' ? m.events.length : m.t))).toEqual([22]);
    rrweb.emit(POST_BATCH_EVENTS); // a burst goes at once
    expect(messages.map((m) => (m.t === 'recording' ? m.events.length : m.t))).toEqual([22, POST_BATCH_EVENTS]);
  });

  it('posts at once when the page is hidden, before the page-hidden message of the facade', async () => {
    const { recorder, rrweb, kinds, sink, chunks } = recorderFixture();
    const sendPageHidden = (): void => sink.send({ t: 'page-hidden' });
    document.addEventListener('visibilitychange', sendPageHidden); // as the facade's unload path does
    try {
      recorder.start();
      await settle();
      rrweb.emit(2);
      setVisibility('hidden');
      expect(kinds()).toEqual(['recording', 'page-hidden']);
      await settle();
      expect(chunks().flatMap((c) => c.events)).toHaveLength(4);
    } finally {
      document.removeEventListener('visibilitychange', sendPageHidden);
      setVisibility('visible');
    }
  });

  it('numbers events per session across recorders: a reload continues the offsets, so no chunk is dropped', async () => {
    const storage = new Map<string, string>();
    const first = recorderFixture({ storage });
    first.recorder.start();
    await settle();
    first.rrweb.emit(3);
    await vi.advanceTimersByTimeAsync(POST_INTERVAL_MS);
    first.recorder.pause(); // the page goes away with its worker; the storage stays

    const second = recorderFixture({ storage });
    second.recorder.start();
    await settle();
    second.rrweb.emit(1);
    second.recorder.stop();
    await settle();
    const offsets = second.chunks().map((c) => c.event_offset);
    expect(offsets).toEqual([5]);
    const recording: RecordingUpload[] = [...first.chunks(), ...second.chunks()];
    expect(recording.every((c) => c.start_url === second.chunks()[0]!.start_url)).toBe(true);
    expect(second.messages[0]).toMatchObject({ t: 'recording', meta: { offset: 5 } });
  });

  it('starts a new numbering for another session', async () => {
    const storage = new Map<string, string>();
    const a = recorderFixture({ storage, sessionId: 'sess_a' });
    a.recorder.start();
    await settle();
    a.recorder.stop();
    const b = recorderFixture({ storage, sessionId: 'sess_b' });
    b.recorder.start();
    await settle();
    b.recorder.stop();
    expect(b.messages[0]).toMatchObject({ t: 'recording', meta: { offset: 0 } });
  });
});

describe('the mutation cap', () => {
  it('stops recording, with the final upload and a debug message, when a second holds more mutations than the cap', async () => {
    const { recorder, rrweb, chunks, log } = recorderFixture({ recording: { maxMutationsPerSecond: 100 } });
    recorder.start();
    await settle();
    rrweb.mutate(60);
    await vi.advanceTimersByTimeAsync(1_000); // a new second
    rrweb.mutate(60);
    rrweb.mutate(30);
    expect(recorder.isActive()).toBe(true);
    rrweb.mutate(20);
    await settle();
    expect(recorder.isActive()).toBe(false);
    expect(rrweb.running()).toBe(0);
    expect(log.text()).toContain('more than 100 DOM mutations in one second');
    const final = chunks().at(-1)!;
    expect(final.is_final).toBe(true);
    expect((final.events.at(-1)!.data as { payload: { reason: string } }).payload.reason).toBe('mutation-cap');
  });
});

describe('when rrweb is not there', () => {
  it('stays inactive and says why when rrweb cannot be loaded', async () => {
    const { recorder, log, messages } = recorderFixture({ deps: { loadRecord: () => Promise.reject(new Error('Failed to fetch dynamically imported module')) } });
    recorder.start();
    await settle();
    expect(recorder.isActive()).toBe(false);
    expect(log.text()).toContain('rrweb could not be loaded');
    expect(messages).toEqual([]); // nothing was captured, so nothing to upload
  });

  it('stays inactive when rrweb throws on start or does not start', async () => {
    const throwing = recorderFixture({ deps: { loadRecord: async () => () => { throw new Error('no emit'); } } });
    throwing.recorder.start();
    await settle();
    expect(throwing.recorder.isActive()).toBe(false);
    expect(throwing.log.text()).toContain('rrweb could not start recording');
    const refusing = recorderFixture({ deps: { loadRecord: async () => () => undefined } });
    refusing.recorder.start();
    await settle();
    expect(refusing.recorder.isActive()).toBe(false);
  });

  it('ignores a load that finishes after stop()', async () => {
    let resolve!: (record: ReturnType<typeof createFakeRrweb>['record']) => void;
    const rrweb = createFakeRrweb();
    const { recorder } = recorderFixture({ deps: { loadRecord: () => new Promise((r) => (resolve = r)) } });
    recorder.start();
    await settle();
    recorder.stop();
    resolve(rrweb.record);
    await settle();
    expect(rrweb.captures).toHaveLength(0);
  });
});

describe('pause and resume', () => {
  it('loads rrweb once: a resume takes its full snapshot in the call, so a stop right after it keeps it', async () => {
    const rrweb = createFakeRrweb();
    const loadRecord = vi.fn(async () => rrweb.record);
    const { recorder, chunks } = recorderFixture({ deps: { loadRecord } });
    recorder.start();
    await settle();
    recorder.pause();
    recorder.resume();
    expect(rrweb.captures.map((c) => c.stopped)).toEqual([true, false]);
    recorder.stop();
    await settle();
    expect(loadRecord).toHaveBeenCalledTimes(1);
    expect(chunks().flatMap((c) => c.events).filter((e) => e.type === 2)).toHaveLength(2);
  });
});

describe('one capture per page', () => {
  it("a second recorder's start() ends inactive while another captures the page", async () => {
    const first = recorderFixture();
    first.recorder.start();
    await settle();
    const second = recorderFixture({ sessionId: 'sess_2' });
    second.recorder.start();
    await settle();
    expect(second.recorder.isActive()).toBe(false);
    expect(second.log.text()).toContain('another session recorder');
    first.recorder.stop();
    second.recorder.start();
    await settle();
    expect(second.recorder.isActive()).toBe(true);
  });
});

describe('a SessionRecorder used on its own', () => {
  it('uploads through a delivery of its own and shuts it down after the final upload', async () => {
    const server = createFakeFetch();
    const rrweb = createFakeRrweb();
    const log = createMemoryLogger();
    const recorder = new SessionRecorder(
      {
        apiKey: 'key_1',
        projectId: 'proj_1',
        endpoint: 'https://analytics.test',
        transport: { strategies: ['in-process'], coreDeps: { fetch: server.fetch, compress: undefined } },
      },
      'sess_own',
      {},
      { win: window, logger: log.logger, loadRecord: async () => rrweb.record },
    );
    recorder.start();
    await settle();
    rrweb.emit(2);
    recorder.stop();
    await vi.advanceTimersByTimeAsync(100);
    await settle();
    expect(server.requests.map((r) => r.url)).toEqual(['https://analytics.test/api/v1/sessions/sess_own/recordings']);
    const chunk = server.requests[0]!.body as RecordingUpload;
    expect(chunk).toMatchObject({ is_final: true, event_offset: 0 });
    expect(assembled([chunk]).map((e) => e.type)).toEqual([4, 2, 3, 3, 5]);
    expect(server.requests[0]!.headers).toMatchObject({ Authorization: 'ApiKey key_1', 'X-Project-ID': 'proj_1' });
    // Shut down: the core's timers are gone.
    expect(vi.getTimerCount()).toBe(0);
  });
});
