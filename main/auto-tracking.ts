/**
 * The automatic features behind their flags (SPEC.md "Events": they send data only when on):
 * uncaught errors and unhandled rejections (`error`), clicks and resting hovers (`click`, `hover`,
 * with HeatmapData), and page timings (`performance`, once per page). Loaded as its own chunk, and
 * only when a flag is on, so the facade's bundle carries none of it. Errors in the first moments
 * before the chunk arrives are not seen.
 */
import type { EventProperties } from '../worker/types.js';
import type { HeatmapData, PerformanceData } from './types.js';

/** Which features to start. */
export interface AutoTrackingOptions {
  errors: boolean;
  heatmap: boolean;
  performance: boolean;
}

/** Most error events per minute: a loop that throws must not flood the queue. */
export const MAX_ERRORS_PER_MINUTE = 30;
/** How long the pointer must rest on an element for a `hover` (ms). */
export const HOVER_REST_MS = 1000;
/** Page timings are sent this long after `load`, or when the page is hidden first (ms). */
export const PERFORMANCE_DELAY_MS = 10_000;

type Send = (event: string, properties: EventProperties) => void;

/** Starts the features that are on; returns the remover. */
export function startAutoTracking(win: Window, options: AutoTrackingOptions, send: Send, now: () => number): () => void {
  const removers: Array<() => void> = [];
  const listen = (target: EventTarget, type: string, listener: (event: Event) => void, opts?: AddEventListenerOptions): void => {
    target.addEventListener(type, listener, opts);
    removers.push(() => target.removeEventListener(type, listener, opts));
  };

  if (options.errors) {
    let windowStart = 0;
    let count = 0;
    const report = (properties: EventProperties): void => {
      const t = now();
      if (t - windowStart >= 60_000) {
        windowStart = t;
        count = 0;
      }
      if (++count <= MAX_ERRORS_PER_MINUTE) send('error', properties);
    };
    listen(win, 'error', (event) => {
      const e = event as ErrorEvent;
      report({
        message: String(e.message || errorOf(e.error).message || 'Script error'),
        stack: errorOf(e.error).stack,
        filename: e.filename || undefined,
        lineno: e.lineno || undefined,
        colno: e.colno || undefined,
        type: 'javascript',
      });
    });
    listen(win, 'unhandledrejection', (event) => {
      const reason = (event as PromiseRejectionEvent).reason as unknown;
      const error = errorOf(reason);
      report({ message: error.message ?? String(reason), stack: error.stack, type: 'unhandledrejection' });
    });
  }

  if (options.heatmap) {
    const passive = { passive: true, capture: true };
    listen(win.document, 'click', (event) => send('click', heatmap(win, event as MouseEvent, 'click')), passive);
    let timer: number | undefined;
    let lastHovered: Element | undefined;
    listen(
      win.document,
      'mousemove',
      (event) => {
        if (timer !== undefined) win.clearTimeout(timer);
        const e = event as MouseEvent;
        timer = win.setTimeout(() => {
          timer = undefined;
          if (e.target === lastHovered) return;
          lastHovered = e.target as Element;
          send('hover', heatmap(win, e, 'move'));
        }, HOVER_REST_MS);
      },
      passive,
    );
    removers.push(() => win.clearTimeout(timer));
  }

  if (options.performance) removers.push(trackPerformanceOnce(win, (data) => send('performance', data as EventProperties)));

  return () => {
    for (const remove of removers.splice(0)) remove();
  };
}

/** HeatmapData of a mouse event, flattened into properties (the viewport JSON-encoded later). */
function heatmap(win: Window, event: MouseEvent, action: HeatmapData['action']): EventProperties {
  const target = isElement(event.target) ? event.target : undefined;
  const data: HeatmapData = {
    x: Math.round(event.pageX ?? event.clientX ?? 0),
    y: Math.round(event.pageY ?? event.clientY ?? 0),
    element: target?.tagName.toLowerCase(),
    selector: target === undefined ? undefined : selectorOf(target),
    action,
    viewport: { width: win.innerWidth, height: win.innerHeight },
  };
  return data as unknown as EventProperties;
}

/**
 * A short CSS selector: up to three levels below `body` of tag, id and two classes, stopping at an
 * id, e.g. `main > div.card > button#buy`.
 */
