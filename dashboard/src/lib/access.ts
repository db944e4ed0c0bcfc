/**
 * What the signed-in viewer of the dashboard may open (docs/decisions.md, "Team access"): a shared
 * link the reports only; a viewer (or a read key) also events, sessions and replays; an admin also
 * the admin page (shared links, erasure, export). The server refuses the same; hiding is for the eye.
 */
import type { Route } from './route.js';

/** Who looks at the dashboard. */
export type Access = 'link' | 'viewer' | 'admin';

const REPORT_PAGES: ReadonlySet<Route['page']> = new Set(['overview', 'errors', 'vitals', 'heatmaps', 'funnels', 'experiments']);

/** True when `access` may open `page`. */
export function mayOpen(access: Access, page: Route['page']): boolean {
  if (access === 'link') return REPORT_PAGES.has(page);
  if (page === 'admin') return access === 'admin';
  return true;
}
