/**
 * What the facade watches on the page besides events: clicks and scroll depth, the traffic-channel
 * rules, and, when one of their flags is on, the automatic features (`auto-tracking.ts`, a chunk
 * of its own loaded from here). None of it is needed to capture events, so this is a chunk loaded
 * with a dynamic `import()` once the delivery core has started and the page is idle
 * (docs/decisions.md, "Start-up"), keeping the facade's bundle and the page's start-up small (one
 * `import()` in the facade rather than two). Activity in the moments before it arrives (normally
 * the page's first second) is only missed by the click/scroll counters and error tracking. In-page navigation is watched by the facade
 * itself (`page-tracking.ts`), so no early `pushState` is missed.
 */
import type { AutoSend, AutoTrackingOptions } from './auto-tracking.js';
import { detectChannel } from '../../protocol/traffic-channel.js';
import { trackInteractions } from './interaction-tracking.js';
import type { Logger } from '../logger.js';
import type { SessionManager } from '../session/session.js';
import { runRemovers } from '../run-removers.js';

/** What the observers need from the facade. */
export interface PageObserverDeps {
  session: SessionManager;
  now: () => number;
  /** The flags of the automatic features (the client's resolved config will do). */
  config: AutoTrackingOptions;
  /** The facade's `track()` funnel, for the automatic features. */
  send: AutoSend;
  log: Logger;
}

/** Starts the observers (and loads the automatic features that are on); returns the remover. */
export function observePage(win: Window, deps: PageObserverDeps): () => void {
  const { session, config, log } = deps;
  session.setChannelDetector(detectChannel);
  const stops = [trackInteractions(win, session, deps.now)];
  let stopped = false;
  if (config.enableErrorTracking || config.enableHeatmapTracking || config.enablePerformanceTracking) {
    import('./auto-tracking.js').then(
      ({ startAutoTracking }) => {
        if (!stopped) stops.push(startAutoTracking(win, config, deps.send, deps.now, log));
      },
      (error: unknown) => log.debug('automatic tracking could not be loaded', error),
    );
  }
  return () => {
    stopped = true;
    runRemovers(stops, (error) => log.error('a page observer could not be removed', error));
  };
}
