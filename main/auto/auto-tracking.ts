/**
 * The automatic features behind their flags (each sends data only when its flag is on; the events
 * are in docs/decisions.md, "Wire mapping of every client call"): uncaught errors and unhandled
 * rejections (`error`, `auto/error-tracking.ts`), clicks and resting hovers (`click`, `hover`,
 * `auto/heatmap.ts`) with the frustration signals of clicks (`rage_click`, `dead_click`,
 * `error_click`, `auto/frustration-signals.ts`) and each page view's scroll depth (`scroll_depth`,
 * `auto/scroll-depth.ts`), and page timings (`performance`, once per page, `auto/performance.ts`). This
 * module is the entry of a lazy chunk, imported only when a flag is on, so the facade's bundle
 * carries none of it. Errors in the moments before the chunk arrives are not seen; page timings are
 * (their observers are buffered).
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { ResolvedConfig } from '../config.js';
import type { Logger } from '../logger.js';
import { trackErrors } from './error-tracking.js';
import { trackFrustration } from './frustration-signals.js';
import { trackHeatmap } from './heatmap.js';
import { markInternal } from './internal-error.js';
import { trackPerformance } from './performance.js';
import { createRemovers } from './removers.js';
import { trackScrollDepth } from './scroll-depth.js';

export { MAX_ERRORS_PER_MINUTE, MAX_ERRORS_PER_PAGE, MAX_SAME_ERROR_PER_MINUTE } from './error-tracking.js';
export { CLICK_WINDOW_MS, MAX_SIGNALS_PER_MINUTE, RAGE_CLICKS, RAGE_WINDOW_MS } from './frustration-signals.js';
export { HOVER_REST_MS, MAX_HOVERS_PER_MINUTE } from './heatmap.js';
export { PERFORMANCE_SETTLE_MS } from './performance.js';
export { selectorOf } from './selector.js';

/**
 * The flags that choose the features, and the endpoint, whose requests are the library's own (the
 * client's resolved config will do).
 */
export type AutoTrackingOptions = Pick<ResolvedConfig, 'enableErrorTracking' | 'enableHeatmapTracking' | 'enablePerformanceTracking'> &
  Partial<Pick<ResolvedConfig, 'endpoint'>>;

/** How the features send: the facade's `track()` funnel (properties are cleaned there). */
export type AutoSend = (event: string, properties: EventProperties) => void;

/**
 * Starts the features that are on; returns the remover, which removes every listener, observer
 * and timer they started (one failing remover does not skip the rest). A feature that fails to
 * start is logged and the others still start.
 */
export function startAutoTracking(
  win: Window,
  options: AutoTrackingOptions,
  send: AutoSend,
  now: () => number,
  log: Logger,
): () => void {
  const r = createRemovers(log, 'automatic tracking');
  const start = (on: boolean, name: string, feature: () => () => void): void => {
    if (!on) return;
    try {
      r.add(feature());
    } catch (error) {
      log.error(`${name} could not be started`, markInternal(error));
    }
  };
  start(options.enableErrorTracking, 'error tracking', () => trackErrors(win, { send, now, log }));
  start(options.enableHeatmapTracking, 'heatmap tracking', () => trackHeatmap(win, { send, now, log }));
  start(options.enableHeatmapTracking, 'scroll depth tracking', () => trackScrollDepth(win, { send, log }));
  start(options.enableHeatmapTracking, 'frustration signals', () => trackFrustration(win, { send, now, log, ownUrl: options.endpoint }));
  start(options.enablePerformanceTracking, 'performance tracking', () => trackPerformance(win, { send, log }));
  return r.stop;
}
