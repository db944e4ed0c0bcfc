/**
 * The facade's deferred request (docs/architecture.md, "The unload path"; docs/decisions.md,
 * "Unload"): where the page has `fetchLater()`, one request is kept armed with the body the
 * delivery core built of what the server has not acknowledged (`worker/deferred-body.ts`). The
 * browser sends it when the page goes away, even when the tab crashes or `pagehide` never runs.
 * Each `deferred-arm` from the core replaces it: the previous one is aborted, a new one armed.
 * Nothing here runs per event: per message, one abort and one `fetchLater` call.
 *
 * From `pagehide` to `pageshow` what is armed stays as it is: the pagehide beacon has left out the
 * events it carries, so a body that arrives from the core during the unload must not abort it.
 * After `pageshow` the next body from the core replaces it as usual.
 *
 * Where the page has no `fetchLater` (Firefox, Safari, insecure contexts) the body is held instead
 * of armed: the delivery client keeps it, and the pagehide beacon sends it as it is, so that
 * `pagehide` costs the main thread one `sendBeacon` for those events instead of their JSON and
 * gzip (`beacon.ts`; docs/decisions.md, "Unload").
 *
 * In the chunk that starts the core (`core-connection.ts`), not in the facade's entry.
 */
import type { FromWorkerMessage } from '../../protocol/worker/worker-contract.js';

/** The core's messages for the deferred request. */
export type DeferredMessage = Extract<FromWorkerMessage, { t: 'deferred-arm' | 'deferred-disarm' }>;

/** `fetchLater` as this module calls it (Chromium's deferred fetch). */
export type FetchLater = (url: string, init: RequestInit & { activateAfter?: number }) => unknown;

/** One client's deferred request; create one with {@link createDeferredRequest}. */
export interface DeferredRequest {
  /**
   * Aborts what is armed and arms the core's new body, or only aborts on a disarm. Returns what
   * the delivery client is to hear: the message when its body is armed, the message marked `held`
   * where there is no `fetchLater`, a disarm when it is not armed (`fetchLater` refused it:
   * quota), so that the pagehide beacon then sends those events itself; undefined when nothing
   * changed (the page is between `pagehide` and `pageshow`).
   */
  receive(message: DeferredMessage): DeferredMessage | undefined;
  /** Aborts what is armed (`clearQueue()`: the events are dropped, they must not leave later). */
  disarm(): void;
}

/**
 * Creates the deferred request of one client.
 * @param fetchLater the page's, looked up when called; undefined where the page has none (the
 *   bodies are then held for the pagehide beacon).
 * @param debug where a refused `fetchLater` is reported (the debug log).
 * @param page where `pagehide` and `pageshow` are heard (the window).
 */
export function createDeferredRequest(
  fetchLater: FetchLater | undefined,
  debug: (message: string, detail?: unknown) => void,
  page?: Pick<Window, 'addEventListener'>,
): DeferredRequest {
  let controller: AbortController | undefined;
  let hidden = false;
  page?.addEventListener('pagehide', () => (hidden = true));
  page?.addEventListener('pageshow', () => (hidden = false));

  function disarm(): void {
    controller?.abort();
    controller = undefined;
  }

  return {
    receive(message) {
      if (hidden) return undefined;
      disarm();
      if (message.t === 'deferred-disarm') return message;
      if (fetchLater === undefined) return { ...message, held: true };
      const next = new AbortController();
      try {
        // text/plain, no cookies: the beacon form, as the pagehide beacon sends it (beacon.ts).
        fetchLater(message.url, {
          method: 'POST',
          // The bytes as they are, not a Blob: a Blob is registered with the browser process
          // first, which cost the page's main thread about as much as the request itself.
          headers: { 'content-type': 'text/plain' },
          body: message.body,
          credentials: 'omit',
          signal: next.signal,
        });
        controller = next;
        return message;
      } catch (error) {
        // A QuotaExceededError above all: the pagehide beacon stays the way out.
        debug('fetchLater refused the deferred request; the pagehide beacon sends its events', error);
        return { t: 'deferred-disarm' };
      }
    },
    disarm,
  };
}
