/**
 * The options of a delivery client, made from the resolved configuration in one place, so that the
 * client of `createAnalytics()` and a `SessionRecorder` used on its own (`recorder/own-delivery.ts`)
 * start their core alike, with the test seam (`transport-options.ts`) applied. In the main-thread
 * entry: the recorder's lazy engine is handed {@link deliveryOptions} (`EntryParts`) rather than
 * importing it, so the entry stays one file.
 */
import { type DiscardInfo, type ResolvedConfig, toDeliveryConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { CoreDeps } from '../../protocol/worker/core-deps.js';
import type { Timers } from '../../protocol/worker/timers.js';
import type { DeliveryConfig } from '../../protocol/worker/worker-contract.js';
import type { StartStrategy, TransportOptions, WorkerFactory } from './transport-options.js';

/**
 * The platform's timers, looked up when called, never captured at import (docs/architecture.md,
 * "Conventions"). Not `platformTimers()` of protocol/worker/timers.ts: a module the entry shares
 * with the core's lazy chunk becomes a chunk of its own, which costs the entry more bytes than this.
 */
export const globalTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Options of `createDeliveryClient()`: what every start of its core needs (the timeouts are {@link TransportOptions}' with their defaults), and the client's own. */
export interface DeliveryClientOptions extends Required<Pick<TransportOptions, 'startTimeoutMs' | 'controlTimeoutMs' | 'flushTimeoutMs'>> {
  config: DeliveryConfig;
  workerUrl: string | URL | undefined;
  createWorker: WorkerFactory | undefined;
  coreDeps: Partial<CoreDeps> | undefined;
  timers: Timers;
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
    config: toDeliveryConfig(config),
    workerUrl: config.workerUrl,
    createWorker: transport.createWorker,
    coreDeps: transport.coreDeps,
    timers,
    startTimeoutMs: transport.startTimeoutMs ?? 3000,
    controlTimeoutMs: transport.controlTimeoutMs ?? 3000,
    // A flush may wait out every retry of the backoff before it answers.
    flushTimeoutMs: transport.flushTimeoutMs ?? 30_000 + config.retryDelay * (2 ** config.retryAttempts - 1),
    // `worker-url` only when there is a URL to start from; `worker: false`, the in-process core only.
    strategies: (transport.strategies ?? all).filter(
      (s) => (config.worker !== false || s === 'in-process') && (s !== 'worker-url' || config.workerUrl !== undefined),
    ),
    logger,
    onDiscard,
    idTail,
  };
}
