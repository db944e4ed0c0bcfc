/**
 * The page's `navigator.sendBeacon`, wrapped: the browser sends a beacon later and tells the page
 * nothing but whether it queued it, so the record is complete at once (status 0; `refused` when
 * the browser did not queue it). The client's own unload beacons are left out (`network-url.ts`).
 */
import type { RequestHooks } from './network-request.js';

/** Wraps `win.navigator.sendBeacon`; returns the unwrap. */
export function wrapBeacon(win: Window, hooks: RequestHooks): () => void {
  const nav = win.navigator as Navigator | undefined;
  const original = nav?.sendBeacon;
  if (nav === undefined || typeof original !== 'function') return () => undefined;
  const hadOwn = Object.hasOwn(nav, 'sendBeacon');
  const wrapper = function (this: Navigator, url: string | URL, data?: BodyInit | null): boolean {
    const queued = original.call(this, url, data);
    try {
      const request = hooks.begin('beacon', 'POST', String(url));
      if (request !== null) {
        request.body = data ?? undefined;
        request.t1 = request.t0;
        if (!queued) request.error = 'refused';
        hooks.done(request);
      }
    } catch {
      // Recording must never change what the page's call answers.
    }
    return queued;
  };
  nav.sendBeacon = wrapper;
  return () => {
    if (nav.sendBeacon !== wrapper) return;
    if (hadOwn) nav.sendBeacon = original;
    else delete (nav as unknown as Record<string, unknown>).sendBeacon;
  };
}
