/**
 * The view state of the URL's query (`lib/view-state.ts`), kept current on Back and Forward, and
 * the way to change it: each change is a history entry, so Back undoes a filter. The hash route is
 * kept as it is.
 */
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { type ViewState, parseViewState, viewSearch } from './view-state.js';

/** Dispatched on `window` when the dashboard itself changes the query (pushState fires no event). */
const CHANGED = 'sa-dashboard-view-change';

const subscribe = (listener: () => void): (() => void) => {
  window.addEventListener('popstate', listener);
  window.addEventListener(CHANGED, listener);
  return () => {
    window.removeEventListener('popstate', listener);
    window.removeEventListener(CHANGED, listener);
  };
};
const snapshot = (): string => window.location.search;

/** Puts `state` into the address, as a new history entry unless `replace`. */
export function navigateView(state: ViewState, replace = false): void {
  const search = viewSearch(state);
  if (search === window.location.search) return;
  const url = `${window.location.pathname}${search}${window.location.hash}`;
  if (replace) window.history.replaceState(window.history.state, '', url);
  else window.history.pushState(window.history.state, '', url);
  window.dispatchEvent(new Event(CHANGED));
}

/** The current view and a setter of the next one. */
export function useViewState(): [ViewState, (next: ViewState) => void] {
  const search = useSyncExternalStore(subscribe, snapshot, () => '');
  const state = useMemo(() => parseViewState(search), [search]);
  const set = useCallback((next: ViewState) => navigateView(next), []);
  return [state, set];
}
