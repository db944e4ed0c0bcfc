/**
 * The options of a delivery client, made from the resolved configuration in one place: the client
 * of `createAnalytics()` and a `SessionRecorder` used on its own (`recorder/own-delivery.ts`) start
 * their core alike (the same strategies in the same order, the same timeouts; docs/architecture.md,
 * "The worker boundary"). Part of the main-thread entry; the recorder's lazily loaded engine gets
 * it handed over (`EntryParts`) rather than importing it, so the entry stays one file.
 */
import { type DiscardInfo, type ResolvedConfig, toDeliveryConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { DeliveryClientOptions } from './delivery-client.js';
import type { Timers } from '../../protocol/worker/timers.js';
import { ALL_STRATEGIES } from './transport-options.js';

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
    strategies: (transport.strategies ?? ALL_STRATEGIES).filter(
      (s) => (config.worker !== false || s === 'in-process') && (s !== 'worker-url' || config.workerUrl !== undefined),
    ),
    logger,
    onDiscard,
    idTail,
  };
}
