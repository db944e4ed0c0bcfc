/**
 * The delivery of a `SessionRecorder` used without `createAnalytics()`: a delivery client of its
 * own, started as the client's is (the worker options in the same order, else in-process;
 * docs/architecture.md, "The worker boundary"), so the upload still runs off the main thread. The
 * engine creates it on the first hand-over and shuts it down after the final upload of each stop:
 * every start has its stop (docs/architecture.md, "Conventions"), and no module-level client is
 * shared between recorders. Part of the engine's lazy chunk; the pieces of the entry it needs are
 * handed over ({@link EntryParts}).
 */
import type { AnalyticsConfig } from '../config.js';
import type { Timers } from '../../protocol/worker/timers.js';
import type { Logger } from '../logger.js';
import type { EntryParts, OwnDelivery } from './types.js';

/** How long the final upload may take when the recorder shuts its delivery down (ms). */
export const OWN_DELIVERY_SHUTDOWN_MS = 30_000;

/** Starts a delivery client for `input` on the page at `href`. */
export function createOwnDelivery(input: AnalyticsConfig, href: string, log: Logger, timers: Timers, entry: EntryParts): OwnDelivery {
  // Recording only: it carries no events, so no id tail and nothing to tell `onDiscard`.
  const delivery = entry.createDeliveryClient(entry.deliveryOptions(entry.resolveConfig(input, href), timers, log, '', undefined));
  const shutdown = (): Promise<void> => delivery.shutdown(OWN_DELIVERY_SHUTDOWN_MS);
  return {
    send: (message) => delivery.send(message),
    recordingQueued: () => delivery.recordingQueued(),
    // A shutdown while the core is still starting would drop what waits for it: wait for the start.
    close: () => delivery.stats().then(shutdown, shutdown),
  };
}
