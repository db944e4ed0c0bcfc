/**
 * `enablePerformanceTracking`: one `performance` event per page load with the fields of
 * PerformanceData (`main/types.ts`). All times are milliseconds from the start of the navigation
 * (rounded); `cumulativeLayoutShift` is unitless.
 *
 * | Field | Source |
 * |---|---|
 * | loadTime, domReady | navigation timing: `loadEventEnd`, `domContentLoadedEventEnd` (left out if not reached yet) |
 * | firstPaint, firstContentfulPaint | `paint` entries |
 * | largestContentfulPaint | the last `largest-contentful-paint` entry |
 * | firstInputDelay | `first-input`: `processingStart - startTime` (else the first interaction's `event` entry) |
 * | interactionToNextPaint | extra field, where `event` timing exists: the longest interaction's `duration` (INP without the "ignore one per 50 interactions" rule) |
 * | cumulativeLayoutShift | `layout-shift` entries without recent input, largest session window (gaps < 1 s, window ≤ 5 s) |
 * | timeToInteractive | approximation: from max(FCP, DOMContentLoaded), the end of the last long task (`longtask`, ≥ 50 ms) before a quiet window of {@link TTI_QUIET_WINDOW_MS} with none; network quiet is not considered; without long-task timing, max(FCP, DOMContentLoaded) |
 *
 * Observers use `buffered: true`, so entries from before this chunk loaded count. The event is
 * sent once, when the values are final: when the page is first hidden (`visibilitychange` to
 * hidden, or `pagehide`, whichever comes first), or {@link PERFORMANCE_SETTLE_MS} after `load`.
 * On a navigation Chromium fires `pagehide` first, and on the window, its target, the listeners run
 * in the order they were added, so this one runs after the unload path's beacon: the unload path
 * beacons what is made after it at the end of the task (`unload-path.ts`).
 * After it is sent, every observer and listener is removed.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { Logger } from '../logger.js';
import type { PerformanceData } from '../types.js';
import { createRemovers } from './removers.js';

/** The event is sent this long after `load` unless the page was hidden sooner (ms). */
export const PERFORMANCE_SETTLE_MS = 10_000;
/** Quiet window (no long task) that ends the search for time to interactive (ms). */
export const TTI_QUIET_WINDOW_MS = 5000;

/** PerformanceData plus the INP-like value measured where event timing exists. */
export interface MeasuredPerformance extends PerformanceData {
  /** Longest interaction (ms); see the module comment. */
  interactionToNextPaint?: number;
}

/** What performance tracking needs. */
export interface PerformanceDeps {
  send: (name: 'performance', properties: EventProperties) => void;
  log: Logger;
}

type Entry = PerformanceEntry & {
  processingStart?: number;
  interactionId?: number;
  value?: number;
  hadRecentInput?: boolean;
};

/** Starts measuring on `win`; returns the remover. */
export function trackPerformance(win: Window, deps: PerformanceDeps): () => void {
  const r = createRemovers(deps.log, 'performance tracking');
  const data: MeasuredPerformance = {};
  const Observer = (win as { PerformanceObserver?: typeof PerformanceObserver }).PerformanceObserver;
  const pending: Array<() => void> = [];
  let clsSeen = false;
  let cls = 0;
  let windowValue = 0;
  let windowStart = 0;
  let lastShift = 0;
  let inp = 0;
  const longTasks: Array<[number, number]> = [];

  const observe = (type: string, onEntry: (entry: Entry) => void, extra?: object): boolean => {
    if (typeof Observer !== 'function') return false;
    try {
      const observer = new Observer(r.guard((list: PerformanceObserverEntryList) => list.getEntries().forEach(onEntry)));
      observer.observe({ type, buffered: true, ...extra } as PerformanceObserverInit);
      r.add(() => observer.disconnect());
      // Entries queued but not yet delivered are taken when the values are read.
      pending.push(() => observer.takeRecords().forEach(onEntry));
      return true;
    } catch {
      return false; // Entry type not supported here.
    }
  };
  observe('paint', (e) => {
    if (e.name === 'first-paint') data.firstPaint = ms(e.startTime);
    if (e.name === 'first-contentful-paint') data.firstContentfulPaint = ms(e.startTime);
  });
  observe('largest-contentful-paint', (e) => (data.largestContentfulPaint = ms(e.startTime)));
  observe('first-input', (e) => (data.firstInputDelay ??= ms((e.processingStart ?? e.startTime) - e.startTime)));
  observe(
    'event',
    (e) => {
      if (!(e.interactionId! > 0)) return;
      data.firstInputDelay ??= ms((e.processingStart ?? e.startTime) - e.startTime);
      inp = Math.max(inp, e.duration);
    },
    { durationThreshold: 16 },
  );
  clsSeen = observe('layout-shift', (e) => {
    if (e.hadRecentInput === true) return;
    const value = e.value ?? 0;
    if (windowValue > 0 && e.startTime - lastShift < 1000 && e.startTime - windowStart < 5000) windowValue += value;
    else [windowValue, windowStart] = [value, e.startTime];
    lastShift = e.startTime;
    cls = Math.max(cls, windowValue);
  });
  const longTasksSeen = observe('longtask', (e) => void longTasks.push([e.startTime, e.startTime + e.duration]));

  let sent = false;
  const finish = (): void => {
    if (sent) return;
    sent = true;
    for (const take of pending) {
      try {
        take();
      } catch {
        // An observer already gone: what it delivered before is kept.
      }
    }
    const nav = win.performance?.getEntriesByType?.('navigation')[0] as PerformanceNavigationTiming | undefined;
    if (nav !== undefined) {
      if (nav.loadEventEnd > 0) data.loadTime = ms(nav.loadEventEnd);
      if (nav.domContentLoadedEventEnd > 0) data.domReady = ms(nav.domContentLoadedEventEnd);
    }
    if (clsSeen) data.cumulativeLayoutShift = Math.round(cls * 10_000) / 10_000;
    if (inp > 0) data.interactionToNextPaint = ms(inp);
    const start = Math.max(data.firstContentfulPaint ?? 0, data.domReady ?? 0);
    if (start > 0) data.timeToInteractive = ms(timeToInteractive(start, longTasksSeen ? longTasks : []));
    r.stop();
    deps.send('performance', data as EventProperties);
  };

  const onHidden = (): void => {
    if (win.document.visibilityState === 'hidden') finish();
  };
  r.listen(win, 'visibilitychange', onHidden, { capture: true });
  r.listen(win, 'pagehide', finish, { capture: true });
  let timer: number | undefined;
  const settle = r.guard(() => {
    timer ??= win.setTimeout(r.guard(finish), PERFORMANCE_SETTLE_MS);
  });
  r.add(() => win.clearTimeout(timer));
  if (win.document.readyState === 'complete') settle();
  else r.listen(win, 'load', settle);
  return r.stop;
}

/**
 * Time to interactive from `start` and the long tasks `[start, end]` seen: the end of the last
 * long task before a gap of {@link TTI_QUIET_WINDOW_MS} without one.
 */
export function timeToInteractive(start: number, longTasks: ReadonlyArray<readonly [number, number]>): number {
  let tti = start;
  for (const [begin, end] of [...longTasks].sort((a, b) => a[0] - b[0])) {
    if (end <= tti) continue;
    if (begin - tti >= TTI_QUIET_WINDOW_MS) break;
    tti = end;
  }
  return tti;
}

function ms(value: number): number {
  return Math.round(value);
}
