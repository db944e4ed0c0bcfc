/**
 * How a client's core is started, and the internal seam through which tests and benchmarks replace
 * the worker start, the core's dependencies and browser APIs (`AnalyticsConfig.transport`, not
 * public). Types only, and a leaf: the configuration (`config.ts`) names them, and the delivery
 * options (`delivery-options.ts`), made from that configuration, use them.
 */
import type { CoreDeps } from '../../protocol/worker/core-deps.js';

/** Ways of starting the delivery core, in the order they are tried (docs/architecture.md, "The worker boundary"). */
export type StartStrategy = 'worker-url' | 'shipped-worker' | 'inline-worker' | 'in-process';

/** The part of the `Worker` interface the facade uses, so tests can pass a fake. */
export interface WorkerLike {
  postMessage(message: unknown, transfer: Transferable[]): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
  removeEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
  terminate(): void;
}

/** Constructs a worker: `new Worker(url, options)` by default. */
export type WorkerFactory = (url: string | URL, options: WorkerOptions) => WorkerLike;

/**
 * Overrides for tests and benchmarks.
 * @internal
 */
export interface TransportOptions {
  /** Dependencies passed to the in-process delivery core (e.g. a fake `fetch`). @default the core's own defaults */
  coreDeps?: Partial<CoreDeps>;
  /** Strategies to try, in order. @default all four, in {@link StartStrategy}'s order */
  strategies?: StartStrategy[];
  /** Replaces `new Worker(url, options)`. @default `new Worker(url, options)` */
  createWorker?: WorkerFactory;
  /** How long a worker may take to answer `init`. @default 3000 */
  startTimeoutMs?: number;
  /** How long a control call (stats, clear, shutdown, liveness probe) may take. @default 3000 */
  controlTimeoutMs?: number;
  /** How long `flush()` may take before the worker is probed for liveness. @default 30000 plus the retry backoff */
  flushTimeoutMs?: number;
  /** Replaces `navigator.sendBeacon`. @default `navigator.sendBeacon` where it exists */
  sendBeacon?: (url: string, body: string | Uint8Array) => boolean;
  /** Replaces `window.localStorage`; return undefined for "no storage". @default `window.localStorage` */
  storage?: () => Storage | undefined;
  /** Replaces `Date.now`. @default `Date.now()` */
  now?: () => number;
  /** Replaces the random source of ids: fills the array with random bytes. @default `crypto.getRandomValues` */
  randomBytes?: (bytes: Uint8Array) => void;
}
