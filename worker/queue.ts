/**
 * The event queue as a state machine with no I/O, no clock and no timers (docs/architecture.md,
 * "Conventions"): time is passed in, and each transition is one step of a queued event's lifecycle
 * (the rules: docs/decisions.md, "Client delivery"):
 *
 * | Lifecycle step                                     | transition        |
 * |----------------------------------------------------|-------------------|
 * | (none) → queued, retries 0                          | {@link EventQueue.enqueue} |
 * | queued → oldest removed (size above maxQueueSize)   | {@link EventQueue.enqueue} (reports `dropped`) |
 * | queued → sending (batchSize / flushInterval / flush) | {@link EventQueue.takeBatch} |
 * | sending → removed (200)                             | {@link EventQueue.ack} |
 * | sending → queued, retries + 1 (network, 5xx)        | {@link EventQueue.fail} (`requeued`) |
 * | sending → queued, retries unchanged (429, 503 with Retry-After; docs/decisions.md) | {@link EventQueue.defer} |
 * | sending → discarded (attempts used up)              | {@link EventQueue.fail} (`discarded`) |
 * | sending → not retried (4xx)                         | {@link EventQueue.reject} |
 * | queued → discarded (clearQueue())                   | {@link EventQueue.clear} |
 *
 * State is mutated in place rather than copied: a burst of 10,000 events must not allocate a new
 * queue per transition. Entries live in one insertion-ordered `Map` keyed by event id, so the
 * oldest event is first, a removal is O(1), a failed event keeps its place (order is kept across
 * retries), and an event enqueued twice (a replay after a worker restart) is kept once.
 */
/**
 * What the queue needs of an event: its id (the queue's key) and when it was made (for the age
 * limit on deferrals). The core queues the event's wire form with its facade number
 * (`delivery-core.ts`); the queue itself never looks inside.
 */
export interface Queueable {
  id: string;
  timestamp: number;
}

/** A queued event with its delivery state. */
export interface QueueEntry<T extends Queueable = Queueable> {
  /** The event. */
  event: T;
  /** Retry attempts so far. */
  retries: number;
  /** When the event was created (ms). */
  timestamp: number;
  /** Earliest time (ms) the event may be sent again; 0 when it may go now. */
  notBefore: number;
  /** True while a request carrying the event is outstanding ("sending"). */
  inFlight: boolean;
  /** Deferrals (429, 503 with Retry-After) in a row since the last other outcome; not retries. */
  deferrals: number;
}

/** The outcome of {@link EventQueue.enqueue}. */
export interface EnqueueResult<T extends Queueable> {
  /** Events that entered the queue (duplicates of queued ids are left out). */
  added: T[];
  /** Oldest events removed to stay within `maxQueueSize` (may include events just added). */
  dropped: T[];
}

/** The outcome of {@link EventQueue.fail}. */
export interface FailResult<T extends Queueable> {
  /** Events back in the queue, waiting for their retry. */
  requeued: number;
  /** Events whose attempts are used up. */
  discarded: T[];
}

/** Decides the wait before retry number `attempt` (1-based), or gives up; see `retry-policy.ts`. */
export type RetryDecision = (attempt: number) => number | 'give-up';

/**
 * Decides the wait after deferral number `deferral` (1-based, in a row) of an event created at
 * `createdAt`, or gives up; see `nextDeferral` in `retry-policy.ts`.
 */
export type DeferralDecision = (deferral: number, createdAt: number) => number | 'give-up';

/** The queue's transitions and read-outs; create one with {@link createEventQueue}. */
export interface EventQueue<T extends Queueable> {
  /** Queues new events with retries 0; drops the oldest waiting events above `maxQueueSize`. */
  enqueue(events: readonly T[]): EnqueueResult<T>;
  /**
   * Marks up to `max` events as sending, oldest first: only events not already sending and whose
   * retry wait has passed at `now`. Takes nothing when fewer than `min` are ready.
   */
  takeBatch(now: number, max: number, min?: number): Array<QueueEntry<T>>;
  /** Removes events the server accepted; returns those that were still queued. */
  ack(ids: readonly string[]): T[];
  /**
   * A send failed with a retryable failure: each event is re-queued with `retries + 1` and a wait
   * from `decide(retries + 1)`, or discarded when `decide` gives up.
   */
  fail(ids: readonly string[], now: number, decide: RetryDecision): FailResult<T>;
  /**
   * The server asked to wait (429, or 503 with `Retry-After`): each event is re-queued with its
   * retries unchanged and a wait from `decide(deferrals + 1, createdAt)`, or discarded when
   * `decide` gives up (the event is too old). Being rate limited never uses up `retryAttempts`.
   */
  defer(ids: readonly string[], now: number, decide: DeferralDecision): FailResult<T>;
  /** A send was refused for good (4xx, or rejected by index in a 200): the events are discarded. */
  reject(ids: readonly string[]): T[];
  /**
   * `clearQueue()`: discards every event. A request already carrying some of them still
   * completes; its outcome finds nothing and changes nothing.
   */
  clear(): T[];
  /** Lets waiting events go now (a `flush()` is not held back by backoff); all when `ids` is omitted. */
  expedite(ids?: Iterable<string>): void;
  /** Earliest retry time among waiting events later than `now`, or `undefined`. */
  nextRetryAt(now: number): number | undefined;
  /** Ids of every event queued or sending, oldest first. */
  ids(): string[];
  /** Every event queued or sending, oldest first. */
  events(): T[];
  /** Events queued or sending. */
  readonly size: number;
}

