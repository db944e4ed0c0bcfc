/**
 * Detects in-page navigation for automatic page views. Basic by design: the Navigation API's
 * `navigatesuccess` where it exists (it sees pushState navigations without patching `history`),
 * else `popstate` and `hashchange`. Whether a URL change is a new page view (no duplicate for the
 * same URL) is decided by the caller.
 */

/** Calls `onNavigate` after each in-page navigation; returns the remover. */
export function watchNavigation(win: Window, onNavigate: () => void): () => void {
  const handler = (): void => {
    try {
      onNavigate();
    } catch {
      // The caller guards its own work; this keeps a navigation event handler from throwing.
    }
  };
  const navigation = (win as Window & { navigation?: EventTarget }).navigation;
  if (navigation !== undefined && typeof navigation.addEventListener === 'function') {
    navigation.addEventListener('navigatesuccess', handler);
    return () => navigation.removeEventListener('navigatesuccess', handler);
  }
  win.addEventListener('popstate', handler);
  win.addEventListener('hashchange', handler);
  return () => {
    win.removeEventListener('popstate', handler);
    win.removeEventListener('hashchange', handler);
  };
}
