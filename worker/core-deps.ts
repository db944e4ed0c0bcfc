/**
 * The platform defaults of the delivery core's dependencies (their types: `protocol/worker/core-deps.ts`):
 * wrapper lambdas that look each platform function up when called, never a global captured at import.
 */
import type { CoreDeps, OnlineSource } from '../protocol/worker/core-deps.js';
import { platformTimers } from '../protocol/worker/timers.js';
import { REQUEST_TIMEOUT_MS, platformGzip } from './sender.js';

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
