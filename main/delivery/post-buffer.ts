/**
 * The main-thread buffer between capture and the delivery core (docs/architecture.md, "On the main
 * thread", "The worker boundary"): what one task produces is posted as one message at the end of
 * the task, in columns (`event-buffer.ts`: far cheaper to structured-clone than event objects;
 * figures in bench/RESULTS.md, "Client main thread"), then the task's other data-plane messages.
 * While no core takes posts the buffer outlives its task and is kept near maxQueueSize; while a
 * clear() waits for the core, posts are held so that new events are not cleared with it.
 *
 * The buffer is the front of the client: every call of {@link DeliveryClient} lands here. Questions
 * about what waits are answered as the mirror's estimate of the core (`core-mirror.ts`) plus what the
 * buffer still holds; the rest is handed to the supervisor (`core-supervisor.ts`) or the mirror.
 * Built as one closure, so that draining, trimming and closing stay private to it: every member
 * one module exposes to another costs the facade's bundle bytes.
 */
import type { DroppedIds, QueueStats, ToWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { CoreMirror } from './core-mirror.js';
import type { CoreSupervisor } from './core-supervisor.js';
import type { DeliveryClient, DeliveryMode } from './delivery-client.js';
import type { DeliveryLink } from './delivery-link.js';
import { appendEvent, createColumns, idsOf, sliceColumns } from './event-buffer.js';
import { AnalyticsError } from '../errors.js';
import type { Logger } from '../logger.js';

/** A data-plane message other than events: recorder output, page-hidden. */
export type DataMessage = Exclude<ToWorkerMessage, { t: 'events' }>;

/**
 * Creates the post buffer, which is the delivery client itself, for a core that keeps at most `cap`
 * events (maxQueueSize), and starts the core.
 * @param idTail the random end of the page's event ids (`uuid-v7.ts`), carried by every post's columns.
 * @param mirror numbers the posts and keeps them until settled; told of what is dropped here.
 * @param startCore starts the supervisor, which calls `onStarted` back when a start is over.
 */
export function createPostBuffer(
  idTail: string,
  cap: number,
  logger: Logger,
  mirror: CoreMirror,
  startCore: (onStarted: (running: boolean) => void) => CoreSupervisor,
): DeliveryClient {
  let buffer = createColumns(idTail);
  let messages: DataMessage[] = [];
  let scheduled = false;
  let closed = false;
  /** While a clear() waits for the core, posts are held so new events are not cleared with it. */
  let holds = 0;
  /** clear() calls in progress; a flush() waits for them, so it also sends what they held. */
  const clearing = new Set<Promise<void>>();
  let taskEnd: (() => void) | undefined;
  // A core that runs takes what waited for it; when none could start, none will take the buffer and
  // drop its oldest, so it is kept within maxQueueSize here.
  const core = startCore((running) => (running ? drain() : trim()));

  /** Posts `columns` as the next events of the current core; the mirror keeps them for a beacon until settled. */
  function post(current: DeliveryLink, columns: EventColumns, dropped?: DroppedIds): void {
    const skipped = dropped?.idMs.length ?? 0;
    current.post({ t: 'event-columns', seq: mirror.seq + skipped + columns.timestamps.length, columns, dropped });
    mirror.posted(columns, skipped);
  }

  function drain(): void {
    scheduled = false;
    taskEnd?.();
    const current = core.link();
    if (current === undefined || holds > 0) return;
    if (buffer.timestamps.length > 0) {
      let columns = buffer;
      buffer = createColumns(idTail);
      const over = columns.timestamps.length - cap;
      if (over > 0) {
        // The core would drop this task's oldest at once: they are not copied to it, only their ids'
        // numbers, which it reports as overflow (its own oldest it drops as before).
        post(current, createColumns(idTail), { idMs: columns.idMs.slice(0, over), idCounters: columns.idCounters.slice(0, over) });
        columns = sliceColumns(columns, over, columns.timestamps.length);
      }
      try {
        post(current, columns);
      } catch (error) {
        logger.error('posting events failed; retrying in parts', error);
        mirror.discard(postInParts(current, columns), 'rejected', 'the event could not be posted to the delivery core');
      }
    }
    if (messages.length > 0) {
      const queued = messages;
      messages = [];
      for (const message of queued) {
        try {
          current.post(message);
          mirror.sent(message);
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

  function trim(): void {
    const over = buffer.timestamps.length - cap;
    if (over <= 0) return;
    const dropped = idsOf(buffer, 0, over);
    buffer = sliceColumns(buffer, over, buffer.timestamps.length);
    mirror.discard(dropped, 'overflow', `the queue holds at most ${cap} events (maxQueueSize); the oldest were dropped`);
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(drain);
  }

  return {
    // Parameters spelled out: a rest parameter would allocate an array per event.
    push(idMs, idCounter, timestamp, type, name, properties, userId, anonymousId, sessionId, context, previousId) {
      if (closed) return;
      appendEvent(buffer, idMs, idCounter, timestamp, type, name, properties, userId, anonymousId, sessionId, context, previousId);
      // A running core gets the task's buffer in one post at its end, its newest maxQueueSize
      // events at most, and reports the rest as discards, so a burst costs each call the same below
      // and above the limit. Only while no core takes posts does the buffer outlive its task: then
      // it is trimmed to maxQueueSize once it doubles, a copy per maxQueueSize events, not per call.
      if (buffer.timestamps.length > 2 * cap && (core.link() === undefined || holds > 0)) trim();
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
        const current = await core.ready();
        if (current === undefined) {
          throw new AnalyticsError(closed ? 'SHUT_DOWN' : 'WORKER_UNAVAILABLE', 'flush(): the delivery core is not running; the events are kept', {
            queued: buffer.timestamps.length + mirror.size,
          });
        }
        drain();
        let result;
        try {
          result = await current.flush(mirror.seq);
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
      mirror.clear();
      mirror.discard(dropped, 'cleared', 'clearQueue()');
      holds++;
      const done = (async () => {
        try {
          const current = await core.ready();
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

    atTaskEnd(hook) {
      taskEnd = hook;
    },

    queueSize: () => mirror.queueSize(buffer.timestamps.length),
    recordingQueued: () => mirror.recordingQueued(messages),

    pending() {
      // A beacon carries at most what the queue would hold.
      if (core.link() === undefined) trim();
      return mirror.pending(buffer, core.timezone());
    },

    async stats() {
      const current = await core.ready();
      // While no core runs (held, none could start, or shut down), what waits is the buffer.
      const base: Omit<QueueStats, 'mode'> & { mode: DeliveryMode } =
        current === undefined
          ? { queueSize: buffer.timestamps.length, receivedSeq: 0, recordingQueued: 0, sent: 0, discarded: 0, mode: core.mode() }
          : await current.stats();
      return { ...base, strategy: core.strategy(), restarts: core.restarts(), unacknowledged: mirror.size };
    },

    mode: core.mode,
    started: core.started,
    release: core.release,
    forget: mirror.forget,

    async shutdown(timeoutMs) {
      // What this task buffered goes to the running core first, which then has `timeoutMs` to send it.
      if (!closed) {
        drain();
        closed = true;
      }
      await core.shutdown(timeoutMs);
    },
  };
}
