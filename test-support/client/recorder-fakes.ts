/**
 * Test helpers of the recorder: a fake rrweb `record` that tests drive by hand, a sink that is the
 * real delivery core in-process with a fake `fetch`, and a recorder wired to both with fake
 * timers. Test-only: imported by `*.test.ts` files, never by the library.
 */
import { vi } from 'vitest';
import type { RecordedEvent, RecordingUpload } from '../../protocol/recording.js';
import { createDeliveryCore } from '../../worker/delivery-core.js';
import { createFakeFetch, testConfig } from '../worker/delivery-fakes.js';
import type { Logger } from '../../main/logger.js';
import { createSafeStorage } from '../../main/session/storage.js';
import { SessionRecorder } from '../../main/recorder/session-recorder.js';
import type { CaptureOptions, RecordFunction, RecorderDeps, RecorderMessage, RecordingSink } from '../../main/recorder/types.js';
import type { RecordingConfig } from '../../main/recorder/recording-config.js';

/** A fake rrweb: each `record()` call is a capture the test drives with `emit`. */
export function createFakeRrweb() {
  const captures: Array<{ options: CaptureOptions; stopped: boolean }> = [];
  const record: RecordFunction = (options) => {
    const capture = { options, stopped: false };
    captures.push(capture);
    // rrweb emits a Meta and a FullSnapshot event as soon as it starts.
    options.emit({ type: 4, data: { href: 'https://shop.test/' }, timestamp: Date.now() });
    options.emit({ type: 2, data: { node: {} }, timestamp: Date.now() });
    return () => {
      capture.stopped = true;
    };
  };
  const current = () => captures.at(-1);
  return {
    record,
    captures,
    /** Emits `count` mouse-move events from the capture running now. */
    emit(count = 1) {
      const capture = current();
      if (capture === undefined || capture.stopped) throw new Error('no capture is running');
      for (let i = 0; i < count; i++) capture.options.emit({ type: 3, data: { source: 1, positions: [] }, timestamp: Date.now() });
    },
    /** Emits one mutation event with `count` added nodes. */
    mutate(count: number) {
      const adds = Array.from({ length: count }, (_, id) => ({ parentId: 1, nextId: null, node: { id } }));
      current()?.options.emit({ type: 3, data: { source: 0, adds, removes: [], attributes: [], texts: [] }, timestamp: Date.now() });
    },
    running: () => captures.filter((c) => !c.stopped).length,
  };
}

/** A logger that keeps what it was told. */
export function createMemoryLogger() {
  const lines: Array<{ level: 'debug' | 'warn' | 'error'; message: string }> = [];
  const logger: Logger = {
    debug: (message) => void lines.push({ level: 'debug', message }),
    warn: (message) => void lines.push({ level: 'warn', message }),
    error: (message) => void lines.push({ level: 'error', message }),
  };
  return { logger, lines, text: () => lines.map((l) => `${l.level}: ${l.message}`).join('\n') };
}

/** The real delivery core, in-process, with a fake fetch: what the worker would do. */
export function createCoreSink() {
  const server = createFakeFetch();
  const core = createDeliveryCore(testConfig(), { fetch: server.fetch, compress: undefined, now: () => Date.now() });
  const messages: RecorderMessage[] = [];
  const sink: RecordingSink = {
    send(message) {
      messages.push(message);
      core.receive(message);
    },
    recordingQueued: () => core.stats().recordingQueued,
  };
  /** Recording chunks the server received, in order. */
  const chunks = () => server.requests.filter((r) => r.url.includes('/recordings')).map((r) => r.body as RecordingUpload);
  return { sink, core, server, messages, chunks, kinds: () => messages.map((m) => m.t) };
}

/** Recorders made by {@link recorderFixture}, stopped by {@link stopRecorders}. */
const made: SessionRecorder[] = [];

/** Stops every recorder the fixtures made (rrweb's page-wide claim included); call in `afterEach`. */
export function stopRecorders(): void {
  for (const recorder of made.splice(0)) recorder.stop();
}

/** Options of {@link recorderFixture}. */
export interface RecorderFixtureOptions {
  recording?: RecordingConfig;
  deps?: Partial<RecorderDeps>;
  sessionId?: string;
  debug?: boolean;
  storage?: Map<string, string>;
}

/** A recorder on a fake rrweb and the in-process core; use with fake timers. */
export function recorderFixture(options: RecorderFixtureOptions = {}) {
  const rrweb = createFakeRrweb();
  const core = createCoreSink();
  const log = createMemoryLogger();
  const stored = options.storage ?? new Map<string, string>();
  const storage = createSafeStorage(() => ({
    getItem: (key: string) => stored.get(key) ?? null,
    setItem: (key: string, value: string) => void stored.set(key, value),
    removeItem: (key: string) => void stored.delete(key),
    clear: () => stored.clear(),
    key: () => null,
    length: stored.size,
  }));
  const deps: RecorderDeps = {
    win: window,
    logger: log.logger,
    loadRecord: () => Promise.resolve(rrweb.record),
    sink: core.sink,
    storage,
    userId: () => 'user-1',
    ...options.deps,
  };
  const config = { apiKey: 'key_1', projectId: 'proj_1', endpoint: 'http://analytics.test', debug: options.debug ?? true };
  const recorder = new SessionRecorder(config, options.sessionId ?? 'sess_1', options.recording, deps);
  made.push(recorder);
  return { recorder, rrweb, ...core, log, stored };
}

/** Lets the lazily loaded engine and rrweb settle (dynamic imports, microtasks). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(0);
}

/** The recorded events of all chunks, in offset order, as the server would assemble them. */
export function assembled(chunks: RecordingUpload[]): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const chunk of [...chunks].sort((a, b) => a.event_offset - b.event_offset)) {
    chunk.events.forEach((event, i) => (events[chunk.event_offset + i] = event));
  }
  return events;
}
