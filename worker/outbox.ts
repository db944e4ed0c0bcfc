/**
 * The core's outgoing data plane: listeners, `log` posts (only when `debug` is on) and coalesced
 * `status` posts. However many events move in one task, the facade gets at most one status post
 * for it, carrying the numbers of every event acknowledged since the last one, as ranges. Beyond that, routine status posts
 * (acks while a burst drains, events received) go out at most once per {@link STATUS_INTERVAL_MS}:
 * a 10,000-event burst acked in 500 batches costs the main thread a handful of status messages,
 * not 500. An `immediate` change (the queue became empty, a flush settled, a discard) is posted at
 * the end of the current task regardless. Delaying acks only delays settling the facade's log of
 * unacknowledged events, and the queue size it counts from it (a beacon may resend them; the server
 * dedupes by event_id).
 */
import { toRanges } from '../protocol/worker/number-ranges.js';
import type { FromWorkerMessage } from '../protocol/worker/worker-contract.js';
import type { Timers } from '../protocol/worker/timers.js';

/** Routine status posts are spaced at least this far apart (ms). */
export const STATUS_INTERVAL_MS = 150;

/** The clock and timers the outbox spaces status posts with (the core's injected deps). */
export interface OutboxTimers extends Timers {
  now: () => number;
}

/** The counters a status post reports. */
export type StatusSnapshot = Omit<Extract<FromWorkerMessage, { t: 'status' }>, 't' | 'acked'>;

/** The outbox; create one with {@link createOutbox}. */
export interface Outbox {
  /** Adds a listener; returns the remover. */
  subscribe(listener: (message: FromWorkerMessage) => void): () => void;
  post(message: FromWorkerMessage): void;
  /** Posts a `log` message when `debug` is on; otherwise nothing. */
  log(level: 'debug' | 'warn' | 'error', message: string): void;
  /**
   * Something a status reports changed; `acked` event numbers are added to the next status post. Posted at
   * the end of the current task when `immediate` or when no status went out for
   * {@link STATUS_INTERVAL_MS}; otherwise once that interval is over.
   */
  statusChanged(acked?: readonly number[], immediate?: boolean): void;
  /** Stops status posts (shutdown). */
  close(): void;
}

/**
 * Creates an outbox.
 *
 * @param debug - whether `log` posts are sent (`config.debug`)
 * @param snapshot - the counters of the next status post, read when it is sent
 * @param timers - clock and timers for spacing status posts
 * @param intervalMs - least spacing of routine status posts; @default STATUS_INTERVAL_MS
 */
export function createOutbox(
  debug: boolean,
  snapshot: () => StatusSnapshot,
  timers: OutboxTimers,
  intervalMs = STATUS_INTERVAL_MS,
): Outbox {
  const listeners = new Set<(message: FromWorkerMessage) => void>();
  let acked: number[] = [];
  /** A microtask is pending to post (or schedule) the status. */
  let queued = false;
  /** The pending change must not wait for the interval. */
  let urgent = false;
  /** The timer that posts the status once the interval is over. */
  let timer: unknown;
  let lastPost = -Infinity;
  let closed = false;

  function postStatus(): void {
    if (timer !== undefined) {
      timers.clearTimeout(timer);
      timer = undefined;
    }
    urgent = false;
    lastPost = timers.now();
    const status: FromWorkerMessage = { t: 'status', ...snapshot(), acked: toRanges(acked) };
    acked = [];
    post(status);
  }

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
    statusChanged(numbers, immediate = false) {
      if (numbers !== undefined) for (const n of numbers) acked.push(n);
      if (closed) return;
      if (immediate) urgent = true;
      // A pending microtask decides for this change too; a pending timer carries a routine one.
      if (queued || (timer !== undefined && !urgent)) return;
      queued = true;
      // A microtask: after the current message or request completion is fully handled, and
      // never re-entrantly inside the in-process facade's own call.
      queueMicrotask(() => {
        queued = false;
        if (closed) return;
        const wait = lastPost + intervalMs - timers.now();
        if (urgent || wait <= 0) return postStatus();
        timer ??= timers.setTimeout(() => {
          timer = undefined;
          if (!closed) postStatus();
        }, wait);
      });
    },
    close() {
      closed = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
    },
  };
}
