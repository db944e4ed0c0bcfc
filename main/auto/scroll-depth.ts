/**
 * `enableHeatmapTracking`: one `scroll_depth` event per page view with the fields of
 * ScrollDepthData (`main/types.ts`): the deepest point of the document seen, in percent of its
 * height, for the dashboard's scroll map (docs/protocol.md, "GET /api/v1/reports/heatmap").
 *
 * A page view here is what automatic page tracking counts: the page's URL, until an in-page
 * navigation changes it (`popstate`, `hashchange`, and the event the facade's shared history patch
 * fires after `pushState`/`replaceState`, `page-tracking.ts`).
 * The depth is measured at most once per animation frame while the page scrolls (as the session's
 * scroll depth is, `interaction-tracking.ts`), and once when the page view starts.
 *
 * The event is sent once, when the page view ends: at the navigation that ends it, or when the page
 * is first hidden (`visibilitychange` to hidden, or `pagehide`), the last moment a mobile browser
 * is sure to give; scrolling after the page is shown again is not measured. It goes through the
 * facade's `track()` funnel as performance tracking's event does: listeners run in the order they
 * were added, so this one runs after the unload path's, which beacons what is made after it
 * (`unload/unload-path.ts`). By the time a navigation is seen the URL has changed, so the event
 * carries the page it measured as its own `page` property, which wins over the context's
 * (docs/decisions.md, "Wire mapping of every client call"): the server files it under that page.
 */
import type { EventProperties, PageProperties } from '../../protocol/event-model/analytics-event.js';
import { SCROLL_DEPTH_EVENT } from '../../protocol/heatmap.js';
import type { Logger } from '../logger.js';
import type { ScrollDepthData } from '../types.js';
import { createRemovers } from './removers.js';

/**
 * `LOCATION_CHANGE` of `page-tracking.ts`, which the facade's history patch fires while the client
 * runs. A copy (a test keeps them equal): importing that module here would share it between the
 * facade's bundle and this chunk, and the plumbing costs the facade bytes (`npm run size`).
 */
export const LOCATION_CHANGE_EVENT = 'service-analytics:locationchange';

/** What scroll-depth tracking needs. */
export interface ScrollDepthDeps {
  send: (name: typeof SCROLL_DEPTH_EVENT, properties: EventProperties) => void;
  log: Logger;
}

/** One page view being measured. */
interface PageView {
  href: string;
  /** The page's properties as the page view had them, JSON-encoded as on the wire. */
  page: string;
  /** Deepest point seen, percent. */
  depth: number;
  /** The document's height at that measurement, px. */
  height: number;
  measured: boolean;
  sent: boolean;
}

/** Starts measuring on `win`; returns the remover. */
export function trackScrollDepth(win: Window, deps: ScrollDepthDeps): () => void {
  const r = createRemovers(deps.log, 'scroll depth tracking');
  const doc = win.document;
  // The referrer of an in-page navigation is the previous URL, of the first page the document's,
  // as the page view's context has it (`session/page-context.ts`).
  let referrer = doc.referrer;
  let view = begin();
  let frame: number | undefined;
  const raf =
    typeof win.requestAnimationFrame === 'function'
      ? (cb: () => void) => win.requestAnimationFrame(cb)
      : (cb: () => void) => win.setTimeout(cb, 16);
  const caf =
    typeof win.cancelAnimationFrame === 'function' ? (id: number) => win.cancelAnimationFrame(id) : (id: number) => win.clearTimeout(id);

  function begin(): PageView {
    const { location } = win;
    const page: PageProperties = { title: doc.title, url: location.href, path: location.pathname, referrer, search: location.search };
    return { href: location.href, page: JSON.stringify(page), depth: 0, height: 0, measured: false, sent: false };
  }

  function measure(): void {
    const root = doc.documentElement;
    const height = Math.max(root?.scrollHeight ?? 0, doc.body?.scrollHeight ?? 0);
    const seen = (win.scrollY || 0) + (win.innerHeight || 0);
    const depth = height > 0 ? Math.min(100, Math.max(0, Math.round((seen / height) * 100))) : 100;
    view.measured = true;
    if (depth >= view.depth) {
      view.depth = depth;
      view.height = Math.round(height);
    }
  }

  const schedule = (): void => {
    frame ??= raf(
      r.guard(() => {
        frame = undefined;
        measure();
      }),
    );
  };

  /**
   * Sends the page view's depth, once; `final` measures the page as it is now first (at a
   * navigation the document may already be the next page's: measured only if never before).
   */
  function end(final: boolean): void {
    if (view.sent) return;
    if (final || !view.measured) measure();
    view.sent = true;
    const data: ScrollDepthData = {
      maxScrollDepth: view.depth,
      documentHeight: view.height,
      action: 'scroll',
      viewport: { width: win.innerWidth, height: win.innerHeight },
    };
    deps.send(SCROLL_DEPTH_EVENT, { ...(data as unknown as EventProperties), page: view.page });
  }

  const passive = { passive: true, capture: true };
  r.listen(win, 'scroll', schedule, passive);
  r.listen(doc, 'visibilitychange', () => {
    if (doc.visibilityState === 'hidden') end(true);
  });
  r.listen(win, 'pagehide', () => end(true));
  const onNavigate = (): void => {
    if (win.location.href === view.href) return;
    // A frame still pending would measure the next page's document: not this page view's.
    if (frame !== undefined) caf(frame);
    frame = undefined;
    end(false);
    referrer = view.href;
    view = begin();
    schedule();
  };
  for (const type of ['popstate', 'hashchange', LOCATION_CHANGE_EVENT]) r.listen(win, type, onNavigate);
  r.add(() => {
    if (frame !== undefined) caf(frame);
  });
  schedule();
  return r.stop;
}
