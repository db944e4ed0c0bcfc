/**
 * The delivery core's injected dependencies (docs/architecture.md, "Conventions"): every clock,
 * timer, random source, network and storage access goes through here, so the same core runs in a
 * worker, in-process on the main thread, and in tests with fake timers and a fake or local server.
 */
import type { QueueJournal } from './queue-journal.js';
import { type Timers, platformTimers } from './timers.js';
import { type Compressor, type FetchFn, REQUEST_TIMEOUT_MS, platformGzip } from './sender.js';

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

/**
 * The platform's time zone from `Intl`, read on the first call and remembered. The first `Intl`
 * call of a thread starts ICU, tens of milliseconds: in a worker that is off the page's main
 * thread, and in-process it is paid once, when the first events are queued.
 */
export function platformTimezone(): () => string | undefined {
  let zone: string | undefined | null = null;
  return () => {
    if (zone === null) {
      try {
        zone = Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
      } catch {
        zone = undefined; // No Intl: events go without a time zone.
      }
    }
    return zone;
  };
}

/** The browser's word on connectivity (`navigator.onLine`, the `online` event), in a window or a worker. */
export interface OnlineSource {
  /** False only when the browser is sure it is offline; true when it cannot tell. */
  isOnline(): boolean;
  /** Calls `listener` each time the browser comes back online; returns the remover. */
  onOnline(listener: () => void): () => void;
}

/** {@link OnlineSource} of the global scope, looked up when called. */
export function platformOnline(): OnlineSource {
  return {
    isOnline: () => (globalThis as { navigator?: { onLine?: unknown } }).navigator?.onLine !== false,
    onOnline(listener) {
      const target = globalThis as Partial<Pick<EventTarget, 'addEventListener' | 'removeEventListener'>>;
      if (typeof target.addEventListener !== 'function') return () => {};
      target.addEventListener('online', listener);
      return () => target.removeEventListener?.('online', listener);
    },
  };
}

/**
 * The defaults: wrapper lambdas that look the platform function up when called, never a global
 * captured at import, so fake timers installed after import still apply.
 */
export function defaultCoreDeps(): CoreDeps {
  return {
    fetch: (url, init) => fetch(url, init),
    now: () => Date.now(),
    ...platformTimers(),
    random: () => Math.random(),
    compress: platformGzip(),
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    online: platformOnline(),
    timezone: platformTimezone(),
  };
}
