/**
 * The options of a delivery client, made from the resolved configuration in one place: the client
 * of `createAnalytics()` and a `SessionRecorder` used on its own (`recorder/own-delivery.ts`) start
 * their core alike (the same strategies in the same order, the same timeouts; docs/architecture.md,
 * "The worker boundary"). Also the internal seam through which tests and benchmarks replace the
 * worker start, the core's dependencies and browser APIs (`AnalyticsConfig.transport`, not public).
 * Part of the main-thread entry; the recorder's lazily loaded engine gets {@link deliveryOptions}
 * handed over (`EntryParts`) rather than importing it, so the entry stays one file.
 */
import { type DiscardInfo, type ResolvedConfig, toDeliveryConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { CoreDeps } from '../../protocol/worker/core-deps.js';
import type { Timers } from '../../protocol/worker/timers.js';
import type { DeliveryConfig } from '../../protocol/worker/worker-contract.js';

/**
 * The platform's timers, looked up when called, never captured at import (docs/architecture.md,
 * "Conventions"). Not `platformTimers()` of protocol/worker/timers.ts: a module the entry shares
 * with the core's lazy chunk becomes a chunk of its own, which costs the entry more bytes than this.
 */
export const globalTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Ways of starting the delivery core, in the order they are tried (docs/architecture.md, "The worker boundary"). */
export type StartStrategy = 'worker-url' | 'shipped-worker' | 'inline-worker' | 'in-process';

/** The part of the `Worker` interface the facade uses, so tests can pass a fake. */
export interface WorkerLike {
  postMessage(message: unknown, transfer: Transferable[]): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
  removeEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
  terminate(): void;
}

/** Constructs a worker: `new Worker(url, options)` by default. */
export type WorkerFactory = (url: string | URL, options: WorkerOptions) => WorkerLike;

/**
 * Overrides for tests and benchmarks.
 * @internal
 */
export interface TransportOptions {
  /** Dependencies passed to the in-process delivery core (e.g. a fake `fetch`). @default the core's own defaults */
  coreDeps?: Partial<CoreDeps>;
  /** Strategies to try, in order. @default all four, in {@link StartStrategy}'s order */
  strategies?: StartStrategy[];
  /** Replaces `new Worker(url, options)`. @default `new Worker(url, options)` */
  createWorker?: WorkerFactory;
  /** How long a worker may take to answer `init`. @default 3000 */
  startTimeoutMs?: number;
  /** How long a control call (stats, clear, shutdown, liveness probe) may take. @default 3000 */
  controlTimeoutMs?: number;
  /** How long `flush()` may take before the worker is probed for liveness. @default 30000 plus the retry backoff */
  flushTimeoutMs?: number;
  /** Replaces `navigator.sendBeacon`. @default `navigator.sendBeacon` where it exists */
  sendBeacon?: (url: string, body: string | Uint8Array) => boolean;
  /** Replaces `window.localStorage`; return undefined for "no storage". @default `window.localStorage` */
  storage?: () => Storage | undefined;
  /** Replaces `Date.now`. @default `Date.now()` */
  now?: () => number;
  /** Replaces the random source of ids: fills the array with random bytes. @default `crypto.getRandomValues` */
  randomBytes?: (bytes: Uint8Array) => void;
}

/** What every start of the core needs; the timeouts are {@link TransportOptions}' with their defaults. */
export interface StartContext extends Required<Pick<TransportOptions, 'startTimeoutMs' | 'controlTimeoutMs' | 'flushTimeoutMs'>> {
  config: DeliveryConfig;
  workerUrl: string | URL | undefined;
  createWorker: WorkerFactory | undefined;
  coreDeps: Partial<CoreDeps> | undefined;
  timers: Timers;
}

/** Options of `createDeliveryClient()`. */
export interface DeliveryClientOptions {
  context: StartContext;
  strategies: readonly StartStrategy[];
  logger: Logger;
  onDiscard: ((info: DiscardInfo) => void) | undefined;
  /** The random end of the page's event ids (`uuid-v7.ts`), carried by every post's columns. */
  idTail: string;
  /** Start no core until `release()` (consent pending): events wait in the buffer, at most maxQueueSize. */
  held?: boolean;
  /** Outside a browser (server rendering): start nothing, keep and send nothing. */
  off?: boolean;
}

/**
 * The options of `createDeliveryClient()` for `config`.
 * @param idTail - the random end of the page's event ids; `''` for a delivery that carries no
 *   events (a recorder's own)
 * @param onDiscard - told of events that leave the queue unaccepted; undefined where no events go
 */
export function deliveryOptions(
  config: ResolvedConfig,
  timers: Timers,
  logger: Logger,
  idTail: string,
  onDiscard: ((info: DiscardInfo) => void) | undefined,
): DeliveryClientOptions {
  const transport = config.transport ?? {};
  const all: StartStrategy[] = ['worker-url', 'shipped-worker', 'inline-worker', 'in-process'];
  return {
    context: {
      config: toDeliveryConfig(config),
      workerUrl: config.workerUrl,
      createWorker: transport.createWorker,
      coreDeps: transport.coreDeps,
      timers,
      startTimeoutMs: transport.startTimeoutMs ?? 3000,
      controlTimeoutMs: transport.controlTimeoutMs ?? 3000,
      // A flush may wait out every retry of the backoff before it answers.
      flushTimeoutMs: transport.flushTimeoutMs ?? 30_000 + config.retryDelay * (2 ** config.retryAttempts - 1),
    },
    // `worker-url` only when there is a URL to start from; `worker: false`, the in-process core only.
    strategies: (transport.strategies ?? all).filter(
      (s) => (config.worker !== false || s === 'in-process') && (s !== 'worker-url' || config.workerUrl !== undefined),
    ),
    logger,
    onDiscard,
    idTail,
  };
}
