/**
 * The delivery client: the facade's side of the delivery core (docs/architecture.md, "The worker
 * boundary"). The open chunk of the log of unacknowledged events (`unacked-log.ts`) is the task's
 * buffer, posted at the end of the task as one message, in columns (far cheaper to structured-clone
 * than event objects: bench/RESULTS.md, "Client main thread"). The core answers in the events' own
 * numbers, which settle the log: the queue size is counted from it, and the pagehide beacon and a
 * restart's replay read it. The core is started and restarted by the connection
 * (`core-connection.ts`), a chunk loaded in the task after the client's creation.
 *
 * One closure, so that draining, trimming and settling stay private: every member one module
 * exposes to another costs the facade's bundle bytes.
 */
import type { DroppedIds, FromWorkerMessage, QueueStats, ToWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { DiscardInfo } from '../config.js';
import { AnalyticsError } from '../errors.js';
import { nextTask } from '../next-task.js';
import type { CoreConnection, CoreHooks, DeliveryMode } from './core-connection.js';
import type { DeliveryLink } from './delivery-link.js';
import type { DeliveryClientOptions } from './delivery-options.js';
import type { StartStrategy } from './transport-options.js';
import { type PendingEvents, appendEvent, createColumns, createUnackedLog, idOf } from './unacked-log.js';

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

/** A data-plane message other than events: recorder output, page-hidden. */
export type DataMessage = Exclude<ToWorkerMessage, { t: 'event-columns' }>;

/** The delivery side of the facade. */
export interface DeliveryClient {
  /**
   * Buffers one event, its fields as {@link appendEvent} takes them (no event object is made on
   * the hot path); the buffer is posted at the end of the task.
   */
  push(...event: EventFields): void;
  /** Posts a non-event data-plane message after the buffered events (dropped while no core runs). */
  send(message: DataMessage): void;
  /** Resolves when everything queued now is accepted; rejects with an AnalyticsError otherwise. */
  flush(): Promise<void>;
  /** Discards the buffer and the core's queue. */
  clear(): Promise<void>;
  /**
   * Events waiting: the unacknowledged log, the buffer included, and what the core restored from
   * its journal; at most maxQueueSize.
   */
  queueSize(): number;
  /** Recorded events waiting for upload: the core's count at its last status, plus those posted or buffered since. */
  recordingQueued(): number;
  mode(): DeliveryMode;
  /** Waits for the start, then asks the core. */
  stats(): Promise<DeliveryStats>;
  /** Settles once the first start of the core is over, whether a core started or none could. */
  started(): Promise<void>;
  /** Unacknowledged events as held, read out by the lazily loaded beacon (`beacon.ts`), not by the facade's bundle. */
  pending(): PendingEvents;
  /**
   * Forgets events sent by other means (a beacon), by their numbers (`ranges`, flat `[from, to, …]`);
   * those not posted yet are still posted to the core, but not beaconed again.
   */
  forget(ranges: readonly number[]): void;
  /**
   * Runs `hook` at the end of each task that buffered events or messages, before they are posted
   * (`undefined` removes it). The unload path sets it from `pagehide` to `pageshow`: an event made
   * after its beacon, by a `pagehide` listener that runs after the client's, goes by beacon too.
   * The hook must not throw.
   */
  atTaskEnd(hook: (() => void) | undefined): void;
  /** Starts the core of a client created held, which then sends what it holds; does nothing otherwise. */
  release(): void;
  /** Lets the core send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** The fields of one event, in {@link appendEvent}'s order after its columns. */
export type EventFields = Parameters<typeof appendEvent> extends [EventColumns, ...infer Rest] ? Rest : never;

/**
 * Creates the client, and loads the connection that starts the core in the next task: its
 * synchronous part (the page's first dynamic import, `new Worker`) costs the main thread
 * milliseconds that do not belong in the task that called createAnalytics(), where the app is
 * starting too (docs/decisions.md, "Start-up").
 */
export function createDeliveryClient(options: DeliveryClientOptions): DeliveryClient {
  const { logger, onDiscard, idTail, off = false } = options;
  const cap = options.config.maxQueueSize;
  const log = createUnackedLog(idTail);
  let messages: DataMessage[] = [];
  let scheduled = false;
  /** Shut down, or outside a browser (`off`): nothing is taken any more. */
  let closed = off;
  let offNoticed = false;
  /** Consent pending: no core is started until `release()`. */
  let waiting = options.held === true;
  /** The running core: undefined while one starts, when none could, and after shutdown. */
  let link: DeliveryLink | undefined;
  let connection: CoreConnection | undefined;
  /** The connection's chunk, once loaded. */
  let chunk: typeof import('./core-connection.js') | undefined;
  /** The connection's chunk could not be loaded: no core will start. */
  let loadFailed = false;
  /**
   * clear() calls waiting for the core: posts are held meanwhile, so that new events are not
   * cleared with it; a flush() waits for them, so it also sends what they held.
   */
  const clearing = new Set<Promise<void>>();
  let taskEnd: (() => void) | undefined;
  /** The number of the last event the current core was given (−1: none), for `flush(upTo)`. */
  let lastPosted = -1;
  /** The core's `recordingQueued`, plus the recorded events posted since its last status. */
  let recording = 0;
  /** Events the core restored from its journal, which the log does not hold (its last status). */
  let restored = 0;
  /** Numbers of the events the armed deferred request carries (`deferred-request.ts`), as ranges. */
  let covered: readonly number[] = [];
  /** The body of the covered events, where the page holds it for the pagehide beacon (no `fetchLater`). */
  let held: PendingEvents['held'];

  const hooks: CoreHooks = {
    receive,
    restarting(read) {
      link = undefined;
      recording = restored = 0;
      // The next core builds its own body; what the dead one armed may be aborted (core-connection.ts).
      covered = [];
      held = undefined;
      const replay = read(log.chunks().slice(0, -1));
      // The last number the next core is given: a flush waits for no event it will never get.
      lastPosted = replay.idCounters[replay.idCounters.length - 1] ?? -1;
      return lastPosted < 0 ? null : replay;
    },
    // A core that runs takes what waited for it; when none could start, none will take the buffer:
    // it is kept within maxQueueSize here.
    started(running) {
      link = running;
      if (running === undefined) trim();
      else drain();
    },
  };
  // Held (consent pending): the chunk loads, but no core starts until `release()`.
  const connect = (): CoreConnection | undefined =>
    chunk === undefined || waiting || closed ? connection : (connection ??= chunk.connect(options, hooks));
  const connecting: Promise<CoreConnection | undefined> = off
    ? Promise.resolve(undefined)
    : nextTask((resolve) => options.timers.setTimeout(resolve, 0))
        .then(() => import('./core-connection.js'))
        .then(
          (module) => ((chunk = module), connect()),
          (error: unknown) => {
            logger.warn('cannot load the delivery core; events are sent by beacon when the page is hidden', error);
            loadFailed = true;
            trim();
            return undefined;
          },
        );
  // A held client's first start counts as over at once: work waiting for it does not wait for consent.
  const firstStart = waiting ? Promise.resolve() : connecting.then((c) => c?.started());
  const ready = (): Promise<DeliveryLink | undefined> => connection?.ready() ?? connecting.then((c) => c?.ready());

  function receive(message: FromWorkerMessage): void {
    switch (message.t) {
      case 'status':
        recording = message.recordingQueued;
        restored = message.restored;
        log.settle(message.acked);
        break;
      case 'discarded':
        log.settle(message.ranges);
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
  }

  /** Tells `onDiscard` of dropped events (none: nothing); an `onDiscard` that throws is logged. */
  function discard(ids: string[], reason: DiscardInfo['reason'], detail: string): void {
    if (ids.length === 0 || onDiscard === undefined) return;
    try {
      onDiscard({ ids, reason, detail });
    } catch (error) {
      logger.error('onDiscard threw', error);
    }
  }

  /**
   * Posts events to the current core, `dropped` the task's oldest it is told of only by number.
   * Events that cannot be posted (structured clone refuses one of their properties) are discarded.
   */
  function post(current: DeliveryLink, columns: EventColumns, dropped?: DroppedIds): void {
    const failed = current.post({ t: 'event-columns', columns, dropped });
    const numbers = dropped?.idCounters ?? columns.idCounters;
    for (const i of failed) log.settle([numbers[i]!, numbers[i]! + 1]);
    if (failed.length > 0) {
      logger.error('events could not be posted to the delivery core');
      discard(failed.map((i) => idOf(columns, i)), 'rejected', 'the event could not be posted to the delivery core');
    }
    // The last event the core has: what `flush(upTo)` waits for.
    for (let i = numbers.length - 1; i >= 0; i--) if (!failed.includes(i)) return void (lastPosted = Math.max(lastPosted, numbers[i]!));
  }

  function drain(): void {
    scheduled = false;
    taskEnd?.();
    const current = link;
    if (current === undefined || clearing.size > 0) return;
    const over = log.open.columns.timestamps.length - cap;
    // The core would drop this task's oldest at once: they are not copied to it, only their ids'
    // numbers, which it reports as overflow (its own oldest it drops as before).
    if (over > 0) post(current, createColumns(idTail), log.drop(over));
    const { columns } = log.open;
    if (columns.timestamps.length > 0) {
      log.seal();
      post(current, columns);
      // Bounded like the core's queue: the core drops its oldest too, and says so.
      if (log.size > cap) log.trim(cap, false);
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

  function mode(): DeliveryMode {
    // Held stays held when the connection could not load: nothing may leave before consent.
    return connection?.mode() ?? (closed ? 'off' : waiting ? 'held' : loadFailed ? 'off' : 'starting');
  }

  function trim(): void {
    discard(log.trim(cap, true), 'overflow', `the queue holds at most ${cap} events (maxQueueSize); the oldest were dropped`);
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(drain);
  }

  return {
    // Parameters spelled out: a rest parameter would allocate an array per event.
    push(idMs, idCounter, timestamp, type, name, properties, userId, anonymousId, sessionId, context, previousId) {
      if (closed) {
        if (off && !offNoticed) logger.debug('not in a browser: events are not sent');
        offNoticed = true;
        return;
      }
      const { columns } = log.open;
      appendEvent(columns, idMs, idCounter, timestamp, type, name, properties, userId, anonymousId, sessionId, context, previousId);
      // A running core gets the task's buffer in one post at its end, its newest maxQueueSize
      // events at most, and reports the rest as discards, so a burst costs each call the same below
      // and above the limit. Only while no core takes posts does the buffer outlive its task: then
      // it is trimmed to maxQueueSize once it doubles, a copy per maxQueueSize events, not per call.
      if (columns.timestamps.length > 2 * cap && (link === undefined || clearing.size > 0)) trim();
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
      // Outside a browser nothing is kept, so nothing waits.
      if (off) return;
      for (let attempt = 0; ; attempt++) {
        if (clearing.size > 0) await Promise.allSettled([...clearing]);
        const current = await ready();
        if (current === undefined) {
          throw new AnalyticsError(closed ? 'SHUT_DOWN' : 'WORKER_UNAVAILABLE', 'flush(): the delivery core is not running; the events are kept', {
            queued: log.size,
          });
        }
        drain();
        let result;
        try {
          result = await current.flush(lastPosted);
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
      const { columns } = log.open;
      const dropped = columns.idCounters.map((_, i) => idOf(columns, i));
      log.clear();
      covered = [];
      held = undefined;
      discard(dropped, 'cleared', 'clearQueue()');
      const done = ready()
        .then((current) => current?.clear())
        .finally(() => {
          clearing.delete(done);
          drain();
        });
      clearing.add(done);
      return done;
    },

    atTaskEnd(hook) {
      taskEnd = hook;
    },

    // Above maxQueueSize the core drops the oldest: what waits is never more than that.
    queueSize: () => Math.min(cap, log.size + restored),

    recordingQueued() {
      let count = recording;
      for (const message of messages) if (message.t === 'recording') count += message.events.length;
      return count;
    },

    pending() {
      // A beacon carries at most what the queue would hold.
      if (link === undefined) trim();
      return { chunks: log.chunks(), timezone: connection?.timezone(), covered, held };
    },

    forget(ranges) {
      // Only the pagehide beacon forgets, and it has sent the held body or its events by then.
      held = undefined;
      log.settle(ranges);
    },

    async stats() {
      const current = await ready();
      // While no core runs (held, none could start, or shut down), what waits is the log.
      const base = current === undefined ? { queueSize: log.size, receivedSeq: 0, recordingQueued: 0, sent: 0, discarded: 0, mode: mode() } : await current.stats();
      return { ...base, strategy: connection?.strategy() ?? null, restarts: connection?.restarts() ?? 0, unacknowledged: log.size };
    },

    mode,
    started: () => firstStart,

    release() {
      if (!waiting || closed) return;
      waiting = false;
      connect();
    },

    async shutdown(timeoutMs) {
      // What this task buffered goes to the running core first, which then has `timeoutMs` to send it.
      if (!closed) {
        drain();
        closed = true;
      }
      link = undefined;
      await connection?.shutdown(timeoutMs);
    },
  };
}
