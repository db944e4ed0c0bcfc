/**
 * Page lifecycle hooks of the unload path: `visibilitychange: hidden` (the page may be about to
 * go; ask the core to send now) and `pagehide` (it is going; a post to a worker may never run, so
 * the main thread sends the rest by beacon). Both fire on mobile where `unload` does not.
 */

/** What to do at each moment. */
export interface UnloadHooks {
  /** The page became hidden. */
  onHidden(): void;
  /** The page is being unloaded or put into the back/forward cache. */
  onPageHide(): void;
}

/** Registers the listeners; returns the remover. */
export function watchUnload(win: Window, hooks: UnloadHooks): () => void {
  const doc = win.document;
  const onVisibility = (): void => {
    if (doc.visibilityState === 'hidden') guard(hooks.onHidden);
  };
  const onPageHide = (): void => guard(hooks.onPageHide);
  doc.addEventListener('visibilitychange', onVisibility);
  win.addEventListener('pagehide', onPageHide);
  return () => {
    doc.removeEventListener('visibilitychange', onVisibility);
    win.removeEventListener('pagehide', onPageHide);
  };
}

function guard(hook: () => void): void {
  try {
    hook();
  } catch {
    // Teardown must go on; the hooks log their own failures.
  }
}
