/**
 * The facade's side of the delivery core (DESIGN.md "The worker boundary"):
 *
 * - Capture starts at once into a main-thread buffer; what one task produces is posted as one
 *   message at the end of the task, in columns (`event-buffer.ts`: a tenth of the structured-clone
 *   cost of event objects), with `seq` = running count of events posted to this core.
 * - The core is started by the strategies in order; nothing captured before the handshake is lost.
 * - A worker that dies is restarted once with its unacknowledged events replayed; after that, the
 *   core runs in-process. The host app never sees any of it.
 * - Status posts keep a mirror for the synchronous `getQueueSize()`, and a bounded mirror of events
 *   not yet acknowledged by the server, which the unload path sends by beacon. The mirror is the
 *   posted columns themselves plus a set of the ids settled since (acknowledged, discarded or sent
 *   by beacon): remembering a post costs nothing per event, and the columns are compacted when
 *   everything in them is settled (after a burst drained) or when they outgrow `maxQueueSize`.
 */
import type { AnalyticsEvent, DiscardReason, EventColumns, FromWorkerMessage, QueueStats, ToWorkerMessage } from '../worker/types.js';
import type { DiscardInfo } from './config.js';
import type { DeliveryLink } from './delivery-link.js';
import { appendEvent, createColumns, filterColumns } from './event-buffer.js';
import { AnalyticsError } from './errors.js';
import type { Logger } from './logger.js';
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
  /** Buffers one event; the buffer is posted at the end of the task. */
  push(event: AnalyticsEvent): void;
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
  /**
   * Unacknowledged and buffered events, oldest first (for beacons), in columns: `eventsOf()` of
   * `event-buffer.ts` makes objects of them, in the lazily loaded beacon chunk.
   */
  pending(): EventColumns[];
  /** Forgets events sent by other means (a beacon). */
  forget(ids: readonly string[]): void;
  /** Lets the core send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** Options of {@link createDeliveryClient}. */
export interface DeliveryClientOptions {
  context: StartContext;
  strategies: readonly StartStrategy[];
  logger: Logger;
  onDiscard: ((info: DiscardInfo) => void) | undefined;
}

