/**
 * happy-dom has no `requestIdleCallback`; the client begins its deferred work (lazy chunks, the
 * beacon sender) in one (`main/when-idle.ts`). This gives the test window one that runs the
 * callback as an idle page would, at the next turn of the event loop, through `setTimeout`
 * looked up when called, so fake timers apply.
 */
type IdleWindow = { requestIdleCallback?: unknown; cancelIdleCallback?: unknown };

const target = globalThis as IdleWindow;
if (typeof target.requestIdleCallback !== 'function') {
  target.requestIdleCallback = (callback: () => void): ReturnType<typeof setTimeout> => setTimeout(callback, 0);
  target.cancelIdleCallback = (handle: ReturnType<typeof setTimeout>): void => clearTimeout(handle);
}
