/**
 * "N visitors now" beside the overview's title: the distinct visitors of the last 5 minutes,
 * asked again every 30 s while the tab is visible (`useResource` pauses while it is hidden and
 * asks at once when it shows again).
 *
 * It is the live report (docs/protocol.md, "GET /api/v1/reports/live") with `minutes=5`: the
 * totals of `[now − 5 min, now]`, where now is the server's clock, the clock event times are
 * corrected to, not this browser's, which may be off. The view's range does not apply, and neither
 * do its filters, by choice: as in Plausible's current-visitors count, the badge is the whole
 * site's, so it reads the same on every view and does not ask again when a filter changes.
 */
import type { ReactNode } from 'react';
import * as reports from '../api/reports.js';
import { useApi } from '../lib/api-context.js';
import { formatCountOf } from '../lib/format.js';
import { useResource } from '../lib/use-resource.js';

/** How far back "now" reaches, minutes. */
export const NOW_MINUTES = 5;
/** How often the badge asks again while the tab is visible, ms. */
export const NOW_REFRESH_MS = 30_000;

/** No filters: the badge counts the whole site (see above). */
const NO_FILTERS = {};

/** The badge. */
export function VisitorsNow(): ReactNode {
  const api = useApi();
  const now = useResource((signal) => reports.live(api, NOW_MINUTES, NO_FILTERS, signal), [api], NOW_REFRESH_MS);
  const count = now.state === 'ready' ? now.value.totals.visitors : null;
  // The live region is there from the start, empty until the first answer (an assistive technology
  // announces changes of a region it already knows, not one that appears); a failed read leaves it empty.
  return (
    <p className="now" aria-live="polite" data-testid="visitors-now" data-state={now.state}>
      {count !== null && (
        <span className="now-badge">
          <span className={count > 0 ? 'live-dot' : 'live-dot idle'} aria-hidden="true" />
          {formatCountOf(count, 'visitor', 'visitors')} now
        </span>
      )}
    </p>
  );
}
