/**
 * The delivery core on the main thread: the fallback when no worker can start (CSP, old browsers,
 * a worker that died twice), and the path of tests. The core is loaded with a dynamic `import()`
 * so it stays out of the facade's bundle until it is needed (docs/architecture.md, "The rules").
 */
import type { CoreDeps } from '../../protocol/worker/core-deps.js';
import type { DeliveryConfig } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { DeliveryLink, LinkHandlers } from './delivery-link.js';

/** Loads the core and starts it with `replay` queued first. */
export async function startInProcessLink(
  config: DeliveryConfig,
  deps: Partial<CoreDeps> | undefined,
  replay: EventColumns | null,
  handlers: LinkHandlers,
): Promise<DeliveryLink> {
  const { createDeliveryCore } = await import('../../worker/delivery-core.js');
  // Never gzip here: compression belongs in the worker, never on the main thread
  // (docs/decisions.md, "Compression"); in-process it cost the page more main-thread time than it
  // saved.
  // Nor are bodies built for a deferred request here: the pagehide beacon serves (decisions.md, "Unload").
  const core = createDeliveryCore({ ...config, compress: false, deferredUnload: false }, deps, 'in-process');
  core.onMessage((message) => handlers.onMessage(message));
  // Under their own numbers, as every post (protocol/worker/worker-contract.ts).
  if (replay !== null && replay.timestamps.length > 0) core.receive({ t: 'event-columns', columns: replay });
  return {
    mode: 'in-process',
    post(message) {
      try {
        core.receive(message);
      } catch (error) {
        // Nothing is cloned here: a post that fails fails whole, and its events are reported as not posted.
        if (message.t !== 'event-columns') throw error;
        return message.columns.idCounters.map((_, i) => i);
      }
      return [];
    },
    flush: (upTo) => core.flush(upTo),
    clear: () => core.clear(),
    stats: () => Promise.resolve(core.stats()),
    shutdown: (timeoutMs) => core.shutdown(timeoutMs),
    close: () => void core.shutdown(0).catch(() => undefined),
    // Read by the core when it queued the first events (on this thread: the in-process cost).
    get timezone() {
      return core.timezone();
    },
  };
}
