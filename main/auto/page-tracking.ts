/**
 * Detects in-page navigation for automatic page views. Part of the facade's entry (not a lazy
 * chunk) so that a `history.pushState()` right after `createAnalytics()` is seen: it is small and
 * synchronous. Whether a URL change is a new page view (no duplicate for the same URL) is decided
 * by the caller, so a navigation reported twice (e.g. `popstate` then `hashchange`) counts once.
 * The page view is made at the navigation, so it carries `document.title` as it is then (an app
 * that sets the title later can turn `enableAutoPageTracking` off and call `page()` itself).
 *
 * `pushState`/`replaceState` fire no event, so they are patched, once per window for all clients
 * (two clients on one page, or two copies of the library, share it): the shared patch lives on the
 * `history` object under a `Symbol.for` key, counts its users, calls the original and then fires
 * {@link LOCATION_CHANGE} on the window (only while it has users). The last user to stop puts the
 * originals back, unless another script has wrapped ours since; then ours stays in that chain as
 * a pass-through (taking it out would break that script) and is reused by the next client.
 */

/** The event the shared history patch fires on the window after `pushState`/`replaceState`. */
export const LOCATION_CHANGE = 'service-analytics:locationchange';

const PATCH = Symbol.for('service-analytics.history-patch.v1');
const METHODS = ['pushState', 'replaceState'] as const;

/** The shared patch of one window, stored on its `history`: users, originals, wrappers. */
interface Patch {
  users: number;
  originals: Array<History['pushState']>;
  wrappers: Array<History['pushState']>;
}

/**
 * Calls `onNavigate` after each in-page navigation (`pushState`, `replaceState`, `popstate`,
 * `hashchange`); returns the remover (call it once). A throwing `onNavigate` never reaches the
 * host app.
 */
export function watchNavigation(win: Window, onNavigate: () => void): () => void {
  const handler = (): void => {
    try {
      onNavigate();
    } catch {
      // The caller guards its own work; this keeps the app's pushState() from seeing our error.
    }
  };
  const types = ['popstate', 'hashchange', LOCATION_CHANGE];
  for (const type of types) win.addEventListener(type, handler);
  const history = win.history as History & { [PATCH]?: Patch };
  let patch: Patch | undefined;
  try {
    patch = history[PATCH];
    if (patch === undefined) {
      const shared: Patch = (patch = { users: 0, originals: METHODS.map((name) => history[name]), wrappers: [] });
      METHODS.forEach((name, i) => {
        history[name] = shared.wrappers[i] = function (this: History, ...args) {
          shared.originals[i]!.apply(this, args);
          if (shared.users > 0) win.dispatchEvent(new Event(LOCATION_CHANGE));
        };
      });
      history[PATCH] = shared;
    }
    patch.users++;
  } catch {
    // A frozen or exotic history: popstate and hashchange still work.
  }
  return () => {
    for (const type of types) win.removeEventListener(type, handler);
    // Wrapped again by another script since: ours stays in its chain as a pass-through.
    if (patch === undefined || --patch.users > 0 || METHODS.some((name, i) => history[name] !== patch!.wrappers[i])) return;
    METHODS.forEach((name, i) => (history[name] = patch!.originals[i]!));
    delete history[PATCH];
  };
}
