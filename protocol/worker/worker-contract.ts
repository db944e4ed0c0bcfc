/**
 * The worker boundary: every type that crosses between the main-thread facade and the delivery
 * core, in one module of types (docs/architecture.md, "Conventions"). Everything here is
 * structured-clone data.
 *
 * Control plane (comlink, {@link WorkerApi}): init, flush, clear, stats, shutdown.
 * Data plane (one-way `MessagePort`): {@link ToWorkerMessage} carries events and recorder output
 * into the worker; {@link FromWorkerMessage} carries status (queue size, acks, discards) back.
 */
import type { RecordedEvent } from '../wire-types.js';
import type { EventColumns } from '../event-model/event-columns.js';

/** The part of AnalyticsConfig the delivery core needs, with every default already applied. */
export interface DeliveryConfig {
  apiKey: string;
  projectId: string;
  /** Base address of the server, no trailing slash, e.g. `https://analytics.example.com`. */
  endpoint: string;
  batchSize: number;
  flushInterval: number;
  maxQueueSize: number;
  retryAttempts: number;
  retryDelay: number;
  /**
   * What becomes of events whose retries are used up: discarded (reported through `onDiscard`),
   * or, when false, kept and tried again at the next flush trigger, within `maxQueueSize`.
   */
  discardAfterRetries: boolean;
  debug: boolean;
  /** Journal the queue to IndexedDB so it survives a crash or an offline period. */
  persistQueue: boolean;
  /** gzip request bodies with `CompressionStream` where it exists. */
  compress: boolean;
  /**
   * The facade can arm a deferred request (`fetchLater`): the core keeps a ready body of what the
   * server has not acknowledged and posts it (`deferred-arm`, `deferred-disarm`). Set by the facade
   * for worker starts only, where the page has `fetchLater`; absent or false: no such work.
   */
  deferredUnload?: boolean;
}

/** Why events left the queue without being accepted. */
export type DiscardReason =
  | 'retries-exhausted'
  | 'rejected'
  | 'overflow'
  | 'cleared';

/** Machine codes of delivery failures, carried as data across the boundary (docs/architecture.md, "Conventions"). */
export type DeliveryErrorCode =
  | 'NETWORK_ERROR'
  | 'HTTP_ERROR'
  | 'RATE_LIMITED'
  | 'AUTH_ERROR'
  | 'TIMEOUT'
  | 'SHUT_DOWN'
  | 'WORKER_UNAVAILABLE'
  /** A send could not be made for a reason of the library's own (a bug); not retried. */
  | 'INTERNAL_ERROR';

/** The answer to `flush()`: errors cross the boundary as data, never as thrown objects. */
export type FlushResult =
  | { ok: true; sent: number }
  | { ok: false; code: DeliveryErrorCode; message: string; status?: number; queued: number };

/** A snapshot of the core's state. */
export interface QueueStats {
  /** Events waiting or in flight. */
  queueSize: number;
  /** Events the core has received from the facade (posted, dropped unposted, or replayed at `init`). */
  receivedSeq: number;
  /** Recorded events waiting for upload. */
  recordingQueued: number;
  sent: number;
  discarded: number;
  /** `worker` when running in a Web Worker, `in-process` on the main thread. */
  mode: 'worker' | 'in-process';
}

/** Metadata sent with recorder output; the uploader copies it into each chunk. */
export interface RecordingMeta {
  startUrl: string;
  userId: string | null;
  /** When recording started (ms), for the chunk's `duration`. */
  startedAt: number;
  /**
   * Index of the message's first event in the session's recording (its `event_offset` if it began
   * a chunk), numbered by the recorder on the main thread and persisted per session, so a recording
   * continued after a reload or a worker restart never reuses an offset. Absent: the uploader
   * numbers the session's events itself, from 0 (`recording-uploader.ts`).
   */
  offset?: number;
}

/**
 * Data-plane messages from the facade to the core.
 *
 * An event's number, for its whole life, is its id's counter (`idCounters` of {@link EventColumns}):
 * unique and ascending among one client's events, the same in every post, replay and report. The
 * core reports events that left its queue by these numbers, as ranges ({@link FromWorkerMessage}).
 */
export type ToWorkerMessage =
  /**
   * Events made in one task, in the compact form the facade posts ({@link EventColumns}). With
   * `dropped`, the task made more than maxQueueSize events: the oldest were not posted, only their
   * ids' numbers (same `idTail`), for the core to report as overflow.
   */
  | { t: 'event-columns'; columns: EventColumns; dropped?: DroppedIds }
  | { t: 'recording'; sessionId: string; meta: RecordingMeta; events: RecordedEvent[] }
  /** Recording stopped: upload the rest with `is_final: true`. */
  | { t: 'recording-stop'; sessionId: string }
  /** Recording paused: stop the upload timer, keep what is buffered. */
  | { t: 'recording-pause'; sessionId: string }
  /** Discard buffered recorder events without uploading. */
  | { t: 'recording-clear'; sessionId: string }
  /** The page was hidden: send what is queued now (events and recording chunks). */
  | { t: 'page-hidden' };

