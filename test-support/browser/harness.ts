/**
 * Shared pieces of the browser end-to-end tests: the test page (an ES module that imports the real
 * build from `/dist/client/index.js` and exposes hooks on `window.harness`), reading back what the
 * server stored, and a bounded wait. Every assertion of these tests is on what the database holds.
 */
import type { BrowserContext, Page } from 'playwright-core';
import type { Analytics, AnalyticsConfig, DeliveryStats } from '../../main/index.js';
import type { EventRow, EventStore } from '../../server/store/event-store.js';
import type { StaticServer } from './static-server.js';

/** What `harness.flush()` answers: the promise's outcome as data (an Error does not cross `evaluate`). */
export type FlushOutcome = { ok: true } | { ok: false; code: string | null; message: string };

/** The hooks a test page puts on `window.harness`. */
export interface PageHarness {
  analytics: Analytics;
  /** Tracks `count` events named `name` in one loop (one task), with properties `{ run, i }`. */
  trackMany(name: string, count: number, run: string): void;
  flush(): Promise<FlushOutcome>;
  stats(): Promise<DeliveryStats>;
  queueSize(): number;
  /** Content-Security-Policy violations on the page: `effectiveDirective blockedURI`. */
  violations: string[];
}

/** `window` of a test page, for the functions given to `page.evaluate`. */
export interface HarnessWindow {
  harness: PageHarness;
}

/** What `onDiscard` reported, on a page made with `recordDiscards` (oldest first). */
export interface RecordedDiscard {
  reason: string;
  n: number;
  ids: string[];
}

/** `window` of a test page made with `recordDiscards`. */
export type DiscardsWindow = HarnessWindow & { discards: RecordedDiscard[] };

/** The JSON-serialisable part of AnalyticsConfig that a page is configured with. */
export type PageConfig = Omit<AnalyticsConfig, 'onDiscard' | 'transport' | 'workerUrl'> & { workerUrl?: string };

/** The config of a test page: the project's key, the endpoint, no automatic page view, debug logs on. */
export function pageConfig(endpoint: string, project: { id: string; writeKey: string }, overrides: Partial<PageConfig> = {}): PageConfig {
  return { apiKey: project.writeKey, projectId: project.id, endpoint, enableAutoPageTracking: false, debug: true, ...overrides };
}

/** Options of {@link analyticsPageHtml}. */
export interface AnalyticsPageOptions {
  config: PageConfig;
  /** Nonce of the inline module script, for pages with a CSP. */
  nonce?: string;
  /** Where the client is imported from. @default '/dist/client/index.js' */
  clientUrl?: string;
  /**
   * Adds an `onDiscard` that records each report in `window.discards` ({@link DiscardsWindow}),
   * kept in sessionStorage so that it survives a reload (a function does not cross into the JSON config).
   */
  recordDiscards?: boolean;
}

/** A page that starts the client with `config` and exposes {@link PageHarness} as `window.harness`. */
export function analyticsPageHtml(options: AnalyticsPageOptions): string {
  const nonce = options.nonce === undefined ? '' : ` nonce="${options.nonce}"`;
  return `<!doctype html>
<html>
<head><meta charset="utf-8"><title>service-analytics browser test</title></head>
<body>
<p>service-analytics browser test</p>
<script type="module"${nonce}>
import { createAnalytics } from ${JSON.stringify(options.clientUrl ?? '/dist/client/index.js')};
const violations = [];
document.addEventListener('securitypolicyviolation', (event) => violations.push(event.effectiveDirective + ' ' + event.blockedURI));
${
  options.recordDiscards === true
    ? `window.discards = JSON.parse(sessionStorage.getItem('discards') ?? '[]');
const analytics = createAnalytics({
  ...${JSON.stringify(options.config)},
  onDiscard: (info) => {
    window.discards.push({ reason: info.reason, n: info.ids.length, ids: info.ids });
    sessionStorage.setItem('discards', JSON.stringify(window.discards));
  },
});`
    : `const analytics = createAnalytics(${JSON.stringify(options.config)});`
}
window.harness = {
  analytics,
  trackMany(name, count, run) {
    for (let i = 0; i < count; i++) analytics.track(name, { run, i });
  },
  async flush() {
    try {
      await analytics.flush();
      return { ok: true };
    } catch (error) {
      return { ok: false, code: typeof error?.code === 'string' ? error.code : null, message: String(error?.message ?? error) };
    }
  },
  stats: () => analytics.getDeliveryStats(),
  queueSize: () => analytics.getQueueSize(),
  violations,
};
</script>
</body>
</html>`;
}

/** Serves an analytics page at `path`, opens it in `context` and waits for `window.harness`. */
export async function openAnalyticsPage(
  context: BrowserContext,
  server: StaticServer,
  path: string,
  options: AnalyticsPageOptions & { headers?: Record<string, string> },
): Promise<Page> {
  server.setPage(path, { html: analyticsPageHtml(options), headers: options.headers });
  const page = await context.newPage();
  captureConsole(page);
  await page.goto(`${server.url}${path}`);
  await page.waitForFunction(() => 'harness' in window, undefined, { timeout: 30_000 });
  return page;
}

/** Lines the pages logged (console and uncaught errors), printed when a test fails. */
export const pageLog: string[] = [];

/** Records the page's console output and uncaught errors in {@link pageLog}. */
export function captureConsole(page: Page): void {
  page.on('console', (message) => pageLog.push(`[console.${message.type()}] ${message.text()}`));
  page.on('pageerror', (error) => pageLog.push(`[pageerror] ${error.message}`));
}

/** Every event of `projectId` in the database (all pages of `queryEvents`). */
export async function readEvents(store: EventStore, projectId: string, eventType?: string): Promise<EventRow[]> {
  const rows: EventRow[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.queryEvents({ projectId, eventType, limit: 1000, cursor });
    rows.push(...page.events);
    if (page.nextCursor === null) return rows;
    cursor = page.nextCursor;
  }
}

/**
 * Polls `check` until it returns true; throws naming `what` after `timeoutMs`. The bound is
 * generous: it only stops a test that would otherwise hang, it never judges speed.
 */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the database holds at least `count` events of `eventType` for `projectId`; returns them all. */
export async function waitForEvents(
  store: EventStore,
  projectId: string,
  eventType: string,
  count: number,
  timeoutMs = 60_000,
): Promise<EventRow[]> {
  let rows: EventRow[] = [];
  await waitUntil(
    `${count} "${eventType}" event(s) in the database`,
    async () => {
      rows = await readEvents(store, projectId, eventType);
      return rows.length >= count;
    },
    timeoutMs,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)} (found ${rows.length})`);
  });
  return rows;
}

/** A fresh token for the `run` property, so a test only counts its own events. */
export function runId(): string {
  return `run-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}
