/**
 * The benchmark's pages. Each one defines `window.bench` (see {@link BenchWindow}) with the same
 * measuring code; only `bench.track` differs: a loop of `analytics.track()` or of
 * `posthog.capture()`. Measured code runs in tasks of its own (setTimeout), so that the Long Tasks
 * API sees it as the page's work, and the CDP call that starts it is not part of it.
 */

/** The hooks every benchmark page defines. */
export interface BenchApi {
  /** Calls the client's track `count` times in one loop, properties `{ run, i }`. */
  track(name: string, count: number, run: string): void;
  /** The same with realistic properties (a product list view: ids, names, prices; about 200 bytes of JSON). */
  trackRich(name: string, count: number, run: string): void;
  /** Resolves with how the client delivers (`worker`, `in-process`, or `main-thread` for posthog). */
  ready(): Promise<string>;
  /** Resolves with how our client's core was started (`shipped-worker`, …; `-` for posthog). */
  strategy(): Promise<string>;
  /** Events the client still holds (ours: `getQueueSize()`; posthog: -1, unknown). */
  queued(): number;
  /**
   * `samples` tasks of `size` calls each: per task, the loop's time (`sync`) and the time until the
   * end of the task's microtasks, where our facade posts the task's events (`withPost`), in ms.
   */
  sample(samples: number, size: number, name: string, run: string): Promise<{ sync: number[]; withPost: number[] }>;
  /** One task of `count` calls; `start` on the page clock, times in ms. */
  burst(count: number, name: string, run: string): Promise<{ start: number; sync: number; withPost: number }>;
  /**
   * Dispatches `pagehide` in a task of its own, as a page that goes away gets it: every listener
   * the clients registered runs (their unload paths). Resolves with that dispatch's wall time, ms.
   */
  pageHide(): Promise<number>;
  /** Long tasks (> 50 ms) seen since the page started, page clock. */
  longTasks: Array<{ start: number; duration: number }>;
  /** Set once the client was created. */
  started: boolean;
  /** Messages received through `MessagePort.onmessage` handlers (only on pages made with `countPortMessages`). */
  portMessages: number;
  /**
   * Uncaught errors and unhandled rejections on the page. Collected by the page itself: the
   * benchmark enables no Runtime domain (bench/client/cdp.ts), so it sees no console or exceptions.
   */
  errors: string[];
}

export interface BenchWindow {
  bench: BenchApi;
}

/** Runs first on every page: the long-task observer and the measuring code. */
const PRELUDE = `<script>
window.bench = {
  longTasks: [],
  started: false,
  portMessages: 0,
  errors: [],
  track() { throw new Error('no client on this page'); },
  trackRich() { throw new Error('no client on this page'); },
  ready: async () => 'none',
  strategy: async () => '-',
  queued: () => -1,
  sample(samples, size, name, run) {
    const sync = [];
    const withPost = [];
    let s = 0;
    return new Promise((resolve) => {
      const step = () => {
        if (s === samples) return resolve({ sync, withPost });
        const t0 = performance.now();
        bench.track(name, size, run + '-' + s);
        const t1 = performance.now();
        sync.push(t1 - t0);
        // Queued after the facade's own microtask (which posts the task's events), so it runs after it.
        queueMicrotask(() => {
          withPost.push(performance.now() - t0);
          s++;
          setTimeout(step, 0);
        });
      };
      setTimeout(step, 0);
    });
  },
  pageHide() {
    return new Promise((resolve) => {
      setTimeout(() => {
        const start = performance.now();
        dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
        resolve(performance.now() - start);
      }, 0);
    });
  },
  burst(count, name, run) {
    return new Promise((resolve) => {
      setTimeout(() => {
        const start = performance.now();
        bench.track(name, count, run);
        const sync = performance.now() - start;
        queueMicrotask(() => resolve({ start, sync, withPost: performance.now() - start }));
      }, 0);
    });
  },
};
addEventListener('error', (event) => bench.errors.push(String(event.message)));
addEventListener('unhandledrejection', (event) => bench.errors.push(String(event.reason)));
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) bench.longTasks.push({ start: entry.startTime, duration: entry.duration });
}).observe({ type: 'longtask', buffered: true });
</script>`;