/** The ids of events the facade dropped unposted: each id's millisecond and counter, as in {@link EventColumns}. */
export interface DroppedIds {
  idMs: number[];
  idCounters: number[];
}

/** Data-plane messages from the core to the facade. */
export type FromWorkerMessage =
  | {
      t: 'status';
      recordingQueued: number;
      /**
       * Events the core holds that the facade does not: restored from the journal (`persistQueue`),
       * counted into the facade's queue size.
       */
      restored: number;
      /**
       * Numbers (id counters) of the events the server accepted since the last status, as
       * ascending half-open ranges, flat: `[from0, to0, from1, to1, …]` (number-ranges.ts).
       * Events restored from the journal, which this facade did not make, are left out.
       */
      acked: number[];
    }
  | {
      t: 'discarded';
      /** For the facade's `onDiscard`. */
      ids: string[];
      /** Their numbers, as in `acked`. */
      ranges: number[];
      reason: DiscardReason;
      detail: string;
    }
  | { t: 'log'; level: 'debug' | 'warn' | 'error'; message: string }
  /**
   * A ready body of the events the core holds unacknowledged, for the facade's deferred request
   * (`fetchLater`; `deferred-body.ts`, docs/architecture.md, "The unload path"). It replaces the
   * previous one. `body` (transferred) is the JSON array of their wire forms, gzipped when the
   * URL says `encoding=gzip`; `url` is the beacon form of the batch endpoint.
   */
  | {
      t: 'deferred-arm';
      url: string;
      body: ArrayBuffer;
      /** Numbers of the events the body carries, as in `acked`. */
      covered: number[];
      /** False when unacknowledged events were left out (the body holds the oldest that fit). */
      complete: boolean;
      /**
       * Set by the facade, never by the core: the page has no `fetchLater`, so the body is held for
       * the pagehide beacon instead of armed (`deferred-request.ts`).
       */
      held?: true;
    }
  /** Nothing is unacknowledged (or nothing fits a body): the deferred request is to be aborted. */
  | { t: 'deferred-disarm' };

/** The handshake answer of `init`. */
export interface WorkerHello {
  /** Protocol version of the worker build, checked by the facade (`WORKER_PROTOCOL_VERSION`). */
  protocol: number;
  mode: 'worker' | 'in-process';
  /**
   * The device's time zone as the core read it, off the page's main thread: the facade adds it
   * to the events it sends by beacon (the facade reads none itself: docs/decisions.md, "Start-up").
   */
  timezone?: string | undefined;
}


/**
 * The control plane, exposed by `worker/entry.ts` through comlink. Each method takes and returns
 * plain data.
 */
export interface WorkerApi {
  /**
   * Starts the core. `port` (transferred) is the data plane: the core reads
   * {@link ToWorkerMessage}s from it and posts {@link FromWorkerMessage}s to it.
   * `replay` are events to enqueue first (unacknowledged events of a worker that died), under
   * their own numbers: nothing is renumbered.
   */
  init(config: DeliveryConfig, port: MessagePort, replay: EventColumns | null): Promise<WorkerHello>;
  /**
   * Sends everything posted up to the event numbered `upTo` (waiting for that post to arrive; −1:
   * nothing posted), resolving when the server accepted it or with the failure; failed events stay
   * queued.
   */
  flush(upTo: number): Promise<FlushResult>;
  /** Discards every queued event (`clearQueue()`). */
  clear(): Promise<void>;
  stats(): Promise<QueueStats>;
  /** Flushes what it can within `timeoutMs`, stops timers and closes the journal. */
  shutdown(timeoutMs: number): Promise<void>;
}

/**
 * The delivery core as the facade uses it in-process (no worker): the same operations as
 * {@link WorkerApi} plus direct message passing in place of the port.
 */
export interface DeliveryCore {
  /** Handles one data-plane message, as the worker does for messages on its port. */
  receive(message: ToWorkerMessage): void;
  /** Listens for data-plane messages from the core; returns the remover. */
  onMessage(listener: (message: FromWorkerMessage) => void): () => void;
  flush(upTo: number): Promise<FlushResult>;
  clear(): Promise<void>;
  stats(): QueueStats;
  shutdown(timeoutMs: number): Promise<void>;
  /** The time zone the core adds to events (`CoreDeps.timezone`), read now if it was not yet. */
  timezone(): string | undefined;
}
