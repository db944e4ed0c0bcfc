/**
 * Bookkeeping of pending `flush(upTo)` calls (docs/architecture.md, "Acknowledgements back to the
 * facade"; a failed flush keeps the events: docs/decisions.md, "Offline handling"). A flush first
 * waits until the core has received the event numbered `upTo` (the comlink call and the data-plane
 * post travel on different channels), then takes a snapshot of the ids queued at that
 * moment. It resolves `ok` once none of them is waiting any more, and fails as soon as a request
 * carrying one of them fails; the events stay queued either way.
 */
import type { SendOutcome } from './sender.js';
import type { FlushResult } from '../protocol/worker/worker-contract.js';

/** A failed flush's result before `queued` is filled in. */
export type FlushFailure = Omit<Extract<FlushResult, { ok: false }>, 'ok' | 'queued'>;

/** The tracker; create one with {@link createFlushTracker}. */
export interface FlushTracker {
  /** Registers `flush(upTo)`; the promise never rejects. */
  add(upTo: number): Promise<FlushResult>;
  /**
   * Starts every flush whose events have all arrived (`upTo ≤ highest`, the highest number
   * received), snapshotting `queuedIds()`. Returns the ids of flushes started now, for the core to
   * send without backoff.
   */
  start(highest: number, queuedIds: () => string[]): string[];
  /** Events the server accepted. */
  accepted(ids: readonly string[]): void;
  /** Events that left the queue without a request failing for them (overflow, clear, rejected by index). */
  left(ids: readonly string[]): void;
  /**
   * A request carrying `ids` failed: every started flush holding one of them fails. They are taken
   * out now (so the discards that follow cannot settle them as done) and settled by the returned
   * function, once the queue's transitions are applied and `queued` is known.
   */
  failing(ids: readonly string[]): (failure: FlushFailure, queued: number) => void;
  /** Resolves every pending flush with `result` (shutdown). */
  settleAll(result: FlushResult): void;
  /** True while some flush has started and not yet settled. */
  readonly active: boolean;
}

interface PendingFlush {
  upTo: number;
  /** Ids still waiting; `undefined` until the flush starts. */
  ids: Set<string> | undefined;
  sent: number;
  resolve: (result: FlushResult) => void;
}

/**
 * Creates a tracker with no pending flush.
 *
 * @param onSettle - called whenever a flush settles (the core posts a status at once then)
 */
export function createFlushTracker(onSettle: () => void = () => undefined): FlushTracker {
  let pending: PendingFlush[] = [];

  function settle(flush: PendingFlush, result: FlushResult): void {
    pending = pending.filter((p) => p !== flush);
    flush.resolve(result);
    onSettle();
  }

  function remove(ids: readonly string[], countSent: boolean): void {
    for (const flush of pending) {
      if (flush.ids === undefined) continue;
      for (const id of ids) if (flush.ids.delete(id) && countSent) flush.sent += 1;
      if (flush.ids.size === 0) settle(flush, { ok: true, sent: flush.sent });
    }
  }

  return {
    add(upTo) {
      return new Promise((resolve) => pending.push({ upTo, ids: undefined, sent: 0, resolve }));
    },
    start(highest, queuedIds) {
      let started: string[] = [];
      for (const flush of pending) {
        if (flush.ids !== undefined || flush.upTo > highest) continue;
        const ids = queuedIds();
        if (ids.length === 0) settle(flush, { ok: true, sent: 0 });
        else {
          flush.ids = new Set(ids);
          started = ids;
        }
      }
      return started;
    },
    accepted(ids) {
      remove(ids, true);
    },
    left(ids) {
      remove(ids, false);
    },
    failing(ids) {
      const hit = pending.filter((flush) => flush.ids !== undefined && ids.some((id) => flush.ids?.has(id)));
      if (hit.length > 0) pending = pending.filter((flush) => !hit.includes(flush));
      return (failure, queued) => {
        for (const flush of hit) flush.resolve({ ok: false, ...failure, queued });
        if (hit.length > 0) onSettle();
      };
    },
    settleAll(result) {
      const all = pending;
      pending = [];
      for (const flush of all) flush.resolve(result);
      if (all.length > 0) onSettle();
    },
    get active() {
      return pending.some((flush) => flush.ids !== undefined);
    },
  };
}

/** The flush result of a failed request: errors cross the boundary as data (docs/architecture.md, "Conventions"). */
export function flushFailure(outcome: Exclude<SendOutcome, { kind: 'ok' }>): FlushFailure {
  if (outcome.kind === 'network') {
    return { code: outcome.timedOut ? 'TIMEOUT' : 'NETWORK_ERROR', message: outcome.message };
  }
  if (outcome.kind === 'failed') return { code: 'INTERNAL_ERROR', message: outcome.message };
  const code = outcome.status === 401 ? 'AUTH_ERROR' : outcome.status === 429 ? 'RATE_LIMITED' : 'HTTP_ERROR';
  return { code, message: outcome.message, status: outcome.status };
}
