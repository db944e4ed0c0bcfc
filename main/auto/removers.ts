/**
 * The automatic features' bookkeeping (every start has its stop: docs/architecture.md,
 * "Conventions"; after rrweb's `record`): every listener, observer and timer they start registers
 * its remover here, and one `stop()` runs them all, a failing one not skipping the rest. Every
 * callback they give the browser goes through {@link Removers.guard}: what it throws is marked as
 * the library's own, logged, and never reaches the host app (or the app's `window.onerror`).
 */
import type { Logger } from '../logger.js';
import { markInternal } from './internal-error.js';
import { runRemovers } from '../run-removers.js';

/** A set of removers of one client's automatic features. */
export interface Removers {
  /** `target.addEventListener(type, listener, options)` with the listener guarded; removed on stop. */
  listen(target: EventTarget, type: string, listener: (event: Event) => void, options?: AddEventListenerOptions): void;
  /** Registers a remover. */
  add(remove: () => void): void;
  /** Wraps a callback so that it never throws (what it throws is marked, logged and dropped). */
  guard<A extends unknown[]>(callback: (...args: A) => void): (...args: A) => void;
  /** Runs every remover once, in order; one that throws is logged and the rest still run. */
  stop(): void;
}

/** Creates an empty set; `what` names the feature in log lines. */
export function createRemovers(log: Logger, what: string): Removers {
  const removers: Array<() => void> = [];
  const guard = <A extends unknown[]>(callback: (...args: A) => void) =>
    (...args: A): void => {
      try {
        callback(...args);
      } catch (error) {
        log.error(`${what} failed`, markInternal(error));
      }
    };
  return {
    guard,
    add: (remove) => void removers.push(remove),
    listen(target, type, listener, options) {
      const guarded = guard(listener);
      target.addEventListener(type, guarded, options);
      removers.push(() => target.removeEventListener(type, guarded, options));
    },
    stop() {
      runRemovers(removers, (error) => log.error(`${what}: a listener could not be removed`, markInternal(error)));
    },
  };
}
