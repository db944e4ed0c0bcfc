/** Delivery outside a browser: accepts everything, sends and keeps nothing. */
import type { Logger } from '../logger.js';
import type { DeliveryClient } from './delivery-client.js';

/**
 * The delivery of a client outside a browser (server rendering): nothing is sent or kept, so a
 * server process does not accumulate events or start timers.
 */
export function createNullDelivery(logger: Logger): DeliveryClient {
  let warned = false;
  const warn = (): void => {
    if (warned) return;
    warned = true;
    logger.debug('not in a browser: events are not sent');
  };
  return {
    push: warn,
    send: () => {},
    flush: () => Promise.resolve(),
    clear: () => Promise.resolve(),
    queueSize: () => 0,
    recordingQueued: () => 0,
    mode: () => 'off',
    stats: () =>
      Promise.resolve({
        queueSize: 0,
        receivedSeq: 0,
        recordingQueued: 0,
        sent: 0,
        discarded: 0,
        mode: 'off',
        strategy: null,
        restarts: 0,
        unacknowledged: 0,
      }),
    started: () => Promise.resolve(),
    pending: () => ({ chunks: [], timezone: undefined, covered: [] }),
    forget: () => {},
    atTaskEnd: () => {},
    release: () => {},
    shutdown: () => Promise.resolve(),
  };
}
