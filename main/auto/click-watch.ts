/**
 * What follows one click, watched for a short window (`frustration-signals.ts`): an uncaught error
 * or unhandled rejection (an error click), or any sign that the page answered it: a DOM change, a
 * navigation (another URL, or the page starting to unload) or a request of the page's own. Nothing
 * of this exists between clicks: the observers, listeners and timer are made when a click starts
 * a watch and removed when it ends, so a page that is not being clicked pays nothing.
 *
 * A request is seen in the page's resource timing, which lists it when its answer has arrived
 * (Chromium: when its body has been read), read again when the window closes because a busy page
 * delivers entries late: a request that is still waiting for its answer when the window closes is
 * not seen (a page that shows no spinner for a slow request looks dead to its user too). Requests to the library's own
 * endpoint (an in-process client's uploads, the recorder's chunks) are not the page answering.
 */
import { isInternal } from './internal-error.js';
import type { Removers } from './removers.js';

/** How a watch ended. */
export type ClickVerdict =
  /** The page answered: the DOM changed, it navigated, or it made a request. */
  | { kind: 'answered' }
  /** An uncaught error or unhandled rejection came first. */
  | { kind: 'error'; message: string }
  /** Nothing happened in the window. */
  | { kind: 'quiet' };

/** What a watch needs. */
export interface ClickWatchOptions {
  /** How long to watch, ms. */
  windowMs: number;
  /** Watch for the page's answer (DOM, navigation, requests); errors are always watched. */
  answers: boolean;
  /** URLs under this prefix are the library's own requests, not the page's answer. */
  ownUrl?: string;
  /** Guards the browser's callbacks (`removers.ts`): a failure here never reaches the host app. */
  guard: Removers['guard'];
}

/** Longest error message kept in an `error_click` (characters). */
export const MAX_ERROR_CLICK_MESSAGE = 300;

/**
 * Starts watching what follows a click on `win`; `onVerdict` is called once, at the first sign or
 * when the window closes. Returns the cancel, which ends the watch without a verdict.
 */
export function watchClick(win: Window, options: ClickWatchOptions, onVerdict: (verdict: ClickVerdict) => void): () => void {
  const stops: Array<() => void> = [];
  let done = false;
  const end = (): void => {
    done = true;
    for (const stop of stops.splice(0)) {
      try {
        stop();
      } catch {
        // One remover failing must not keep the others from running.
      }
    }
  };
  const finish = (verdict: ClickVerdict): void => {
    if (done) return;
    end();
    onVerdict(verdict);
  };
  const listen = (target: EventTarget, type: string, listener: (event: Event) => void): void => {
    const guarded = options.guard(listener);
    target.addEventListener(type, guarded);
    stops.push(() => target.removeEventListener(type, guarded));
  };

  listen(win, 'error', (event) => {
    const e = event as ErrorEvent;
    if (isInternal(e.error)) return;
    finish({ kind: 'error', message: messageOf(e.message, e.error) });
  });
  listen(win, 'unhandledrejection', (event) => {
    const reason = (event as PromiseRejectionEvent).reason as unknown;
    if (isInternal(reason)) return;
    finish({ kind: 'error', message: messageOf('', reason) });
  });

  const page = win as Window & typeof globalThis;
  let mutations: MutationObserver | undefined;
  let resources: PerformanceObserver | undefined;
  const startHref = win.location.href;
  const since = win.performance.now();
  const own = options.ownUrl;
  const isPageRequest = (entry: PerformanceEntry): boolean => entry.startTime >= since && (own === undefined || !entry.name.startsWith(own));
  if (options.answers) {
    const answered = (): void => finish({ kind: 'answered' });
    for (const type of ['beforeunload', 'pagehide', 'hashchange', 'popstate']) listen(win, type, answered);
    if (typeof page.MutationObserver === 'function') {
      const observer = new page.MutationObserver(options.guard(answered));
      observer.observe(win.document, { subtree: true, childList: true, attributes: true, characterData: true });
      stops.push(() => observer.disconnect());
      mutations = observer;
    }
    if (typeof page.PerformanceObserver === 'function') {
      try {
        const observer = new page.PerformanceObserver(
          options.guard((list: PerformanceObserverEntryList) => {
            if (list.getEntries().some(isPageRequest)) answered();
          }),
        );
        observer.observe({ type: 'resource' });
        stops.push(() => observer.disconnect());
        resources = observer;
      } catch {
        // No resource timing here: requests go unseen, DOM changes and navigations still count.
      }
    }
  }

  const timer = win.setTimeout(
    options.guard(() => {
      // Mutations and requests of the last moments may still be queued for their observers'
      // callbacks (a busy page delivers resource entries late): read them now.
      const late = (mutations !== undefined && mutations.takeRecords().length > 0) || (typeof resources?.takeRecords === 'function' && resources.takeRecords().some(isPageRequest));
      finish(options.answers && (late || win.location.href !== startHref) ? { kind: 'answered' } : { kind: 'quiet' });
    }),
    options.windowMs,
  );
  stops.push(() => win.clearTimeout(timer));
  return end;
}

/** The message of an error event or a rejection's reason, cut to {@link MAX_ERROR_CLICK_MESSAGE}. */
function messageOf(eventMessage: string, value: unknown): string {
  let text = eventMessage;
  if (text === '' && typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string') {
    text = (value as { message: string }).message;
  }
  if (text === '' && value !== undefined) {
    try {
      text = String(value);
    } catch {
      // A value whose conversion throws has no text.
    }
  }
  if (text === '') text = 'Script error';
  return text.length > MAX_ERROR_CLICK_MESSAGE ? text.slice(0, MAX_ERROR_CLICK_MESSAGE) : text;
}
