/**
 * The session recorder's engine (docs/architecture.md, "Recordings"), loaded lazily by
 * `SessionRecorder`: rrweb capture on the main thread, because it reads the DOM; everything after
 * capture happens in the worker (`worker/recording-uploader.ts`).
 *
 * - rrweb is `import()`ed as a chunk of its own on the first capture; when it cannot be loaded the
 *   recording ends inactive with a debug message saying why.
 * - One emit funnel: captured events are buffered and handed to the worker in batches (at most once
 *   a second, or every {@link POST_BATCH_EVENTS} events), never one post per event, and at once when
 *   the page is hidden, ahead of the facade's `page-hidden` (the listener is on `window`, capture
 *   phase, so it runs before the document's).
 * - Each batch reserves the next indexes of the session's recording (`recording-offsets.ts`).
 * - Every recording that handed anything over ends with a stop marker (an rrweb custom event), so
 *   its final chunk is never empty and its offset is never reused.
 * - Every start collects its removers (rrweb's stop, listeners, timers); every end runs them all.
 * - Console and network capture (`context/page-context.ts`, a chunk of its own loaded beside rrweb
 *   only when `console` or `network` is on) hand their entries to the same buffer; they are
 *   drained into it before every hand-over, so a stop or a hidden page loses none.
 */
import type { RecordedEvent } from '../../protocol/wire-types.js';
import { captureOptions, resolveRecordingConfig } from './capture-options.js';
import type { PageContext, PageContextSettings } from './context/page-context.js';
import { createMaskedValues } from './masked-values.js';
import { createMutationMeter } from './mutation-meter.js';
import { createOwnDelivery } from './own-delivery.js';
import { createRecordingOffsets } from './recording-offsets.js';
import type { EngineHost, EngineSettings, OwnDelivery, RecordFunction, RecorderEngine, RecordingSink } from './types.js';
import { runRemovers } from '../run-removers.js';

/** Captured events are handed to the worker at most this often (ms)... */
export const POST_INTERVAL_MS = 1000;
/** ...or as soon as this many are buffered. */
export const POST_BATCH_EVENTS = 500;
/** `data.tag` of the custom event (rrweb type 5) that ends every recording; `data.payload.reason` says why. */
export const STOP_MARKER_TAG = 'service-analytics:stop';
/** rrweb's `EventType.Custom`. */
const CUSTOM_EVENT = 5;
/** Where a page notes which recorder captures it: rrweb's state is page-wide. */
const CLAIM = Symbol.for('service-analytics.recorder');

/** Loads rrweb's `record` (a chunk of its own in the build). */
export async function loadRrweb(): Promise<RecordFunction> {
  const { record } = await import('rrweb');
  return record;
}

/** Starts console and network capture: the lazily loaded page context. */
type StartPageContext = (settings: PageContextSettings) => PageContext;

/** Loads the console and network capture (a chunk of its own in the build). */
async function loadPageContext(): Promise<StartPageContext> {
  const { startPageContext } = await import('./context/page-context.js');
  return startPageContext;
}

