/**
 * Frustration signals, with `enableHeatmapTracking` (docs/protocol.md, "Frustration signals"):
 * - `rage_click`: {@link RAGE_CLICKS} clicks on one element within {@link RAGE_WINDOW_MS}, sent at
 *   the click that reaches the count, once per burst;
 * - `dead_click`: a click on an element that looks interactive (a link, a button, a role or an
 *   `onclick` that promises an action) after which, for {@link CLICK_WINDOW_MS}, the DOM did not
 *   change, the page did not navigate and made no request;
 * - `error_click`: a click followed by an uncaught error or unhandled rejection within
 *   {@link CLICK_WINDOW_MS} (then it is not also a dead click).
 * Each carries the element's `selector` (`selector.ts`) and tag; the page is the event's context,
 * as for every event.
 *
 * Per click the listener compares the element with the last one and keeps a few times: the
 * selector is made only when a signal is sent. What follows a click is watched by `click-watch.ts`,
 * whose observers and timer exist only while a click is pending; a new click ends the pending
 * watch without a verdict (the later click is judged instead). At most
 * {@link MAX_SIGNALS_PER_MINUTE} signals in any 60 s.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { FrustrationSignal } from '../../protocol/frustration-signals.js';
import type { Logger } from '../logger.js';
import { type ClickVerdict, watchClick } from './click-watch.js';
import { createRateLimit } from './rate-limit.js';
import { createRemovers } from './removers.js';
import { selectorOf } from './selector.js';

/** Clicks on one element that make a rage click. */
export const RAGE_CLICKS = 3;
/** The window those clicks fall in (ms). */
export const RAGE_WINDOW_MS = 1000;
/** How long after a click the page has to answer it, or to throw (ms). */
export const CLICK_WINDOW_MS = 1000;
/** Most frustration signals of all kinds in any 60 s. */
export const MAX_SIGNALS_PER_MINUTE = 30;

/**
 * Elements whose click promises an action. Form fields, checkboxes and labels are left out: a
 * click on them changes state the DOM does not show (a value, a focus), so silence is normal.
 */
const INTERACTIVE =
  'a[href], button, input[type="button"], input[type="submit"], input[type="reset"], input[type="image"], summary, ' +
  '[role="button"], [role="link"], [role="tab"], [role="menuitem"], [onclick]';

/** What frustration tracking needs. */
export interface FrustrationDeps {
  send: (name: FrustrationSignal, properties: EventProperties) => void;
  now: () => number;
  log: Logger;
  /** The library's endpoint: its requests are not the page answering a click. */
  ownUrl?: string;
}

/** Starts watching clicks on `win` for frustration signals; returns the remover. */
export function trackFrustration(win: Window, deps: FrustrationDeps): () => void {
  const r = createRemovers(deps.log, 'frustration signals');
  const allowed = createRateLimit(MAX_SIGNALS_PER_MINUTE, 60_000, deps.now);
  let burstElement: Element | null = null;
  const burst: number[] = [];
  let cancelWatch: (() => void) | undefined;

  const signal = (name: FrustrationSignal, element: Element, extra: EventProperties): void => {
    if (!allowed()) return;
    deps.send(name, { selector: selectorOf(element), element: element.tagName.toLowerCase(), ...extra });
  };

  const judge = (element: Element, interactive: boolean) => (verdict: ClickVerdict): void => {
    cancelWatch = undefined;
    if (verdict.kind === 'error') signal('error_click', element, { message: verdict.message });
    else if (verdict.kind === 'quiet' && interactive) signal('dead_click', element, {});
  };

  r.listen(
    win.document,
    'click',
    (event) => {
      const target = event.target as Partial<Element> | null;
      if (typeof target?.closest !== 'function') return;
      const interactiveElement = (target as Element).closest(INTERACTIVE);
      // The element a user means: the button around the icon they hit, else what they hit.
      const element = interactiveElement ?? (target as Element);
      const t = deps.now();

      if (element !== burstElement) {
        burstElement = element;
        burst.length = 0;
      }
      while (burst.length > 0 && burst[0]! <= t - RAGE_WINDOW_MS) burst.shift();
      burst.push(t);
      if (burst.length === RAGE_CLICKS) signal('rage_click', element, { clicks: RAGE_CLICKS });

      cancelWatch?.();
      const interactive = interactiveElement !== null && !opensElsewhere(interactiveElement);
      cancelWatch = watchClick(
        win,
        { windowMs: CLICK_WINDOW_MS, answers: interactive, ownUrl: deps.ownUrl, guard: r.guard },
        r.guard(judge(element, interactive)),
      );
    },
    { passive: true, capture: true },
  );
  r.add(() => cancelWatch?.());
  return r.stop;
}

/** A link that opens in another tab or downloads: this page rightly shows nothing. */
function opensElsewhere(element: Element): boolean {
  if (element.tagName !== 'A') return false;
  const target = element.getAttribute('target');
  return element.hasAttribute('download') || (target !== null && target !== '' && target !== '_self');
}
