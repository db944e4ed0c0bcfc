/**
 * The delivery core's injected dependencies (docs/architecture.md, "Conventions"), as types: every
 * clock, timer, random source, network and storage access goes through here, so the same core runs
 * in a worker, in-process on the main thread, and in tests with fake timers and a fake or local
 * server. Their platform defaults are the worker's (`worker/core-deps.ts`); the facade names these
 * types to hand its own to an in-process core without reaching into the core's implementation.
 */
import type { AnalyticsEvent } from '../event-model/analytics-event.js';
import type { Timers } from './timers.js';

/** The fetch the sender calls: the platform's `fetch`, or a fake in tests. */
export type FetchFn = (url: string, init: RequestInit) => Promise<Response>;

/** Compresses a request body; the sender labels the result `Content-Encoding: gzip`. */
export type Compressor = (data: Uint8Array) => Promise<Uint8Array>;

/** Where the core journals its queue. Writes are fire-and-forget: a journal handles its own errors. */
export interface QueueJournal {
  /** Events journalled by an earlier run, oldest first. */
  load(): Promise<AnalyticsEvent[]>;
  append(events: readonly AnalyticsEvent[]): void;
  remove(ids: readonly string[]): void;
  clear(): void;
  /** Writes what is pending, then releases the database and the cross-tab lock. */
  close(): Promise<void>;
}

/** Dependencies of `createDeliveryCore`. */
export interface CoreDeps extends Timers {
  /** @default the platform's `fetch` */
  fetch: FetchFn;
  /** Current time in ms; @default `Date.now()` */
  now: () => number;
  /** In [0, 1); spreads retries so many tabs do not retry in step. @default `Math.random()` */
  random: () => number;
  /**
   * gzip for request bodies, used when `config.compress` is on.
   * @default `CompressionStream('gzip')` where it exists, else `undefined` (send plain bodies)
   */
  compress?: Compressor | undefined;
  /**
   * Where the queue is journalled when `config.persistQueue` is on.
   * @default IndexedDB where it exists, else none (memory only)
   */
  journal?: QueueJournal | undefined;
  /** Abort a request after this long. @default REQUEST_TIMEOUT_MS (30 s) */
  requestTimeoutMs?: number;
  /** Whether the browser says it is online, and when it comes back. @default `navigator.onLine` and the `online` event */
  online: OnlineSource;
  /**
   * The device's IANA time zone, added to each event whose context has none (the facade reads
   * none: docs/decisions.md, "Start-up"). @default {@link platformTimezone}
   */
  timezone: () => string | undefined;
}

/** The browser's word on connectivity (`navigator.onLine`, the `online` event), in a window or a worker. */
export interface OnlineSource {
  /** False only when the browser is sure it is offline; true when it cannot tell. */
  isOnline(): boolean;
  /** Calls `listener` each time the browser comes back online; returns the remover. */
  onOnline(listener: () => void): () => void;
}
