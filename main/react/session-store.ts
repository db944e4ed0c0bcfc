/**
 * A subscribable view of the client's session for `useSessionTracking`, framework-free (no React
 * import, STYLE.md 10). The client answers `getSessionData()` synchronously but does not announce
 * changes, so the store re-reads it when something that changes it may have happened (a click, a
 * scroll, a navigation, a visibility change) and once a second for the live duration, and hands
 * out a new snapshot only when a field changed.
 */
import type { Analytics } from '../analytics.js';
import { emptySession } from '../operation-fallbacks.js';
import type { SessionData } from '../types.js';

/** What `useSessionTracking()` returns. */
export interface SessionSnapshot {
  sessionId: string;
  isActive: boolean;
  /** Milliseconds since the session started. */
  duration: number;
  pageViews: number;
  clicks: number;
  /** Current scroll depth, percent. */
  scrollDepth: number;
  sessionData: SessionData;
}

/** A subscribable session view. */
export interface SessionStore {
  subscribe(listener: () => void): () => void;
  getSnapshot(): SessionSnapshot;
}

/** The snapshot on the server and before the client exists. */
export const EMPTY_SNAPSHOT: SessionSnapshot = Object.freeze({
  sessionId: '',
  isActive: false,
  duration: 0,
  pageViews: 0,
  clicks: 0,
  scrollDepth: 0,
  sessionData: Object.freeze(emptySession()),
}) as SessionSnapshot;

const TRIGGERS = ['click', 'scroll', 'popstate', 'hashchange', 'visibilitychange', 'keydown'];

/** Creates the store over `analytics`; `win` is absent on the server. */
export function createSessionStore(analytics: Analytics, win: Window | undefined, now: () => number = () => Date.now()): SessionStore {
  let snapshot = EMPTY_SNAPSHOT;
  const listeners = new Set<() => void>();
  let stop: (() => void) | undefined;

  const read = (): SessionSnapshot => {
    const data = analytics.getSessionData();
    const duration = data.isActive ? Math.max(0, now() - data.startTime) : (data.duration ?? 0);
    const next: SessionSnapshot = {
      sessionId: data.sessionId ?? analytics.getSessionId(),
      isActive: data.isActive,
      // Whole seconds: a finer duration would re-render on every read.
      duration: Math.floor(duration / 1000) * 1000,
      pageViews: data.pageViews,
      clicks: data.clicks,
      scrollDepth: data.scrollDepth,
      sessionData: data,
    };
    const same =
      next.sessionId === snapshot.sessionId &&
      next.isActive === snapshot.isActive &&
      next.duration === snapshot.duration &&
      next.pageViews === snapshot.pageViews &&
      next.clicks === snapshot.clicks &&
      next.scrollDepth === snapshot.scrollDepth &&
      next.sessionData.events.length === snapshot.sessionData.events.length &&
      next.sessionData.maxScrollDepth === snapshot.sessionData.maxScrollDepth;
    return same ? snapshot : next;
  };

  const check = (): void => {
    const next = read();
    if (next === snapshot) return;
    snapshot = next;
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch {
        // One broken listener must not starve the others.
      }
    }
  };

  const start = (): (() => void) => {
    if (win === undefined) return () => {};
    let scheduled = false;
    // After the client's own listeners have counted the click or scroll.
    const soon = (): void => {
      if (scheduled) return;
      scheduled = true;
      setTimeout(() => {
        scheduled = false;
        check();
      }, 0);
    };
    for (const type of TRIGGERS) win.addEventListener(type, soon, { passive: true, capture: true });
    const timer = setInterval(check, 1000);
    return () => {
      clearInterval(timer);
      for (const type of TRIGGERS) win.removeEventListener(type, soon, { capture: true });
    };
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      if (listeners.size === 1) stop = start();
      check();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) {
          stop?.();
          stop = undefined;
        }
      };
    },
    getSnapshot: () => snapshot,
  };
}