/** Diagnostic: counts the messages that reach `MessagePort.onmessage` handlers (our status posts). */
const COUNT_PORT_MESSAGES = `<script>
{
  const descriptor = Object.getOwnPropertyDescriptor(MessagePort.prototype, 'onmessage');
  Object.defineProperty(MessagePort.prototype, 'onmessage', {
    configurable: true,
    enumerable: descriptor.enumerable,
    get() { return descriptor.get.call(this); },
    set(handler) {
      descriptor.set.call(this, typeof handler === 'function' ? function (event) { bench.portMessages++; return handler.call(this, event); } : handler);
    },
  });
}
</script>`;

/** Takes `fetchLater` away before any client runs, as in browsers that have none (Firefox, Safari). */
const WITHOUT_FETCH_LATER = `<script>
for (let o = window; o !== null; o = Object.getPrototypeOf(o)) Reflect.deleteProperty(o, 'fetchLater');
</script>`;

/** A benchmark page: the prelude (`window.bench`), then `body`. */
export function benchDocument(body: string, head = ''): string {
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>client benchmark</title>${PRELUDE}${head}</head>
<body>
<p>client benchmark</p>
${body}
</body>
</html>`;
}

/**
 * A page with our client from `/dist/client/index.js`, configured with `config`; with
 * `countPortMessages`, `bench.portMessages` counts the messages the facade receives from the core;
 * with `withoutFetchLater`, the page has no `fetchLater` (the client then relies on its pagehide beacon).
 */
export function ourPage(config: Record<string, unknown>, options: { countPortMessages?: boolean; withoutFetchLater?: boolean } = {}): string {
  return benchDocument(
    `<script type="module">
import { createAnalytics } from '/dist/client/index.js';
const analytics = createAnalytics(${JSON.stringify(config)});
bench.track = (name, count, run) => {
  for (let i = 0; i < count; i++) analytics.track(name, { run, i });
};
const rich = (run, i) => ({ run, i, product_id: 'sku-' + (100000 + i), product_name: 'Trail running shoes, waterproof, size 42', category: 'footwear/running', price_cents: 12900 + i, currency: 'eur', list: 'search results', position: i % 24 });
bench.trackRich = (name, count, run) => {
  for (let i = 0; i < count; i++) analytics.track(name, rich(run, i));
};
bench.ready = async () => (await analytics.getDeliveryStats()).mode;
bench.strategy = async () => String((await analytics.getDeliveryStats()).strategy);
bench.queued = () => analytics.getQueueSize();
bench.started = true;
</script>`,
    (options.countPortMessages === true ? COUNT_PORT_MESSAGES : '') + (options.withoutFetchLater === true ? WITHOUT_FETCH_LATER : ''),
  );
}

/** A page with posthog-js from `scriptUrl`, initialised with `options`. */
export function posthogPage(scriptUrl: string, options: Record<string, unknown>): string {
  return benchDocument(`<script src="${scriptUrl}"></script>
<script>
posthog.init('phc_client_benchmark', ${JSON.stringify(options)});
bench.track = (name, count, run) => {
  for (let i = 0; i < count; i++) posthog.capture(name, { run, i });
};
const rich = (run, i) => ({ run, i, product_id: 'sku-' + (100000 + i), product_name: 'Trail running shoes, waterproof, size 42', category: 'footwear/running', price_cents: 12900 + i, currency: 'eur', list: 'search results', position: i % 24 });
bench.trackRich = (name, count, run) => {
  for (let i = 0; i < count; i++) posthog.capture(name, rich(run, i));
};
bench.ready = async () => 'main-thread';
bench.started = true;
</script>`);
}
