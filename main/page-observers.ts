/**
 * What the facade watches on the page besides events: clicks and scroll depth, in-page navigation,
 * and the traffic-channel rules. None of it is needed to capture events, so it is a chunk loaded
 * with a dynamic `import()` right after start, keeping the facade's bundle small. Activity in the
 * first moments before it arrives is only missed by the click/scroll counters; a navigation that
 * happened meanwhile is caught up at once.
 */
import { detectChannel } from './channel.js';
import { trackInteractions } from './interaction-tracking.js';
import { watchNavigation } from './page-tracking.js';
import type { SessionManager } from './session.js';

/**
 * Starts the observers; returns the remover.
 * @param onNavigate called after each in-page navigation, and once now.
 */
export function observePage(win: Window, session: SessionManager, now: () => number, onNavigate: () => void): () => void {
  session.setChannelDetector(detectChannel);
  const removers = [trackInteractions(win, session, now), watchNavigation(win, onNavigate)];
  onNavigate();
  return () => {
    for (const remove of removers) remove();
  };
}
