/**
 * The facade's mirror of the delivery core's state (docs/architecture.md, "Acknowledgements back to
 * the facade"), so that the questions the host app asks synchronously never wait for a worker:
 *
 * - the queue size and recorded events waiting, from the core's last status post, estimated
 *   forward by what was posted since (`getQueueSize()` and `recordingQueued()`);
 * - the events posted and not yet settled (`ack-mirror.ts`), numbered by `seq`, for the unload
 *   path's beacon and a restart's replay, and the buffered events already sent by beacon;
 * - the discards the host app hears of through `onDiscard`, whoever dropped them.
 */
import type { DiscardReason, FromWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import { type MirrorChunk, createAckMirror } from './ack-mirror.js';
import type { DiscardInfo } from '../config.js';
import type { Logger } from '../logger.js';
import type { DeliveryClient, PendingEvents } from './delivery-client.js';
import type { DataMessage } from './post-buffer.js';

/** The mirror; create one with {@link createCoreMirror}. */
export interface CoreMirror {
  /** Events posted to the current core (a replay included): the next post's first number. */
  readonly seq: number;
  /** Events posted to the current core that need a beacon still (not acknowledged, discarded or beaconed). */
  readonly size: number;
  /** Takes a data-plane message of the current core: a status, a discard or a log line. */
  receive(message: FromWorkerMessage): void;
  /**
   * Remembers `columns` as posted to the current core, numbered from {@link seq} + `skipped`, until
   * settled; the `skipped` numbers before them went to events dropped unposted.
   */
  posted(columns: EventColumns, skipped?: number): void;
  /** Counts a message just posted to the current core into the estimate of recorded events waiting. */
  sent(message: DataMessage): void;
  /** Tells `onDiscard` of dropped events (none: nothing); an `onDiscard` that throws is logged. */
  discard(ids: string[], reason: DiscardReason, detail: string): void;
  /**
   * The core died: forgets its status, and counts the unacknowledged events as posted to the next
   * core, not yet received. Returns them, for the next core to replay.
   */
  restart(): readonly MirrorChunk[];
  /** The next core was given `columns` as its events 0 … n − 1: the mirror is renumbered as a whole. */
  replayed(columns: EventColumns): void;
  /** {@link DeliveryClient.queueSize}, with `buffered` events not posted yet. */
  queueSize(buffered: number): number;
  /** {@link DeliveryClient.recordingQueued}, with `waiting` messages not posted yet. */
  recordingQueued(waiting: readonly DataMessage[]): number;
  /** {@link DeliveryClient.pending}, with the events of `buffer` not posted yet. */
  pending(buffer: EventColumns, timezone: string | undefined): PendingEvents;
  /** {@link DeliveryClient.forget}. */
  forget(ranges: readonly number[], buffered: readonly number[]): void;
  /** Forgets every event: a clear() dropped them. */
  clear(): void;
}

/**
 * Creates the mirror of a client whose core keeps at most `cap` events (maxQueueSize).
 * @param onDiscard the host app's, told of every event dropped.
 */
export function createCoreMirror(cap: number, logger: Logger, onDiscard: ((info: DiscardInfo) => void) | undefined): CoreMirror {
  let seq = 0;
  /** The core's last status: its queue size, and how many of the events posted to it it had received. */
  let queued = 0;
  let received = 0;
  /** The core's `recordingQueued`, plus the recorded events posted since its last status. */
  let recording = 0;
  const unacked = createAckMirror();
  /** Buffered events already sent by beacon: posted to the core, but not remembered for the next beacon. */
  const beaconed = new Set<number>();
  /** Numbers of the events the armed deferred request carries (`deferred-request.ts`), as ranges. */
  let covered: readonly number[] = [];
  /** The body of the covered events, where the page holds it for the pagehide beacon (no `fetchLater`). */
  let held: PendingEvents['held'];

  function discard(ids: string[], reason: DiscardReason, detail: string): void {
    if (ids.length === 0 || onDiscard === undefined) return;
    try {
      onDiscard({ ids, reason, detail });
    } catch (error) {
      logger.error('onDiscard threw', error);
    }
  }

  return {
    get seq() {
      return seq;
    },

    get size() {
      return unacked.size;
    },

    receive(message) {
      switch (message.t) {
        case 'status':
          queued = message.queueSize;
          received = message.receivedSeq;
          recording = message.recordingQueued;
          unacked.settle(message.acked);
          break;
        case 'discarded':
          unacked.settle(message.ranges);
          discard(message.ids, message.reason, message.detail);
          break;
        case 'log':
          logger[message.level](`core: ${message.message}`);
          break;
        case 'deferred-arm':
          covered = message.covered;
          held = message.held && message;
          break;
        case 'deferred-disarm':
          covered = [];
          held = undefined;
      }
    },

    posted(columns, skipped = 0) {
      seq += skipped;
      unacked.add(seq, columns);
      // Events beaconed while buffered: settled at once (a few ranges; rare, pagehide then bfcache).
      if (beaconed.size > 0) columns.idCounters.forEach((c, i) => beaconed.delete(c) && unacked.settle([seq + i, seq + i + 1]));
      seq += columns.timestamps.length;
      // Bounded like the core's queue: the core drops its oldest too, and says so.
      if (unacked.size > cap) unacked.trim(cap);
    },

    sent(message) {
      if (message.t === 'recording') recording += message.events.length;
      else if (message.t === 'recording-clear') recording = 0;
    },

    discard,

    restart() {
      const replay = unacked.chunks();
      queued = received = recording = 0;
      // Renumbered for the next core: the armed request carries them still, under old numbers.
      covered = [];
      held = undefined;
      seq = unacked.size;
      return replay;
    },

    replayed(columns) {
      unacked.clear();
      unacked.add(0, columns);
      seq = columns.timestamps.length;
    },

    queueSize(buffered) {
      // Above maxQueueSize the core drops the oldest: what waits is never more than that.
      return Math.min(cap, Math.max(0, queued + (seq - received)) + buffered);
    },

    recordingQueued(waiting) {
      let count = recording;
      for (const message of waiting) if (message.t === 'recording') count += message.events.length;
      return count;
    },

    pending(buffer, timezone) {
      return { posted: unacked.chunks(), buffer, beaconed, timezone, covered, held };
    },

    forget(ranges, buffered) {
      // Only the pagehide beacon forgets, and it has sent the held body or its events by then.
      held = undefined;
      unacked.settle(ranges);
      for (const counter of buffered) beaconed.add(counter);
    },

    clear() {
      unacked.clear();
      beaconed.clear();
      covered = [];
      held = undefined;
    },
  };
}
