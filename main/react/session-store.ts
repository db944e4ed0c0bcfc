/**
 * What `useSessionTracking()` shows, derived from the client's subscribable session
 * (`analytics.session`, `main/session/session-state.ts`). Framework-free like the core: no React
 * import (docs/architecture.md, "Conventions").
 *
 * Every change arrives by subscription; nothing re-reads the client on a timer. The one field that
 * moves without a change is `duration` (time since the session started): while subscribed and the
 * session is active, a once-a-second clock re-derives it from the snapshot's start time (no read of
 * the client), so it ticks as before; the clock stops while the session is inactive and when the
 * last listener leaves. A new snapshot is handed out only when one of its fields changed, so a
 * scroll frame at the same depth re-renders nothing.
 */
import { EMPTY_SESSION } from '../session/empty-session.js';
import type { SessionStore } from '../session/session-state.js';
import type { SessionData } from '../types.js';

/** What `useSessionTracking()` returns. */
export interface SessionSnapshot {
  sessionId: string;
  isActive: boolean;
  /** Milliseconds since the session started, in whole seconds. */
  duration: number;
  pageViews: number;
  clicks: number;
  /** Current scroll depth, percent. */
  scrollDepth: number;
  sessionData: SessionData;
}

/** A subscribable view for `useSyncExternalStore`. */
export interface SessionTrackingStore {
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
  sessionData: EMPTY_SESSION as SessionData,
});

/** How often `duration` is re-derived while the session is active (ms): its resolution. */
const DURATION_TICK_MS = 1000;

/** Creates the view over `source` (the client's `session`). */
export function createSessionStore(source: SessionStore, now: () => number = () => Date.now()): SessionTrackingStore {
  let snapshot = EMPTY_SNAPSHOT;
  /** The snapshot the listeners were last told of. */
  let told = snapshot;
  /** The source's snapshot that `snapshot` was last derived from. */
  let derivedFrom: Readonly<SessionData> | undefined;
  const listeners = new Set<() => void>();
  let unsubscribe: (() => void) | undefined;
  let clock: ReturnType<typeof setInterval> | undefined;

  const derive = (): void => {
    const data = source.getSnapshot();
    derivedFrom = data;
    const duration = data.isActive ? Math.max(0, now() - data.startTime) : (data.duration ?? 0);
    const next: SessionSnapshot = {
      sessionId: data.sessionId ?? '',
      isActive: data.isActive,
      // Whole seconds: a finer duration would re-render on every change.
      duration: Math.floor(duration / 1000) * 1000,
      pageViews: data.pageViews,
      clicks: data.clicks,
      scrollDepth: data.scrollDepth,
      sessionData: data as SessionData,
    };
    const same =
      next.sessionId === snapshot.sessionId &&
      next.isActive === snapshot.isActive &&
      next.duration === snapshot.duration &&
      next.pageViews === snapshot.pageViews &&
      next.clicks === snapshot.clicks &&
      next.scrollDepth === snapshot.scrollDepth &&
      data.events.length === snapshot.sessionData.events.length &&
      data.maxScrollDepth === snapshot.sessionData.maxScrollDepth;
    if (!same) snapshot = next;
  };

  const stopClock = (): void => {
    if (clock !== undefined) clearInterval(clock);
    clock = undefined;
  };

  /** Re-derives, runs the clock only while `duration` can move, and tells the listeners of a change. */
  const update = (): void => {
    derive();
    if (snapshot.isActive && listeners.size > 0) clock ??= setInterval(update, DURATION_TICK_MS);
    else stopClock();
    // Against the last snapshot told, not the one before: a render may have derived this one already.
    if (snapshot === told) return;
    told = snapshot;
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // One broken listener must not starve the others.
      }
    }
  };

  return {
    subscribe(listener) {
      listeners.add(listener);
      unsubscribe ??= source.subscribe(update);
      update();
      return () => {
        listeners.delete(listener);
        if (listeners.size > 0) return;
        unsubscribe?.();
        unsubscribe = undefined;
        stopClock();
      };
    },
    // Stable between changes: the source's snapshot keeps its identity until the session changes.
    getSnapshot: () => {
      if (source.getSnapshot() !== derivedFrom) derive();
      return snapshot;
    },
  };
}