/**
 * Creates an empty queue.
 *
 * @param maxQueueSize - most events held, sending ones included; @default 1000 (the client's `maxQueueSize`)
 */
export function createEventQueue<T extends Queueable>(
  maxQueueSize: number,
  /** Called for an event enqueued again while queued (a replay after a worker restart): `kept` stays queued. */
  merge?: (kept: T, again: T) => void,
): EventQueue<T> {
  const entries = new Map<string, QueueEntry<T>>();

  /** The oldest event that is not being sent: dropping one in flight would misreport it. */
  function oldestWaiting(): QueueEntry<T> | undefined {
    for (const entry of entries.values()) if (!entry.inFlight) return entry;
    return undefined;
  }

  function removeAll(ids: readonly string[]): T[] {
    const removed: T[] = [];
    for (const id of ids) {
      const entry = entries.get(id);
      if (entry === undefined) continue;
      entries.delete(id);
      removed.push(entry.event);
    }
    return removed;
  }

  return {
    enqueue(events) {
      const added: T[] = [];
      const dropped: T[] = [];
      const limit = Math.max(1, maxQueueSize);
      for (const event of events) {
        const kept = entries.get(event.id);
        if (kept !== undefined) {
          merge?.(kept.event, event);
          continue;
        }
        entries.set(event.id, { event, retries: 0, timestamp: event.timestamp, notBefore: 0, inFlight: false, deferrals: 0 });
        added.push(event);
        if (entries.size > limit) {
          // When every other event is in flight, the oldest waiting one is the event just added.
          const victim = oldestWaiting();
          if (victim !== undefined) {
            entries.delete(victim.event.id);
            dropped.push(victim.event);
          }
        }
      }
      return { added, dropped };
    },

    takeBatch(now, max, min = 1) {
      const batch: Array<QueueEntry<T>> = [];
      if (max < 1) return batch;
      for (const entry of entries.values()) {
        if (entry.inFlight || entry.notBefore > now) continue;
        batch.push(entry);
        if (batch.length >= max) break;
      }
      if (batch.length < min) return [];
      for (const entry of batch) entry.inFlight = true;
      return batch;
    },

    ack: removeAll,

    fail(ids, now, decide) {
      let requeued = 0;
      const discarded: T[] = [];
      for (const id of ids) {
        const entry = entries.get(id);
        if (entry === undefined) continue;
        const wait = decide(entry.retries + 1);
        if (wait === 'give-up') {
          entries.delete(id);
          discarded.push(entry.event);
        } else {
          entry.retries += 1;
          entry.deferrals = 0;
          entry.notBefore = now + wait;
          entry.inFlight = false;
          requeued += 1;
        }
      }
      return { requeued, discarded };
    },

    defer(ids, now, decide) {
      let requeued = 0;
      const discarded: T[] = [];
      for (const id of ids) {
        const entry = entries.get(id);
        if (entry === undefined) continue;
        const wait = decide(entry.deferrals + 1, entry.timestamp);
        if (wait === 'give-up') {
          entries.delete(id);
          discarded.push(entry.event);
        } else {
          entry.deferrals += 1;
          entry.notBefore = now + wait;
          entry.inFlight = false;
          requeued += 1;
        }
      }
      return { requeued, discarded };
    },

    reject: removeAll,

    clear() {
      const removed: T[] = [];
      for (const entry of entries.values()) removed.push(entry.event);
      entries.clear();
      return removed;
    },

    expedite(ids) {
      if (ids === undefined) {
        for (const entry of entries.values()) entry.notBefore = 0;
        return;
      }
      for (const id of ids) {
        const entry = entries.get(id);
        if (entry !== undefined) entry.notBefore = 0;
      }
    },

    nextRetryAt(now) {
      let next: number | undefined;
      for (const entry of entries.values()) {
        if (!entry.inFlight && entry.notBefore > now && (next === undefined || entry.notBefore < next)) {
          next = entry.notBefore;
        }
      }
      return next;
    },

    ids() {
      return Array.from(entries.keys());
    },

    events() {
      return Array.from(entries.values(), (entry) => entry.event);
    },

    get size() {
      return entries.size;
    },
  };
}
