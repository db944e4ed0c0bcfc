/**
 * Types of the session recorder: the internal seams between the recorder's parts (its public
 * configuration is `recording-config.ts`). No runtime code here, so the main-thread entry pays nothing
 * for it.
 */
import type { RecordedEvent } from '../../protocol/wire-types.js';
import type { ToWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { AnalyticsConfig, resolveConfig } from '../config.js';
import type { Timers } from '../../protocol/worker/timers.js';
import type { Logger } from '../logger.js';
import type { RecordingConfig, RecordingSampling } from './recording-config.js';
import type { KeyValueStore } from '../session/storage.js';
import type { createDeliveryClient } from '../delivery/delivery-client.js';
import type { deliveryOptions } from '../delivery/delivery-options.js';

/** The recorder's data-plane messages (`protocol/worker/worker-contract.ts`). */
export type RecorderMessage = Extract<
  ToWorkerMessage,
  { t: 'recording' | 'recording-stop' | 'recording-pause' | 'recording-clear' | 'page-hidden' }
>;

/** Where the recorder posts its output: the delivery core of the client (`DeliveryClient` fits). */
export interface RecordingSink {
  /** Posts one message after those posted before it. */
  send(message: RecorderMessage): void;
  /** Recorded events the core holds for upload (a mirror of its status). */
  recordingQueued(): number;
}

/** The options the recorder gives rrweb's `record()` (a subset of rrweb's `recordOptions`). */
export interface CaptureOptions {
  emit(event: RecordedEvent, isCheckout?: boolean): void;
  checkoutEveryNms: number;
  blockClass: string;
  ignoreClass: string;
  maskTextClass: string;
  /** Which elements' text rrweb passes to `maskTextFn`: all of them; the function decides. */
  maskTextSelector: string;
  maskTextFn(text: string, element: HTMLElement | null): string;
  /** Which inputs rrweb passes to `maskInputFn`: all of them; the function decides. */
  maskInputOptions: Record<string, boolean>;
  maskInputFn(text: string, element: HTMLElement): string;
  inlineStylesheet: boolean;
  collectFonts: boolean;
  /** `canvas`: images per second of each canvas, with `recordCanvas`. */
  sampling: RecordingSampling & { canvas?: number };
  /** Record canvas contents (`RecordingConfig.recordCanvas`). */
  recordCanvas: boolean;
  /** How canvas images are encoded, with `recordCanvas`. */
  dataURLOptions?: { type: string; quality: number };
  /** rrweb's own errors; answering true tells rrweb they were handled. */
  errorHandler(error: unknown): boolean;
}

/** rrweb's `record()`: starts capture and returns its stop, or undefined when it could not start. */
export type RecordFunction = (options: CaptureOptions) => (() => void) | undefined;

/** Why a recording ended. */
export type StopReason = 'stop' | 'max-duration' | 'mutation-cap' | 'unavailable';

/**
 * Dependencies of a {@link SessionRecorder}, replaceable for tests and for the facade, which binds
 * the recorder to its own delivery, storage and identity. Not part of the public API.
 * @internal
 */
export interface RecorderDeps {
  /** The page. @default `window` where there is one; undefined means "not a browser" */
  win?: Window | undefined;
  /** @default a console logger when `config.debug` is on */
  logger?: Logger;
  /** Loads rrweb's `record`; injectable for tests (docs/architecture.md, "Conventions"). @default `import('rrweb')`, a chunk of its own */
  loadRecord?: () => Promise<RecordFunction>;
  /** Where recorder output goes. @default a delivery client of the recorder's own (worker, else in-process) */
  sink?: RecordingSink;
  /** Where the next event index of each session's recording is kept. @default localStorage */
  storage?: KeyValueStore;
  /** The user id of each chunk. @default `config.userId` */
  userId?: () => string | null;
  /** @default `Date.now()` */
  now?: () => number;
  /** @default the platform's timers */
  timers?: Timers;
}

/**
 * What a recorder hands the engine it loads. Everything the engine would otherwise import from the
 * main-thread entry comes in here, so the engine's chunk imports nothing from the entry (which
 * would split the entry into shared chunks that compress worse).
 */
export interface EngineSettings {
  config: AnalyticsConfig;
  sessionId: string;
  recordingConfig: RecordingConfig;
  deps: RecorderDeps & Required<Pick<RecorderDeps, 'storage' | 'timers'>>;
  log: Logger;
  /** The page (the recorder checked that there is one). */
  win: Window;
  /** What the delivery of a recorder used on its own (`deps.sink` absent) is made of. */
  entry: EntryParts;
}

/** Parts of the main-thread entry that the engine uses: handed over, not imported (see {@link EngineSettings}). */
export interface EntryParts {
  createDeliveryClient: typeof createDeliveryClient;
  resolveConfig: typeof resolveConfig;
  /** The one place the options of a delivery client are made (`delivery/delivery-options.ts`). */
  deliveryOptions: typeof deliveryOptions;
}

/** A sink of the recorder's own, which it shuts down after each stop (`own-delivery.ts`). */
export interface OwnDelivery extends RecordingSink {
  /** Lets the core upload what it holds, then stops it. */
  close(): Promise<void>;
}

/** What the lazily loaded engine needs from the recorder that created it. */
export interface EngineHost {
  /** Ends the recording as `stop()` does (maximum duration, mutation cap, rrweb unavailable). */
  end(reason: StopReason): void;
}

/**
 * The recorder's work behind its state machine (`engine.ts`, a lazily loaded chunk). The state
 * machine calls these only on the transitions of its table (`session-recorder.ts`).
 */
export interface RecorderEngine {
  /** → recording: loads rrweb and starts capture. */
  capture(): void;
  /** recording → paused: capture stops; buffered events are handed over and kept, not uploaded. */
  hold(): void;
  /** → inactive: capture stops; the rest is uploaded with `is_final: true`. */
  finish(reason: StopReason): void;
  /** Discards queued events without uploading them. */
  clear(): void;
  /** Events queued for upload: the main-thread buffer and the core's. */
  count(): number;
}
