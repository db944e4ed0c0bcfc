import { useMemo, useSyncExternalStore } from 'react';
import { EMPTY_SNAPSHOT, type SessionSnapshot, createSessionStore } from './session-store.js';
import { useAnalytics } from './use-analytics.js';

const serverSnapshot = (): SessionSnapshot => EMPTY_SNAPSHOT;

/**
 * The live session: `sessionId`, `isActive`, `duration` (ms, whole seconds), `pageViews`, `clicks`,
 * `scrollDepth` and the full `sessionData`. Re-renders when one of them changes, and once a second
 * while the session is active (for `duration`). Server rendering gets an empty session.
 */
export function useSessionTracking(): SessionSnapshot {
  const analytics = useAnalytics();
  const store = useMemo(() => createSessionStore(analytics, typeof window === 'undefined' ? undefined : window), [analytics]);
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverSnapshot);
}
