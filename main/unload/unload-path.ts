/**
 * The unload path of one client (docs/architecture.md, "The unload path"; docs/decisions.md,
 * "Unload"): when the page is hidden, the session is persisted and the core is asked to send now;
 * on `pagehide`, the events the server has not acknowledged go out by beacon, and so do those made
 * later in the unload (by listeners that run after this one) until the page is shown again.
 *
 * The beacon sender (with the wire mapping and gzip it needs) is lazily loaded, so the facade's
 * bundle does not carry it, in the chunk that starts the delivery core (`core-connection.ts`): a page
 * that tracks and goes away right after the client is ready finds it loaded (docs/decisions.md,
 * "Start-up"). A page closed in the moments before the core starts relies on the worker's send.
 */
import type { ResolvedConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { SessionManager } from '../session/session.js';
import { watchUnload } from './unload.js';
import { nextTask } from '../next-task.js';
import type { DeliveryClient } from '../delivery/delivery-client.js';

/** Starts the unload hooks; returns the remover. */
export function startUnloadPath(
  win: Window,
  config: ResolvedConfig,
  delivery: DeliveryClient,
  session: SessionManager,
  now: () => number,
  sendBeacon: ((url: string, body: string | Uint8Array) => boolean) | undefined,
  log: Logger,
): () => void {
  let beaconSender: Pick<typeof import('./beacon.js'), 'beaconFromPageHide'> | undefined;
  // In the next task, as the core's start (delivery-client.ts): the page's first dynamic import
  // costs the main thread milliseconds that do not belong in the task that created the client.
  nextTask()
    .then(() => import('../delivery/core-connection.js'))
    .then(
      (module) => (beaconSender = module),
      (error: unknown) => log.debug('the beacon sender could not be loaded; unacknowledged events may be lost at unload', error),
    );
  return watchUnload(win, {
    onHidden() {
      try {
        session.persist();
      } catch (error) {
        log.error('cannot persist the session', error);
      }
      // Posted after the buffered events, at the end of this task.
      delivery.send({ t: 'page-hidden' });
    },
    onPageHide() {
      try {
        session.persist();
      } catch (error) {
        log.error('cannot persist the session', error);
      }
      // Held (consent not granted): what waits must not leave the page.
      if (delivery.mode() === 'held') return;
      if (beaconSender === undefined) return log.debug('the beacon sender is not loaded yet; unacknowledged events may be lost');
      beaconSender.beaconFromPageHide(delivery, { win, config, sendBeacon, now, log });
    },
  });
}