/** Creates the client and starts the core at once. */
export function createDeliveryClient(options: DeliveryClientOptions): DeliveryClient {
  const { context, logger } = options;
  const cap = context.config.maxQueueSize;
  let buffer = createColumns();
  let messages: Array<Exclude<ToWorkerMessage, { t: 'events' }>> = [];
  let scheduled = false;
  let link: DeliveryLink | undefined;
  let strategy: StartStrategy | null = null;
  let state: DeliveryMode = 'starting';
  let generation = 0;
  let restarts = 0;
  let closed = false;
  /** While a clear() waits for the core, posts are held so new events are not cleared with it. */
  let holds = 0;
  /** clear() calls in progress; a flush() waits for them, so it also sends what they held. */
  const clearing = new Set<Promise<void>>();
  /** Events posted to the current core. */
  let seq = 0;
  let mirror = { queueSize: 0, receivedSeq: 0 };
  /** The core's `recordingQueued`, plus the recorded events posted since its last status. */
  let recording = 0;
  /** Columns posted to the core (this one and, replayed, earlier ones) not yet compacted. */
  let posted: EventColumns[] = [];
  /** Events in `posted`. */
  let postedCount = 0;
  /** Ids in `posted` that need no beacon any more: acknowledged, discarded, or sent by beacon. */
  const settled = new Set<string>();
  /** Buffered events already sent by beacon: posted to the core, but not remembered for the next beacon. */
  const beaconed = new Set<string>();

  let starting = start(options.strategies, []);

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
        settle(message.acked);
        break;
      case 'discarded':
        settle(message.ids);
        notifyDiscard(message.ids, message.reason, message.detail);
        break;
      case 'log':
        logger[message.level](`core: ${message.message}`);
        break;
    }
  }

  /** Tries `strategies` in order; resolves the running link, or undefined when none started. */
  async function start(strategies: readonly StartStrategy[], replay: EventColumns[]): Promise<DeliveryLink | undefined> {
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
      const { startFirst, eventsOf } = await import('./worker-start.js');
      started = await startFirst(strategies, context, eventsOf(...replay), handlers, current, logger);
    } catch (error) {
      logger.warn('cannot load the delivery core; events are sent by beacon when the page is hidden', error);
    }
    if (!current()) {
      started?.link.close();
      return undefined;
    }
    if (started === undefined) {
      state = 'off';
      return undefined;
    }
    link = started.link;
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
    compact();
    // A copy: the start expands it after an await, and new posts may be remembered by then.
    const replay = [...posted];
    mirror = { queueSize: postedCount, receivedSeq: 0 };
    recording = 0;
    seq = 0;
    const next: StartStrategy[] = restarts === 1 && strategy !== null && strategy !== 'in-process' ? [strategy, 'in-process'] : ['in-process'];
    logger.debug(`${reason}; restarting (${next.join(' → ')}) with ${postedCount} unacknowledged event(s)`);
    starting = start(next, replay);
  }

  /** Keeps posted `columns` for a beacon until the core acknowledges them. */
  function remember(columns: EventColumns): void {
    if (beaconed.size > 0) for (const id of columns.ids) if (beaconed.delete(id)) settled.add(id);
    posted.push(columns);
    postedCount += columns.ids.length;
    if (postedCount - settled.size > cap) {
      // Bounded like the core's queue: the core drops its oldest too, and says so.
      compact();
      const over = postedCount - cap;
      if (over > 0) {
        posted = [filterColumns(posted, (_, n) => n >= over)];
        postedCount = cap;
      }
    }
  }

  function settle(ids: readonly string[]): void {
    if (ids.length === 0) return;
    for (const id of ids) settled.add(id);
    // Typically once a burst is fully acknowledged: the mirror empties, whatever its size.
    if (settled.size >= postedCount) compact();
  }

  /** Drops settled events from the mirror; afterwards `postedCount` is exact and `settled` empty. */
  function compact(): void {
    if (settled.size > 0) {
      let live = 0;
      for (const columns of posted) for (const id of columns.ids) if (!settled.has(id)) live++;
      if (live === 0) posted = [];
      else if (live < postedCount) posted = [filterColumns(posted, (id) => !settled.has(id))];
      postedCount = live;
      settled.clear();
    }
  }

  /** Posts the buffer as one message, then the other messages, to the running core. */
  function drain(): void {
    scheduled = false;
    const current = link;
    if (current === undefined || holds > 0) return;
    if (buffer.ids.length > 0) {
      const columns = buffer;
      buffer = createColumns();
      try {
        current.post({ t: 'event-columns', seq: seq + columns.ids.length, columns });
        seq += columns.ids.length;
        remember(columns);
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
    if (columns.ids.length === 1) return columns.ids;
    const half = columns.ids.length >> 1;
    const dropped: string[] = [];
    for (const part of [filterColumns([columns], (_, i) => i < half), filterColumns([columns], (_, i) => i >= half)]) {
      try {
        current.post({ t: 'event-columns', seq: seq + part.ids.length, columns: part });
        seq += part.ids.length;
        remember(part);
      } catch {
        dropped.push(...postInParts(current, part));
      }
    }
    return dropped;
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
    compact();
    return new AnalyticsError(closed ? 'SHUT_DOWN' : 'WORKER_UNAVAILABLE', message, { queued: buffer.ids.length + postedCount });
  }

  return {
    push(event) {
      if (closed) return;
      appendEvent(buffer, event);
      if (buffer.ids.length > cap) {
        // Only while no core runs can the buffer grow; keep it bounded like the queue.
        const over = buffer.ids.length - cap;
        const dropped = buffer.ids.slice(0, over);
        buffer = filterColumns([buffer], (_, n) => n >= over);
        notifyDiscard(
          dropped,
          'overflow',
          `the queue holds at most ${cap} events (maxQueueSize); the oldest were dropped`,
        );
      }
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
      const dropped = buffer.ids;
      buffer = createColumns();
      posted = [];
      postedCount = 0;
      settled.clear();
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
      return Math.max(0, mirror.queueSize + (seq - mirror.receivedSeq)) + buffer.ids.length;
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
          ? { queueSize: buffer.ids.length, receivedSeq: 0, recordingQueued: 0, sent: 0, discarded: 0, mode: 'in-process' }
          : await current.stats();
      compact();
      return { ...base, mode: current === undefined ? 'off' : base.mode, strategy, restarts, unacknowledged: postedCount };
    },

    pending() {
      compact();
      if (buffer.ids.length === 0) return [...posted];
      return [...posted, beaconed.size === 0 ? buffer : filterColumns([buffer], (id) => !beaconed.has(id))];
    },

    forget(ids) {
      const buffered = buffer.ids.length === 0 ? undefined : new Set(buffer.ids);
      const sent: string[] = [];
      for (const id of ids) {
        if (buffered?.has(id) === true) beaconed.add(id);
        else sent.push(id);
      }
      settle(sent);
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
