import { describe, expect, it } from 'vitest';
import { apiBaseFromPath } from './api-base.js';
import { parseRoute, routeHref } from './route.js';

describe('routes', () => {
  it('round-trips every page through the hash', () => {
    expect(parseRoute('')).toEqual({ page: 'overview' });
    expect(parseRoute('#/live')).toEqual({ page: 'live' });
    expect(parseRoute('#/nonsense')).toEqual({ page: 'overview' });
    const replay = { page: 'replay', sessionId: 'a/b c' } as const;
    expect(parseRoute(routeHref(replay))).toEqual(replay);
  });
  it('finds the API base path before /dashboard', () => {
    expect(apiBaseFromPath('/dashboard/')).toBe('');
    expect(apiBaseFromPath('/stats/dashboard/index.html')).toBe('/stats');
    expect(apiBaseFromPath('/')).toBe('');
  });
});
