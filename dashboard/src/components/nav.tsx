/** The dashboard's navigation and sign-out. */
import type { ReactNode } from 'react';
import { type Route, routeHref } from '../lib/route.js';

const LINKS: ReadonlyArray<{ route: Route; label: string }> = [
  { route: { page: 'overview' }, label: 'Overview' },
  { route: { page: 'live' }, label: 'Live' },
  { route: { page: 'errors' }, label: 'Errors' },
  { route: { page: 'vitals' }, label: 'Web vitals' },
  { route: { page: 'funnels' }, label: 'Funnels' },
  { route: { page: 'sessions' }, label: 'Sessions' },
];

/** The bar at the top. */
export function Nav({ current, projectId, onSignOut }: { current: Route; projectId: string; onSignOut: () => void }): ReactNode {
  const active = current.page === 'replay' ? 'sessions' : current.page;
  return (
    <header className="topbar">
      <span className="brand">service-analytics</span>
      <nav aria-label="Dashboard">
        {LINKS.map((l) => (
          <a key={l.label} href={routeHref(l.route)} aria-current={l.route.page === active ? 'page' : undefined}>
            {l.label}
          </a>
        ))}
      </nav>
      <span className="project muted" title="Project">
        {projectId}
      </span>
      <button type="button" className="link" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}
