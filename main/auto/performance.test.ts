/** Performance tracking with a scripted PerformanceObserver: values, once per page, removal. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SILENT } from '../logger.js';
import { PERFORMANCE_SETTLE_MS, TTI_QUIET_WINDOW_MS, timeToInteractive, trackPerformance } from './performance.js';

type FakeEntry = Record<string, unknown> & { entryType: string; startTime: number; duration?: number; name?: string };

/** Buffered entries per type, delivered to observers at observe() (as `buffered: true` does). */
let buffered: FakeEntry[];
let live: FakeObserver[];

class FakeObserver {
  static supportedEntryTypes = ['paint', 'largest-contentful-paint', 'first-input', 'event', 'layout-shift', 'longtask'];
  type = '';
  options: Record<string, unknown> = {};
  queue: FakeEntry[] = [];
  constructor(readonly callback: (list: { getEntries(): FakeEntry[] }) => void) {}
  observe(options: { type: string; buffered?: boolean }): void {
    if (!FakeObserver.supportedEntryTypes.includes(options.type)) throw new TypeError('unsupported');
    this.type = options.type;
    this.options = options;
    live.push(this);
    // Buffered entries wait for takeRecords() or the next delivery.
    this.queue.push(...buffered.filter((e) => e.entryType === options.type));
  }
  takeRecords(): FakeEntry[] {
    return this.queue.splice(0);
  }
  deliver(): void {
    const entries = this.queue.splice(0);
    if (entries.length > 0) this.callback({ getEntries: () => entries });
  }
  disconnect(): void {
    live = live.filter((o) => o !== this);
  }
}

const navigation = { loadEventEnd: 812.4, domContentLoadedEventEnd: 401.6 };
let sent: Array<Record<string, unknown>>;
let stop: (() => void) | undefined;

function setVisibility(state: 'visible' | 'hidden'): void {
  Object.defineProperty(document, 'visibilityState', { value: state, configurable: true });
  document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
}

function start(): void {
  stop = trackPerformance(window, { send: (_name, p) => sent.push(p), log: SILENT });
}

beforeEach(() => {
  buffered = [
    { entryType: 'paint', name: 'first-paint', startTime: 100.2 },
    { entryType: 'paint', name: 'first-contentful-paint', startTime: 120.7 },
    { entryType: 'largest-contentful-paint', startTime: 300 },
    { entryType: 'largest-contentful-paint', startTime: 450.4 },
    { entryType: 'first-input', startTime: 1000, processingStart: 1012.3, duration: 40 },
    { entryType: 'event', startTime: 1000, processingStart: 1012.3, duration: 40, interactionId: 7 },
    { entryType: 'event', startTime: 2000, processingStart: 2001, duration: 180, interactionId: 8 },
    { entryType: 'event', startTime: 2100, processingStart: 2101, duration: 500, interactionId: 0 },
    // Two session windows: 0.1 + 0.05 (gap < 1 s) and 0.12 alone; a shift after input is ignored.
    { entryType: 'layout-shift', startTime: 500, value: 0.1, hadRecentInput: false },
    { entryType: 'layout-shift', startTime: 900, value: 0.05, hadRecentInput: false },
    { entryType: 'layout-shift', startTime: 3000, value: 0.12, hadRecentInput: false },
    { entryType: 'layout-shift', startTime: 3100, value: 0.9, hadRecentInput: true },
    { entryType: 'longtask', startTime: 600, duration: 100 },
    { entryType: 'longtask', startTime: 2000, duration: 60 },
    { entryType: 'longtask', startTime: 9000, duration: 80 },
  ];
  live = [];
  sent = [];
  vi.stubGlobal('PerformanceObserver', FakeObserver);
  vi.spyOn(performance, 'getEntriesByType').mockImplementation((type: string) =>
    type === 'navigation' ? ([navigation] as unknown as PerformanceEntryList) : [],
  );
});
afterEach(() => {
  stop?.();
  stop = undefined;
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.useRealTimers();
  setVisibility('visible');
});

describe('trackPerformance(win)', () => {
  it('sends every PerformanceData field once, when the page is first hidden', () => {
    start();
    for (const observer of live) observer.deliver();
    setVisibility('hidden');
    setVisibility('visible');
    setVisibility('hidden');
    window.dispatchEvent(new Event('pagehide'));
    expect(sent).toEqual([
      {
        loadTime: 812,
        domReady: 402,
        firstPaint: 100,
        firstContentfulPaint: 121,
        largestContentfulPaint: 450,
        firstInputDelay: 12,
        interactionToNextPaint: 180,
        cumulativeLayoutShift: 0.15,
        // From max(FCP, DCL) = 402: the long tasks ending at 700 and 2060 are within 5 s of the
        // previous end; the one at 9000 starts after a quiet window.
        timeToInteractive: 2060,
      },
    ]);
  });

  it('reads entries still queued in the observers when it finishes (takeRecords)', () => {
    start();
    window.dispatchEvent(new Event('pagehide'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ firstContentfulPaint: 121, largestContentfulPaint: 450, cumulativeLayoutShift: 0.15 });
  });

  it(`sends ${PERFORMANCE_SETTLE_MS} ms after load when the page stays visible`, () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    start(); // happy-dom's document is already complete: the settle timer starts now.
    vi.advanceTimersByTime(PERFORMANCE_SETTLE_MS - 1);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toHaveLength(1);
    setVisibility('hidden');
    expect(sent).toHaveLength(1);
  });

  it('removes its observers, listeners and timer once sent, and on stop', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    start();
    expect(live).toHaveLength(6);
    setVisibility('hidden');
    expect(live).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);

    start();
    stop!();
    stop = undefined;
    expect(live).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
    setVisibility('hidden');
    expect(sent).toHaveLength(1);
  });

  it('sends what it has where entry types are missing: no CLS, TTI from FCP and DCL', () => {
    FakeObserver.supportedEntryTypes = ['paint'];
    try {
      start();
      window.dispatchEvent(new Event('pagehide'));
      expect(sent).toEqual([{ loadTime: 812, domReady: 402, firstPaint: 100, firstContentfulPaint: 121, timeToInteractive: 402 }]);
    } finally {
      FakeObserver.supportedEntryTypes = ['paint', 'largest-contentful-paint', 'first-input', 'event', 'layout-shift', 'longtask'];
    }
  });

  it('works without PerformanceObserver at all', () => {
    vi.stubGlobal('PerformanceObserver', undefined);
    start();
    window.dispatchEvent(new Event('pagehide'));
    expect(sent).toEqual([{ loadTime: 812, domReady: 402, timeToInteractive: 402 }]);
  });
});

describe('timeToInteractive(start, longTasks)', () => {
  it('is the end of the last long task before a quiet window', () => {
    expect(timeToInteractive(100, [])).toBe(100);
    expect(timeToInteractive(100, [[50, 90]])).toBe(100);
    expect(timeToInteractive(100, [[4000, 4100], [200, 300]])).toBe(4100);
    expect(timeToInteractive(100, [[200, 300], [300 + TTI_QUIET_WINDOW_MS, 400 + TTI_QUIET_WINDOW_MS]])).toBe(300);
  });
});
