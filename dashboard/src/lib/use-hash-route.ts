/** The current route, from the URL's hash, kept current on `hashchange`. */
import { useSyncExternalStore } from 'react';
import { type Route, parseRoute } from './route.js';

const subscribe = (listener: () => void): (() => void) => {
  window.addEventListener('hashchange', listener);
  return () => window.removeEventListener('hashchange', listener);
};
const snapshot = (): string => window.location.hash;

/** The route of the page's hash. */
export function useHashRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, snapshot, () => ''));
}
