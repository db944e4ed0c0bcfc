/**
 * The facade's side of the delivery core (docs/architecture.md, "The worker boundary"):
 *
 * - Capture starts at once into a main-thread buffer; what one task produces is posted as one
 *   message at the end of the task, in columns (`event-buffer.ts`: far cheaper to structured-clone
 *   than event objects; figures in bench/RESULTS.md, "Client main thread"), with `seq` = running
 *   count of events posted to this core.
 * - The core is started by the strategies in order; nothing captured before the handshake is lost.
 * - A worker that dies is restarted once with its unacknowledged events replayed; after that, the
 *   core runs in-process. The host app never sees any of it.
 * - Status posts keep a mirror for the synchronous `getQueueSize()`, and a bounded mirror of events
 *   not yet acknowledged by the server, which the unload path sends by beacon (`ack-mirror.ts`):
 *   the posted columns themselves, numbered by `seq`, settled by the core's ranges of numbers, so
 *   neither remembering a post nor settling an ack costs the main thread anything per event.
 */
import type { DiscardReason, FromWorkerMessage, QueueStats, ToWorkerMessage } from '../../worker/types.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import { type MirrorChunk, createAckMirror } from './ack-mirror.js';
import type { DiscardInfo } from '../config.js';
import type { DeliveryLink } from './delivery-link.js';
import { appendEvent, createColumns, idsOf, sliceColumns } from './event-buffer.js';
import { AnalyticsError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { StartStrategy } from './transport-options.js';
import type { StartContext } from './worker-start.js';

/** How the core runs now: `starting` until a strategy succeeded, `off` when none did. */
export type DeliveryMode = 'starting' | 'worker' | 'in-process' | 'off';

/** QueueStats of the running core plus how it was started. */
export interface DeliveryStats extends Omit<QueueStats, 'mode'> {
  /** How the core runs; `off` when none could start (and outside a browser). */
  mode: DeliveryMode;
  /** The strategy that started the running core. */
  strategy: StartStrategy | null;
  /** Restarts after a worker died. */
  restarts: number;
  /** Events not yet acknowledged that the facade remembers for a beacon. */
  unacknowledged: number;
}

/** The delivery side of the facade. */
export interface DeliveryClient {
  /**
   * Buffers one event, its fields as {@link appendEvent} takes them (no event object is made on
   * the hot path); the buffer is posted at the end of the task.
   */
  push(...event: EventFields): void;
  /** Posts a non-event data-plane message after the buffered events (dropped while no core runs). */
  send(message: Exclude<ToWorkerMessage, { t: 'events' }>): void;
  /** Resolves when everything queued now is accepted; rejects with an AnalyticsError otherwise. */
  flush(): Promise<void>;
  /** Discards the buffer and the core's queue. */
  clear(): Promise<void>;
  /** Events waiting: the core's queue, posts not yet received, and the buffer. */
  queueSize(): number;
  /**
   * Recorded events waiting for upload: the core's count from its last status, plus those posted
   * or waiting to be posted since, less what a `recording-clear` discarded (the next status
   * replaces the estimate with the core's count).
   */
  recordingQueued(): number;
  mode(): DeliveryMode;
  /** Waits for the start, then asks the core. */
  stats(): Promise<DeliveryStats>;
  /** Settles once the first start of the core is over, whether a core started or none could. */
  started(): Promise<void>;
  /**
   * Unacknowledged and buffered events (for beacons), as held: the lazily loaded beacon chunk
   * reads them out (`beacon.ts`), so the facade's bundle does not carry that code.
   */
  pending(): PendingEvents;
  /**
   * Forgets events sent by other means (a beacon): posted ones by their numbers (`ranges`, flat
   * `[from, to, …]`), buffered ones by id counter (they are still posted to the core, not beaconed
   * again).
   */
  forget(ranges: readonly number[], buffered: readonly number[]): void;
  /**
   * Runs `hook` at the end of each task that buffered events or messages, before they are posted
   * (`undefined` removes it). The unload path sets it from `pagehide` to `pageshow`: an event made
   * after its beacon, by a `pagehide` listener that runs after the client's, goes by beacon too.
   * The hook must not throw.
   */
  atTaskEnd(hook: (() => void) | undefined): void;
  /** Lets the core send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** The fields of one event, in {@link appendEvent}'s order after its columns. */
export type EventFields = Parameters<typeof appendEvent> extends [EventColumns, ...infer Rest] ? Rest : never;

/** What {@link DeliveryClient.pending} returns. */
export interface PendingEvents {
  /** Posted events and which of them are settled, oldest first. */
  posted: readonly MirrorChunk[];
  /** Events not posted yet. */
  buffer: EventColumns;
  /** Id counters of buffered events already sent by beacon. */
  beaconed: ReadonlySet<number>;
  /** The time zone to add to the events (the core's; undefined before one started). */
  timezone: string | undefined;
}

/** Options of {@link createDeliveryClient}. */
export interface DeliveryClientOptions {
  context: StartContext;
  strategies: readonly StartStrategy[];
  logger: Logger;
  onDiscard: ((info: DiscardInfo) => void) | undefined;
  /** The random end of the page's event ids (`uuid-v7.ts`), carried by every post's columns. */
  idTail: string;
}

/** Creates the client and starts the core at once. */
export function createDeliveryClient(options: DeliveryClientOptions): DeliveryClient {
  const { context, logger } = options;
  const cap = context.config.maxQueueSize;
  const { idTail } = options;
  let buffer = createColumns(idTail);
  let messages: Array<Exclude<ToWorkerMessage, { t: 'events' }>> = [];
  let scheduled = false;
  let link: DeliveryLink | undefined;
  let strategy: StartStrategy | null = null;
  /** The device's time zone as a core read it (the facade reads none: page-context.ts). */
  let timezone: string | undefined;
  let state: DeliveryMode = 'starting';
  let generation = 0;
  let restarts = 0;
  let closed = false;
  /** While a clear() waits for the core, posts are held so new events are not cleared with it. */
  let holds = 0;
  /** clear() calls in progress; a flush() waits for them, so it also sends what they held. */
  const clearing = new Set<Promise<void>>();
  /** Events posted to the current core (a replay included): the next post's first number. */
  let seq = 0;
  let mirror = { queueSize: 0, receivedSeq: 0 };
  /** The core's `recordingQueued`, plus the recorded events posted since its last status. */
  let recording = 0;
  /** Events posted to the current core that need a beacon still (not acknowledged, discarded or beaconed). */
  const unacked = createAckMirror();
  /** Buffered events already sent by beacon: posted to the core, but not remembered for the next beacon. */
  const beaconed = new Set<number>();
  let taskEnd: (() => void) | undefined;

  let starting = start(options.strategies, []);
  const firstStart = starting.then(
    () => undefined,
    () => undefined,
  );

  function notifyDiscard(ids: string[], reason: DiscardReason, detail: string): void {
    if (ids.length === 0 || options.onDiscard === undefined) return;
    try {
      options.onDiscard({ ids, reason, detail });
    } catch (error) {
      logger.error('onDiscard threw', error);
    }
  }

  function onMessage(gen: number, message: FromWorkerMessage): void {
    if (gen !== generation) return; // A core that was replaced.
    switch (message.t) {
      case 'status':
        mirror = { queueSize: message.queueSize, receivedSeq: message.receivedSeq };
        recording = message.recordingQueued;
        unacked.settle(message.acked);
        break;
      case 'discarded':
        unacked.settle(message.ranges);
        notifyDiscard(message.ids, message.reason, message.detail);
        break;
      case 'log':
        logger[message.level](`core: ${message.message}`);
        break;
    }
  }

  /** Tries `strategies` in order; resolves the running link, or undefined when none started. */
  async function start(strategies: readonly StartStrategy[], replay: readonly MirrorChunk[]): Promise<DeliveryLink | undefined> {
    const gen = generation;
    const current = (): boolean => !closed && gen === generation;
    const handlers = {
      onMessage: (message: FromWorkerMessage) => onMessage(gen, message),
      onDeath: (reason: string) => onDeath(gen, reason),
    };
    let started: Awaited<ReturnType<typeof import('./worker-start.js').startFirst>>;
    try {
      // The start machinery (comlink, worker and in-process links) is its own chunk: the facade's
      // bundle stays small, and capture does not wait for it (events are buffered meanwhile).
      const { startFirst, liveColumns } = await import('./worker-start.js');
      let columns: EventColumns | null = null;
      if (replay.length > 0 && current()) {
        // The next core numbers the replay 0 … n − 1 and the next post after it (worker/types.ts).
        // Nothing was posted since the death (no link), so the mirror is renumbered as a whole.
        columns = liveColumns(replay);
        unacked.clear();
        unacked.add(0, columns);
        seq = columns.timestamps.length;
      }
      started = await startFirst(strategies, context, columns, handlers, current, logger);
    } catch (error) {
      logger.warn('cannot load the delivery core; events are sent by beacon when the page is hidden', error);
    }
    if (!current()) {
      started?.link.close();
      return undefined;
    }
    if (started === undefined) {
      state = 'off';
      // No core will take the buffer and drop its oldest: keep it within maxQueueSize here.
      trimBuffer();
      return undefined;
    }
    link = started.link;
    timezone = link.timezone ?? timezone;
    strategy = started.strategy;
    state = link.mode;
    drain();
    return link;
  }

  function onDeath(gen: number, reason: string): void {
    if (gen !== generation || closed) return;
    generation++;
    link?.close();
    link = undefined;
    restarts++;
    state = 'starting';
    // The unacknowledged events count as posted to the next core, not yet received (start() renumbers them).
    const replay = unacked.chunks();
    mirror = { queueSize: 0, receivedSeq: 0 };
    recording = 0;
    seq = unacked.size;
    const next: StartStrategy[] = restarts === 1 && strategy !== null && strategy !== 'in-process' ? [strategy, 'in-process'] : ['in-process'];
    logger.debug(`${reason}; restarting (${next.join(' → ')}) with ${seq} unacknowledged event(s)`);
    starting = start(next, replay);
  }

  /** Posts `columns` as the next events of the current core and keeps them for a beacon until settled. */
  function post(current: DeliveryLink, columns: EventColumns): void {
    current.post({ t: 'event-columns', seq: seq + columns.timestamps.length, columns });
    unacked.add(seq, columns);
    // Events beaconed while buffered: settled at once (a few ranges; rare, pagehide then bfcache).
    if (beaconed.size > 0) columns.idCounters.forEach((c, i) => beaconed.delete(c) && unacked.settle([seq + i, seq + i + 1]));
    seq += columns.timestamps.length;
    // Bounded like the core's queue: the core drops its oldest too, and says so.
    if (unacked.size > cap) unacked.trim(cap);
  }

  /** Posts the buffer as one message, then the other messages, to the running core. */
  function drain(): void {
    scheduled = false;
    taskEnd?.();
    const current = link;
    if (current === undefined || holds > 0) return;
    if (buffer.timestamps.length > 0) {
      const columns = buffer;
      buffer = createColumns(idTail);
      try {
        post(current, columns);
      } catch (error) {
        logger.error('posting events failed; retrying in parts', error);
        notifyDiscard(postInParts(current, columns), 'rejected', 'the event could not be posted to the delivery core');
      }
    }
    if (messages.length > 0) {
      const queued = messages;
      messages = [];
      for (const message of queued) {
        try {
          current.post(message);
          if (message.t === 'recording') recording += message.events.length;
          else if (message.t === 'recording-clear') recording = 0;
        } catch (error) {
          logger.error(`cannot post ${message.t}`, error);
        }
      }
    }
  }

  /**
   * A post that threw (DataCloneError): posts the halves, and their halves, down to the events that
   * cannot be posted; returns those ids. O(n log n) even for one bad event in a large burst.
   */
  function postInParts(current: DeliveryLink, columns: EventColumns): string[] {
    if (columns.timestamps.length === 1) return idsOf(columns);
    const half = columns.timestamps.length >> 1;
    const dropped: string[] = [];
    for (const part of [sliceColumns(columns, 0, half), sliceColumns(columns, half, columns.timestamps.length)]) {
      try {
        post(current, part);
      } catch {
        dropped.push(...postInParts(current, part));
      }
    }
    return dropped;
  }

  /** Drops the oldest buffered events above maxQueueSize, as the core drops its own. */
  function trimBuffer(): void {
    const over = buffer.timestamps.length - cap;
    if (over <= 0) return;
    const dropped = idsOf(buffer, 0, over);
    buffer = sliceColumns(buffer, over, buffer.timestamps.length);
    notifyDiscard(dropped, 'overflow', `the queue holds at most ${cap} events (maxQueueSize); the oldest were dropped`);
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(drain);
  }

  /** The running link, after any start or restart in progress. */
  async function ready(): Promise<DeliveryLink | undefined> {
    while (link === undefined && !closed) {
      const pending = starting;
      const started = await pending;
      if (started !== undefined || pending === starting) return started ?? link;
    }
    return link;
  }

  function unavailable(message: string): AnalyticsError {
    return new AnalyticsError(closed ? 'SHUT_DOWN' : 'WORKER_UNAVAILABLE', message, { queued: buffer.timestamps.length + unacked.size });
  }

  return {
    // Parameters spelled out: a rest parameter would allocate an array per event.
    push(idMs, idCounter, timestamp, type, name, properties, userId, anonymousId, sessionId, context, previousId) {
      if (closed) return;
      appendEvent(buffer, idMs, idCounter, timestamp, type, name, properties, userId, anonymousId, sessionId, context, previousId);
      // A running core gets the whole task's buffer in one post and drops the oldest above
      // maxQueueSize itself (reported back as discards), so a burst costs each call the same below
      // and above the limit. Only while no core takes posts does the buffer outlive its task: then
      // it is trimmed to maxQueueSize once it doubles, a copy per maxQueueSize events, not per call.
      if (buffer.timestamps.length > 2 * cap && (link === undefined || holds > 0)) trimBuffer();
      schedule();
    },

    send(message) {
      if (closed) return;
      // One page-hidden pending is enough; before the core runs it is posted right after start.
      if (message.t === 'page-hidden' && messages.some((m) => m.t === 'page-hidden')) return schedule();
      messages.push(message);
      if (messages.length > cap) messages.splice(0, messages.length - cap);
      schedule();
    },

    async flush() {
      for (let attempt = 0; ; attempt++) {
        if (clearing.size > 0) await Promise.allSettled([...clearing]);
        const current = await ready();
        if (current === undefined) throw unavailable('flush(): the delivery core is not running; the events are kept');
        drain();
        let result;
        try {
          result = await current.flush(seq);
        } catch (error) {
          // The core died during the flush: its events were replayed to the next one; flush there.
          if (attempt < 2 && !closed) continue;
          throw new AnalyticsError('WORKER_UNAVAILABLE', 'flush(): the delivery core stopped; the events are kept', {
            cause: error,
          });
        }
        if (result.ok) return;
        throw new AnalyticsError(result.code, `flush() failed: ${result.message}`, {
          status: result.status,
          queued: result.queued,
        });
      }
    },

    clear() {
      const dropped = idsOf(buffer);
      buffer = createColumns(idTail);
      unacked.clear();
      beaconed.clear();
      notifyDiscard(dropped, 'cleared', 'clearQueue()');
      holds++;
      const done = (async () => {
        try {
          const current = await ready();
          await current?.clear();
        } finally {
          holds--;
          drain();
        }
      })();
      clearing.add(done);
      void done.finally(() => clearing.delete(done)).catch(() => undefined);
      return done;
    },

    queueSize() {
      // Above maxQueueSize the core drops the oldest: what waits is never more than that.
      return Math.min(cap, Math.max(0, mirror.queueSize + (seq - mirror.receivedSeq)) + buffer.timestamps.length);
    },

    recordingQueued() {
      let count = recording;
      for (const message of messages) if (message.t === 'recording') count += message.events.length;
      return count;
    },

    mode: () => state,

    async stats() {
      const current = await ready();
      const base: QueueStats =
        current === undefined
          ? { queueSize: buffer.timestamps.length, receivedSeq: 0, recordingQueued: 0, sent: 0, discarded: 0, mode: 'in-process' }
          : await current.stats();
      return { ...base, mode: current === undefined ? 'off' : base.mode, strategy, restarts, unacknowledged: unacked.size };
    },

    started: () => firstStart,

    pending() {
      // A beacon carries at most what the queue would hold.
      if (link === undefined) trimBuffer();
      return { posted: unacked.chunks(), buffer, beaconed, timezone };
    },

    forget(ranges, buffered) {
      unacked.settle(ranges);
      for (const counter of buffered) beaconed.add(counter);
    },

    atTaskEnd(hook) {
      taskEnd = hook;
    },

    async shutdown(timeoutMs) {
      if (closed) return;
      drain();
      const current = link;
      closed = true;
      generation++;
      link = undefined;
      state = 'off';
      if (current !== undefined) await current.shutdown(timeoutMs).catch(() => undefined);
    },
  };
}
