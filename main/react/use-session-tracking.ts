import { useMemo, useSyncExternalStore } from 'react';
import { EMPTY_SNAPSHOT, type SessionSnapshot, createSessionStore } from './session-store.js';
import { useAnalytics } from './use-analytics.js';

// The server has no session to show, and hydration starts from the same empty one.
const serverSnapshot = (): SessionSnapshot => EMPTY_SNAPSHOT;

/**
 * The live session: `sessionId`, `isActive`, `duration` (ms, whole seconds), `pageViews`, `clicks`,
 * `scrollDepth` and the full `sessionData`. Follows the client's session store
 * (`analytics.session`) with `useSyncExternalStore`: it re-renders when one of these changes, and
 * once a second while the session is active (for `duration`, derived from the start time; the
 * client is not polled). Server rendering gets an empty session.
 */
export function useSessionTracking(): SessionSnapshot {
  const analytics = useAnalytics();
  const store = useMemo(() => createSessionStore(analytics.session), [analytics]);
  return useSyncExternalStore(store.subscribe, store.getSnapshot, serverSnapshot);
}
