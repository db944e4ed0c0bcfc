/**
 * `SessionRecorder`: the recorder's state machine (the table below; docs/decisions.md, "Recording
 * upload and the recorder's states"), and nothing else. It is part of the main-thread entry, so
 * everything that does the work (rrweb, masking, buffering, offsets) is in `engine.ts`, loaded with
 * a dynamic `import()` on the first `start()`, and rrweb is a chunk of its own behind that.
 *
 * | State     | Call            | Next      | What happens                                                   |
 * |-----------|-----------------|-----------|----------------------------------------------------------------|
 * | inactive  | start()         | recording | rrweb loads, capture begins; uploads every 10 s (worker)       |
 * | inactive  | start(), no DOM | inactive  | nothing; a warning when `debug` is on                          |
 * | recording | start()         | recording | nothing                                                        |
 * | recording | stop()          | inactive  | capture and upload timer stop; the rest goes with is_final     |
 * | paused    | stop()          | inactive  | what pause() kept goes with is_final (decision: SPEC is silent) |
 * | recording | pause()         | paused    | capture and upload timer stop; buffered events are kept       |
 * | otherwise | pause()         | unchanged | nothing                                                        |
 * | paused    | resume()        | recording | start() internally (a new full snapshot)                       |
 * | otherwise | resume()        | unchanged | nothing                                                        |
 * | recording | maxDuration     | inactive  | as stop(), final upload included (decision: SPEC is silent)    |
 * | recording | mutation cap    | inactive  | as stop(), with a debug message                                |
 * | recording | rrweb not there | inactive  | a debug message saying why; kept events get their final upload |
 */
import { type AnalyticsConfig, resolveConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { browserLocalStorage, createSafeStorage } from '../session/storage.js';
import { createDeliveryClient } from '../delivery/delivery-client.js';
import { deliveryOptions, globalTimers } from '../delivery/delivery-options.js';
import type { RecordingConfig } from './recording-config.js';
import type { RecorderDeps, RecorderEngine, StopReason } from './types.js';

/** A recorder's state (the table at the top of this file). */
export type RecorderState = 'inactive' | 'recording' | 'paused';

/**
 * Records one session with rrweb and uploads it in chunks (every 10 s, and the rest with
 * `is_final: true` on stop). Used on its own, it sends through a delivery client of its own (a Web
 * Worker, else in-process) that it shuts down after each stop; the client of `createAnalytics()`
 * has one bound to its own delivery and session (`startRecording()` and friends).
 *
 * Only one recorder can capture a page at a time (rrweb keeps page-wide state); a second one's
 * `start()` ends inactive with a debug message. No method throws.
 */
export class SessionRecorder {
  // The methods are made by the state machine (closures minify better than members: the
  // main-thread entry has a size budget).
  /** The session this recorder records. */
  declare readonly sessionId: string;
  /** Starts recording (outside a browser: a warning and nothing else). */
  declare readonly start: () => void;
  /** Stops recording; the rest is uploaded with `is_final: true` (also from paused). */
  declare readonly stop: () => void;
  /** Pauses a recording; what was captured is kept for the final upload. Otherwise nothing. */
  declare readonly pause: () => void;
  /** Resumes a paused recording (start() internally). Otherwise nothing. */
  declare readonly resume: () => void;
  /** True while recording (not while paused). */
  declare readonly isActive: () => boolean;
  /** Events captured and not yet uploaded: the main thread's buffer plus the worker's. */
  declare readonly getEventCount: () => number;
  /** Discards the events queued for upload without uploading them; the state is unchanged. */
  declare readonly clearEvents: () => void;

  /**
   * @param config - the analytics configuration: key, project, endpoint, `debug`, `userId`
   * @param sessionId - the session the recording belongs to
   * @param recordingConfig - how to record; every default is in {@link RecordingConfig}
   * @param deps - internal: the facade's delivery and storage, and test doubles
   */
  constructor(config: AnalyticsConfig, sessionId: string, recordingConfig: RecordingConfig = {}, deps: RecorderDeps = {}) {
    Object.assign(this, createMachine(config, String(sessionId), recordingConfig, deps));
  }
}

/** The members of a {@link SessionRecorder}. */
type Members = Pick<SessionRecorder, 'sessionId' | 'start' | 'stop' | 'pause' | 'resume' | 'isActive' | 'getEventCount' | 'clearEvents'>;

function createMachine(config: AnalyticsConfig, sessionId: string, recordingConfig: RecordingConfig, deps: RecorderDeps): Members {
  const log = deps.logger ?? createLogger(config?.debug === true);
  const win = 'win' in deps ? deps.win : typeof window === 'undefined' ? undefined : window;
  let state: RecorderState = 'inactive';
  let engine: RecorderEngine | undefined;
  let loading: Promise<RecorderEngine | undefined> | undefined;

  /** Runs `action` on the engine, loading it first; calls made while it loads run in order. */
  function run(action: (engine: RecorderEngine) => void): void {
    const apply = (loaded: RecorderEngine | undefined): void => {
      try {
        if (loaded) action(loaded);
      } catch (error) {
        log.error('session recorder failed', error);
      }
    };
    if (engine) return apply(engine);
    loading ??= import('./engine.js').then(
      ({ createRecorderEngine }) =>
        (engine = createRecorderEngine(
          {
            config,
            sessionId,
            recordingConfig,
            deps: { storage: createSafeStorage(config.transport?.storage ?? browserLocalStorage), timers: globalTimers, ...deps },
            log,
            win: win as Window,
            entry: { createDeliveryClient, resolveConfig, deliveryOptions },
          },
          { end },
        )),
      (error: unknown) => {
        log.debug('the session recorder could not be loaded', error);
        state = 'inactive';
        loading = undefined;
        return undefined;
      },
    );
    void loading.then(apply);
  }

  function start(): void {
    if (state === 'recording') return;
    if (typeof win?.document !== 'object' || typeof (win as Window & typeof globalThis).MutationObserver !== 'function') {
      return log.warn('session recording needs a browser; start() did nothing');
    }
    state = 'recording';
    run((e) => e.capture());
  }

  function end(reason: StopReason): void {
    if (state === 'inactive') return;
    state = 'inactive';
    run((e) => e.finish(reason));
  }

  return {
    sessionId,
    start,
    stop: () => end('stop'),
    pause() {
      if (state !== 'recording') return;
      state = 'paused';
      run((e) => e.hold());
    },
    resume() {
      if (state === 'paused') start();
    },
    isActive: () => state === 'recording',
    // Before the engine is loaded nothing has been captured.
    getEventCount: () => engine?.count() ?? 0,
    clearEvents: () => engine?.clear(),
  };
}