/** Creates the engine of one recorder. */
export function createRecorderEngine(settings: EngineSettings, host: EngineHost): RecorderEngine {
  const { config, sessionId, deps, log, win } = settings;
  const options = resolveRecordingConfig(settings.recordingConfig);
  const now = deps.now ?? (() => Date.now());
  const { timers } = deps;
  const userId = deps.userId ?? (() => config.userId ?? null);
  const offsets = createRecordingOffsets(
    deps.storage,
    `service-analytics:${config.projectId}:recording`,
    now,
    () => win.location?.href ?? '',
  );
  const page = win as unknown as Record<symbol, unknown>;
  const claim = {};

  /** Console or network capture is on: its chunk is loaded beside rrweb. */
  const wantsContext = options.console !== false || options.network !== false;
  /** What the masking hid, for the console and network capture to mask with; kept for the recorder's life. */
  const masked = wantsContext ? createMaskedValues() : undefined;
  /** The running page context's drain, while one runs. */
  let drainContext: (() => void) | undefined;

  let buffer: RecordedEvent[] = [];
  let postTimer: unknown;
  /** The delivery of a recorder used on its own: made on the first post, closed after each stop. */
  let own: OwnDelivery | undefined;
  /** Bumped whenever capture ends: a load or an event of an ended run is ignored. */
  let run = 0;
  let capturing = false;
  let removers: Array<() => void> = [];
  /** Recording time of the current recording before the current run (ms). */
  let recordedMs = 0;
  let runStart = 0;
  /** Events were handed over since the last stop: there is a recording to finish. */
  let posted = false;

  const sink = (): RecordingSink | undefined => deps.sink ?? own;

  function post(): void {
    drainContext?.();
    if (postTimer !== undefined) timers.clearTimeout(postTimer);
    postTimer = undefined;
    if (buffer.length === 0) return;
    const target = deps.sink ?? (own ??= createOwnDelivery(config, win.location?.href ?? '', log, timers, settings.entry));
    const events = buffer;
    buffer = [];
    const { offset, startedAt, startUrl } = offsets.reserve(sessionId, events.length);
    const user = userId();
    const meta = { startUrl, userId: typeof user === 'string' && user !== '' ? user : null, startedAt, offset };
    target.send({ t: 'recording', sessionId, meta, events });
    posted = true;
  }

  function hidden(): void {
    post();
    // The facade's unload path sends its own page-hidden after this; a recorder on its own says it here.
    own?.send({ t: 'page-hidden' });
  }

  function emit(gen: number, overCap: (event: RecordedEvent) => boolean, event: RecordedEvent): void {
    if (gen !== run) return;
    buffer.push(event);
    if (overCap(event)) {
      run++; // Nothing more from this run; rrweb is stopped by the end below.
      log.debug(`recording stopped: more than ${options.maxMutationsPerSecond} DOM mutations in one second (maxMutationsPerSecond)`);
      queueMicrotask(() => host.end('mutation-cap'));
      return;
    }
    if (buffer.length >= POST_BATCH_EVENTS) post();
    else if (postTimer === undefined) postTimer = timers.setTimeout(post, POST_INTERVAL_MS);
  }

  /** A console or network entry: into the buffer like rrweb's events, outside the mutation meter. */
  function emitEntry(event: RecordedEvent): void {
    buffer.push(event);
    if (buffer.length >= POST_BATCH_EVENTS) post();
    else if (postTimer === undefined) postTimer = timers.setTimeout(post, POST_INTERVAL_MS);
  }

  /** rrweb's `record` and the page context's start, once their chunks have loaded. */
  let loadedRecord: RecordFunction | undefined;
  let loadedContext: StartPageContext | undefined;

  function begin(gen: number, record: RecordFunction): void {
    if (page[CLAIM] !== undefined && page[CLAIM] !== claim) {
      log.debug('another session recorder is capturing this page (rrweb records one page at a time); this one stays inactive');
      return host.end('unavailable');
    }
    const overCap = createMutationMeter(options.maxMutationsPerSecond, now);
    let stop: (() => void) | undefined;
    const rrwebOptions = captureOptions(options, (event) => emit(gen, overCap, event), (error) => log.error('rrweb failed while recording', error), masked);
    try {
      stop = record(rrwebOptions);
    } catch (error) {
      log.error('rrweb could not start recording', error);
    }
    if (typeof stop !== 'function') {
      log.debug('rrweb did not start recording (see the message before); recording stays inactive');
      return host.end('unavailable');
    }
    page[CLAIM] = claim;
    const stopCapture = stop;
    removers.push(() => {
      if (page[CLAIM] === claim) delete page[CLAIM];
      stopCapture();
    });
    if (loadedContext !== undefined && masked !== undefined) startContext(loadedContext, rrwebOptions.maskInputFn);
  }

  /** Starts console and network capture after rrweb, so no entry comes before the recording's first event. */
  function startContext(start: StartPageContext, maskInputFn: (text: string, element: HTMLElement) => string): void {
    let context: PageContext;
    try {
      context = start({
        win,
        now,
        timers,
        log,
        console: options.console,
        network: options.network,
        maskAllText: options.maskAllText,
        masked: masked!,
        // The masking decides for each field, as for rrweb's input events; what it hides is noted.
        noteMaskedInputs() {
          for (const field of win.document.querySelectorAll<HTMLInputElement>('input, textarea, select')) {
            if (typeof field.value === 'string' && field.value !== '') maskInputFn(field.value, field);
          }
        },
        endpoint: settings.entry.resolveConfig(config, win.location?.href).endpoint,
        emit: emitEntry,
      });
    } catch (error) {
      return log.error('the recorder could not start console and network capture', error);
    }
    drainContext = context.drain;
    removers.push(() => {
      drainContext = undefined;
      context.stop();
    });
  }

  /** Ends the current run: rrweb, listeners and timers stop; the recording time is counted. */
  function endRun(): void {
    run++;
    if (capturing) recordedMs += Math.max(0, now() - runStart);
    capturing = false;
    runRemovers(removers, (error) => log.error('the recorder could not stop a listener', error));
  }

  return {
    capture() {
      const gen = ++run;
      capturing = true;
      runStart = now();
      const durationTimer = timers.setTimeout(() => {
        if (gen !== run) return;
        log.debug(`recording stopped: maxDuration (${options.maxDuration} ms) reached`);
        host.end('max-duration');
      }, Math.max(0, options.maxDuration - recordedMs));
      const onHide = (event: Event): void => {
        if (event.type === 'pagehide' || win.document.visibilityState === 'hidden') hidden();
      };
      win.addEventListener('visibilitychange', onHide, true);
      win.addEventListener('pagehide', onHide, true);
      removers.push(() => {
        timers.clearTimeout(durationTimer);
        win.removeEventListener('visibilitychange', onHide, true);
        win.removeEventListener('pagehide', onHide, true);
      });
      // Loaded once per engine: a resume (or a later start) takes its snapshot in the call itself,
      // so a stop right after it (or a page going away) cannot fall before the snapshot.
      if (loadedRecord !== undefined) return begin(gen, loadedRecord);
      const contextLoad = wantsContext
        ? loadPageContext().catch((error: unknown) => {
            log.debug('console and network capture could not be loaded (its chunk is missing or blocked); the replay goes on without them', error);
            return undefined;
          })
        : undefined;
      Promise.all([(deps.loadRecord ?? loadRrweb)(), contextLoad]).then(
        ([record, context]) => {
          loadedRecord = record;
          loadedContext = context;
          if (gen === run) begin(gen, record);
        },
        (error: unknown) => {
          if (gen !== run) return;
          log.debug('session recording is unavailable: rrweb could not be loaded (its chunk is missing or blocked); recording stays inactive', error);
          host.end('unavailable');
        },
      );
    },

    hold() {
      endRun();
      post();
      if (posted) sink()?.send({ t: 'recording-pause', sessionId });
    },

    finish(reason) {
      endRun();
      recordedMs = 0;
      if (posted || buffer.length > 0) {
        buffer.push({ type: CUSTOM_EVENT, data: { tag: STOP_MARKER_TAG, payload: { reason } }, timestamp: now() });
        post();
        sink()?.send({ t: 'recording-stop', sessionId });
      }
      posted = false;
      const closing = own;
      own = undefined;
      closing?.close().catch((error: unknown) => log.error('the recorder could not shut its delivery down', error));
    },

    clear() {
      drainContext?.();
      buffer = [];
      if (postTimer !== undefined) timers.clearTimeout(postTimer);
      postTimer = undefined;
      if (posted) sink()?.send({ t: 'recording-clear', sessionId });
    },

    count() {
      return buffer.length + (sink()?.recordingQueued() ?? 0);
    },
  };
}