export function selectorOf(element: Element): string {
  const parts: string[] = [];
  let node: Element | null = element;
  for (let depth = 0; node !== null && depth < 3 && !/^(body|html)$/i.test(node.tagName); depth++, node = node.parentElement) {
    let part = node.tagName.toLowerCase();
    if (node.id) {
      parts.unshift(`${part}#${node.id}`);
      break;
    }
    const classes = Array.from(node.classList).slice(0, 2);
    if (classes.length > 0) part += `.${classes.join('.')}`;
    parts.unshift(part);
  }
  return parts.join(' > ');
}

/** An element, also one from another realm (no `instanceof`). */
function isElement(value: EventTarget | null): value is Element {
  return typeof value === 'object' && value !== null && typeof (value as Partial<Element>).tagName === 'string';
}

function errorOf(value: unknown): { message?: string; stack?: string } {
  if (typeof value !== 'object' || value === null) return {};
  const { message, stack } = value as { message?: unknown; stack?: unknown };
  return { message: typeof message === 'string' ? message : undefined, stack: typeof stack === 'string' ? stack : undefined };
}

/**
 * Collects PerformanceData (milliseconds from navigation start; CLS unitless) and sends it once:
 * {@link PERFORMANCE_DELAY_MS} after `load`, or when the page is hidden first.
 */
function trackPerformanceOnce(win: Window, send: (data: PerformanceData) => void): () => void {
  const perf = win.performance;
  const Observer = (win as Window & { PerformanceObserver?: typeof PerformanceObserver }).PerformanceObserver;
  const data: PerformanceData = {};
  const observers: PerformanceObserver[] = [];
  const observe = (type: string, onEntry: (entry: PerformanceEntry) => void): void => {
    try {
      const observer = new Observer!((list) => list.getEntries().forEach(onEntry));
      observer.observe({ type, buffered: true });
      observers.push(observer);
    } catch {
      // Entry type not supported here.
    }
  };
  if (typeof Observer === 'function') {
    observe('largest-contentful-paint', (e) => (data.largestContentfulPaint = Math.round(e.startTime)));
    observe('first-input', (e) => {
      data.firstInputDelay ??= Math.round((e as PerformanceEventTiming).processingStart - e.startTime);
    });
    observe('layout-shift', (e) => {
      const shift = e as PerformanceEntry & { value?: number; hadRecentInput?: boolean };
      if (shift.hadRecentInput !== true) data.cumulativeLayoutShift = Number(((data.cumulativeLayoutShift ?? 0) + (shift.value ?? 0)).toFixed(4));
    });
  }

  let sent = false;
  let timer: number | undefined;
  const finish = (): void => {
    if (sent) return;
    sent = true;
    try {
      const nav = perf?.getEntriesByType?.('navigation')[0] as PerformanceNavigationTiming | undefined;
      if (nav !== undefined) {
        if (nav.loadEventEnd > 0) data.loadTime = Math.round(nav.loadEventEnd);
        if (nav.domContentLoadedEventEnd > 0) data.domReady = Math.round(nav.domContentLoadedEventEnd);
        if (nav.domInteractive > 0) data.timeToInteractive = Math.round(nav.domInteractive);
      }
      for (const paint of perf?.getEntriesByType?.('paint') ?? []) {
        if (paint.name === 'first-paint') data.firstPaint = Math.round(paint.startTime);
        if (paint.name === 'first-contentful-paint') data.firstContentfulPaint = Math.round(paint.startTime);
      }
    } catch {
      // Timing APIs missing: send what the observers saw.
    }
    send(data);
    stop();
  };
  const onHidden = (): void => {
    if (win.document.visibilityState === 'hidden') finish();
  };
  const onLoad = (): void => {
    timer = win.setTimeout(finish, PERFORMANCE_DELAY_MS);
  };
  const stop = (): void => {
    win.clearTimeout(timer);
    win.removeEventListener('load', onLoad);
    win.document.removeEventListener('visibilitychange', onHidden);
    for (const observer of observers.splice(0)) observer.disconnect();
  };
  win.document.addEventListener('visibilitychange', onHidden);
  if (win.document.readyState === 'complete') onLoad();
  else win.addEventListener('load', onLoad);
  return stop;
}
