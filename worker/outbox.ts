/**
 * The core's outgoing data plane: listeners, `log` posts (only when `debug` is on) and coalesced
 * `status` posts. However many events move in one task, the facade gets at most one status post
 * for it, carrying every id acknowledged since the last one, so a 10,000-event burst costs the
 * main thread a few hundred messages, not 10,000.
 */
import type { FromWorkerMessage } from './types.js';

/** The counters a status post reports. */
export type StatusSnapshot = Omit<Extract<FromWorkerMessage, { t: 'status' }>, 't' | 'acked'>;

/** The outbox; create one with {@link createOutbox}. */
export interface Outbox {
  /** Adds a listener; returns the remover. */
  subscribe(listener: (message: FromWorkerMessage) => void): () => void;
  post(message: FromWorkerMessage): void;
  /** Posts a `log` message when `debug` is on; otherwise nothing. */
  log(level: 'debug' | 'warn' | 'error', message: string): void;
  /** Something a status reports changed; `acked` ids are added to the next status post. */
  statusChanged(acked?: readonly string[]): void;
  /** Stops status posts (shutdown). */
  close(): void;
}

/**
 * Creates an outbox.
 *
 * @param debug - whether `log` posts are sent (`config.debug`)
 * @param snapshot - the counters of the next status post, read when it is sent
 */
export function createOutbox(debug: boolean, snapshot: () => StatusSnapshot): Outbox {
  const listeners = new Set<(message: FromWorkerMessage) => void>();
  let acked: string[] = [];
  let queued = false;
  let closed = false;

  function post(message: FromWorkerMessage): void {
    for (const listener of listeners) {
      try {
        listener(message);
      } catch {
        // One failing listener must not starve the others.
      }
    }
  }

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    post,
    log(level, message) {
      if (debug) post({ t: 'log', level, message });
    },
    statusChanged(ids) {
      if (ids !== undefined) for (const id of ids) acked.push(id);
      if (queued || closed) return;
      queued = true;
      // A microtask: after the current message or request completion is fully handled, and
      // never re-entrantly inside the in-process facade's own call.
      queueMicrotask(() => {
        queued = false;
        if (closed) return;
        const status: FromWorkerMessage = { t: 'status', ...snapshot(), acked };
        acked = [];
        post(status);
      });
    },
    close() {
      closed = true;
    },
  };
}
