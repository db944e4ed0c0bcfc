/**
 * The session as a subscribable store (`analytics.session`), in the shape zustand and React's
 * `useSyncExternalStore` expect: `subscribe(listener)` answers its unsubscribe, `getSnapshot()` a
 * frozen object that keeps its identity until the session changes. No React here: only
 * `main/react/` imports React (docs/architecture.md, "Conventions"), and any other view layer can
 * follow the session the same way.
 *
 * Changes reach it from the session manager (`session.ts` calls {@link SessionState.changed} on
 * each event, click, scroll frame, navigation and new session). That call is on the per-event path,
 * so it only bumps a number and, when someone listens, queues one microtask for the whole burst;
 * the snapshot is built when it is asked for, once per change. The one change without a call, the
 * session ending after `sessionTimeout` without activity, is caught by one timer, running only
 * while someone listens and only in a browser.
 */
import type { Timers } from '../../protocol/worker/timers.js';
import type { Logger } from '../logger.js';
import { EMPTY_SESSION } from './empty-session.js';
import type { SessionData } from '../types.js';

/** The session as a store: what `analytics.session` is. */
export interface SessionStore {
  /**
   * Calls `listener` after the session changed: a page view or other event, a click, the scroll
   * depth, a new session (timeout, `reset()`), or the session ending after `sessionTimeout` without
   * activity. Changes made together (before the next microtask) come as one call. A listener that
   * throws is logged (with `debug`) and does not keep the others from being called.
   * @returns the function that unsubscribes `listener`
   */
  subscribe(listener: () => void): () => void;
  /**
   * The session now, as `getSessionData()` answers it, frozen (do not change it): the same object
   * until the session changes, so comparing snapshots by identity tells whether anything changed.
   */
  getSnapshot(): Readonly<SessionData>;
}

/** The store plus what the facade drives it with. */
export interface SessionState {
  /** What the client hands out as `analytics.session`. */
  store: SessionStore;
  /** Something in the session changed: the next snapshot is built afresh and listeners are told. */
  changed(): void;
  /** Stops the timer (the client shuts down); listeners are still told of changes. */
  close(): void;
}

/** Longest delay a platform timer takes (ms); a longer one would fire at once, again and again. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Creates the store over `read` (the session manager's `data(now)`).
 * @param timeout - `sessionTimeout` (ms), to know when an active session ends by itself
 * @param timers - undefined outside a browser: no timer is ever started there
 */
export function createSessionState(
  read: (now: number) => SessionData,
  now: () => number,
  timeout: number,
  timers: Timers | undefined,
  log: Logger,
): SessionState {
  const listeners = new Set<() => void>();
  let version = 0;
  let built = -1;
  let snapshot = EMPTY_SESSION;
  let scheduled = false;
  /** The expiry timer's timers; dropped at close(), so no timer starts after it. */
  let clock = timers;
  let expiry: unknown;
  /** When an active snapshot's session ends without further activity: last activity plus timeout. */
  const end = (s: Readonly<SessionData>): number => s.startTime + (s.duration ?? 0) + timeout;

  function getSnapshot(): Readonly<SessionData> {
    try {
      const at = now();
      if (built !== version || (snapshot.isActive && at > end(snapshot))) {
        // Marked built first: a read that throws is tried again at the next change, not per call.
        built = version;
        const data = read(at);
        Object.freeze(data.events);
        snapshot = Object.freeze(data);
      }
    } catch (error) {
      log.error('the session could not be read', error);
    }
    return snapshot;
  }

  function notify(): void {
    scheduled = false;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        log.error('a session listener threw', error);
      }
    }
    watch();
  }

  /** Waits, while someone listens, for the moment an active session would end without activity. */
  function watch(): void {
    // An inactive session is revived only by activity, and activity calls changed().
    if (clock === undefined || expiry !== undefined || listeners.size === 0 || !getSnapshot().isActive) return;
    expiry = clock.setTimeout(
      () => {
        expiry = undefined;
        // Still active: activity since moved the end, wait again. Else the session ended.
        if (getSnapshot().isActive) watch();
        else notify();
      },
      Math.min(MAX_DELAY_MS, end(snapshot) - now() + 1),
    );
  }

  function unwatch(): void {
    clock?.clearTimeout(expiry);
    expiry = undefined;
  }

  return {
    store: {
      subscribe(listener) {
        listeners.add(listener);
        watch();
        return () => {
          listeners.delete(listener);
          if (listeners.size === 0) unwatch();
        };
      },
      getSnapshot,
    },
    changed() {
      version++;
      if (scheduled || listeners.size === 0) return;
      scheduled = true;
      queueMicrotask(notify);
    },
    close() {
      unwatch();
      clock = undefined;
    },
  };
}
