/**
 * Clicks and scroll depth for SessionData. Both listeners are passive; scroll is measured at most
 * once per animation frame, because reading layout on every scroll event would force layouts.
 */
import type { SessionManager } from '../session/session.js';

/** Starts counting clicks and measuring scroll depth; returns the remover. */
export function trackInteractions(win: Window, session: SessionManager, now: () => number): () => void {
  const doc = win.document;
  let pending = false;
  let frame = 0;
  const raf =
    typeof win.requestAnimationFrame === 'function'
      ? (cb: () => void) => win.requestAnimationFrame(cb)
      : (cb: () => void) => win.setTimeout(cb, 16);
  const caf =
    typeof win.cancelAnimationFrame === 'function'
      ? (id: number) => win.cancelAnimationFrame(id)
      : (id: number) => win.clearTimeout(id);

  const measure = (counted: boolean): void => {
    pending = false;
    try {
      session.recordScroll(scrollDepth(win), now(), counted);
    } catch {
      // A measurement is not worth an error in the host app.
    }
  };
  const onScroll = (): void => {
    if (pending) return;
    pending = true;
    frame = raf(() => measure(true));
  };
  const onClick = (): void => {
    try {
      session.recordClick(now());
    } catch {
      // As above.
    }
  };

  const options: AddEventListenerOptions = { passive: true, capture: true };
  win.addEventListener('scroll', onScroll, options);
  doc.addEventListener('click', onClick, options);
  pending = true;
  frame = raf(() => measure(false));

  return () => {
    win.removeEventListener('scroll', onScroll, options);
    doc.removeEventListener('click', onClick, options);
    if (pending) caf(frame);
  };
}

/** Percent of the document seen so far down to the bottom of the viewport, 0–100. */
export function scrollDepth(win: Window): number {
  const doc = win.document.documentElement;
  const height = Math.max(doc?.scrollHeight ?? 0, win.document.body?.scrollHeight ?? 0);
  const seen = (win.scrollY ?? 0) + (win.innerHeight ?? 0);
  if (!(height > 0)) return 100;
  return Math.min(100, Math.max(0, Math.round((seen / height) * 100)));
}
