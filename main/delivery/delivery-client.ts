/**
 * The facade's side of the delivery core (docs/architecture.md, "The worker boundary"): the types
 * other modules use, and the composition of one module per concern:
 *
 * - `post-buffer.ts`: capture starts at once into a main-thread buffer; what one task produces is
 *   posted as one message at the end of the task, in columns, with `seq` = running count of events
 *   posted to this core; clear() and flush() are sequenced with those posts. The buffer is the
 *   client's front: every call lands there, and what is not its own it hands on.
 * - `core-supervisor.ts`: the core is started by the strategies in order, and nothing captured
 *   before the handshake is lost; a worker that dies is restarted once with its unacknowledged
 *   events replayed, after that the core runs in-process. The host app never sees any of it.
 * - `core-mirror.ts`: status posts keep a mirror for the synchronous `getQueueSize()`, and a bounded
 *   mirror of events not yet acknowledged by the server, which the unload path sends by beacon
 *   (`ack-mirror.ts`): the posted columns themselves, numbered by `seq`, settled by the core's
 *   ranges of numbers, so neither remembering a post nor settling an ack costs the main thread
 *   anything per event.
 */
import type { QueueStats, ToWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { MirrorChunk } from './ack-mirror.js';
import type { DiscardInfo } from '../config.js';
import { createCoreMirror } from './core-mirror.js';
import { createPostBuffer } from './post-buffer.js';
import { createCoreSupervisor } from './core-supervisor.js';
import type { appendEvent } from './event-buffer.js';
import type { Logger } from '../logger.js';
import type { StartStrategy } from './transport-options.js';
import type { StartContext } from './worker-start.js';

/**
 * How the core runs now: `starting` until a strategy succeeded, `off` when none did; `held` while
 * consent is pending or denied (no core started, nothing sent).
 */
export type DeliveryMode = 'held' | 'starting' | 'worker' | 'in-process' | 'off';

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
  /** Starts the core of a client created held, which then sends what it holds; does nothing otherwise. */
  release(): void;
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
  /**
   * Numbers of posted events that the armed deferred request (`fetchLater`) carries, as ascending
   * ranges (`[from, to, …]`): the browser sends them, the pagehide beacon need not.
   */
  covered: readonly number[];
  /**
   * Where the page has no `fetchLater`: the core's body of the covered events (gzip, beacon form),
   * held for the pagehide beacon to send as it is.
   */
  held?: { url: string; body: ArrayBuffer; covered: readonly number[] } | undefined;
}

/** Options of {@link createDeliveryClient}. */
export interface DeliveryClientOptions {
  context: StartContext;
  strategies: readonly StartStrategy[];
  logger: Logger;
  onDiscard: ((info: DiscardInfo) => void) | undefined;
  /** The random end of the page's event ids (`uuid-v7.ts`), carried by every post's columns. */
  idTail: string;
  /** Start no core until `release()` (consent pending): events wait in the buffer, at most maxQueueSize. */
  held?: boolean;
}

/** Creates the client and starts the core at once. */
export function createDeliveryClient(options: DeliveryClientOptions): DeliveryClient {
  const { logger } = options;
  const cap = options.context.config.maxQueueSize;
  const mirror = createCoreMirror(cap, logger, options.onDiscard);
  // The buffer starts the supervisor itself, so that what a finished start calls back (posting what
  // waited, or trimming it) stays private to the buffer.
  return createPostBuffer(options.idTail, cap, logger, mirror, (onStarted) => createCoreSupervisor(options, mirror, onStarted));
}
