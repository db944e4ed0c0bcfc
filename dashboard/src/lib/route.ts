/**
 * The dashboard's routes live in the URL's hash (`#/replay/ID`): the server serves one
 * `index.html` under any mount path and needs no fallback. No credential is ever part of a route.
 */

/** A page of the dashboard. */
export type Route =
  | { page: 'overview' }
  | { page: 'live' }
  | { page: 'errors' }
  | { page: 'vitals' }
  | { page: 'heatmaps' }
  | { page: 'funnels' }
  | { page: 'experiments' }
  | { page: 'sessions' }
  | { page: 'admin' }
  | { page: 'replay'; sessionId: string };

const SIMPLE = ['overview', 'live', 'errors', 'vitals', 'heatmaps', 'funnels', 'experiments', 'sessions', 'admin'] as const;

/** The route of a hash; anything unknown is the overview. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, '');
  const [head, ...rest] = path.split('/');
  if (head === 'replay' && rest.length > 0 && rest[0] !== '') {
    return { page: 'replay', sessionId: decodeURIComponent(rest.join('/')) };
  }
  const simple = SIMPLE.find((p) => p === head);
  return simple === undefined ? { page: 'overview' } : { page: simple };
}

/** The hash of a route, e.g. `#/replay/0193…`. */
export function routeHref(route: Route): string {
  return route.page === 'replay' ? `#/replay/${encodeURIComponent(route.sessionId)}` : `#/${route.page}`;
}
