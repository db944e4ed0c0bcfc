/**
 * Work the client does not need in order to start (the lazily loaded features, the beacon sender)
 * is begun once the page is idle, so that it does not compete with the app's own start-up for the
 * main thread (docs/decisions.md, "Start-up").
 */

/** How long a busy page may hold the work back, ms. */
export const IDLE_DEADLINE_MS = 1_000;

/** Where there is no `requestIdleCallback` (Safari): this long after the call, ms. */
export const NO_IDLE_CALLBACK_DELAY_MS = 200;

type IdleWindow = Window & {
  requestIdleCallback?: (callback: () => void, options?: { timeout: number }) => number;
  cancelIdleCallback?: (handle: number) => void;
};

/**
 * Runs `task` once, when `win` is next idle (at the latest after {@link IDLE_DEADLINE_MS});
 * returns the canceller.
 */
export function whenIdle(win: Window, task: () => void): () => void {
  const idle = win as IdleWindow;
  if (typeof idle.requestIdleCallback === 'function' && typeof idle.cancelIdleCallback === 'function') {
    const handle = idle.requestIdleCallback(task, { timeout: IDLE_DEADLINE_MS });
    return () => idle.cancelIdleCallback?.(handle);
  }
  const handle = win.setTimeout(task, NO_IDLE_CALLBACK_DELAY_MS);
  return () => win.clearTimeout(handle);
}
