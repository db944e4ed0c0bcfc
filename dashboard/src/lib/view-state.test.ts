import { describe, expect, it } from 'vitest';
import { filterList, filtersKey, parseViewState, viewSearch, withFilter, withoutFilter } from './view-state.js';

describe('the view state in the query', () => {
  it('round-trips range, filters and the experiment choice, in one canonical order', () => {
    const state = parseViewState('?os=iOS&step=page%3A%2F&range=30d&page=%2Fpricing&experiment=cta-copy&step=event%3Asignup&conversion=signup');
    expect(state).toEqual({
      range: '30d',
      filters: { page: '/pricing', os: 'iOS' },
      steps: [
        { kind: 'page', value: '/' },
        { kind: 'event', value: 'signup' },
      ],
      experiment: 'cta-copy',
      conversion: 'signup',
    });
    expect(viewSearch(state)).toBe('?range=30d&page=%2Fpricing&os=iOS&step=page%3A%2F&step=event%3Asignup&experiment=cta-copy&conversion=signup');
    expect(parseViewState(viewSearch(state))).toEqual(state);
  });

  it('is the default view for an empty query, and writes none for it', () => {
    const state = parseViewState('');
    expect(state).toEqual({ range: '7d', filters: {}, steps: [], experiment: null, conversion: null });
    expect(viewSearch(state)).toBe('');
  });

  it('ignores what the endpoints would refuse: unknown names and ranges, empty and overlong values', () => {
    const state = parseViewState(`?range=1y&colour=red&page=&os=${'x'.repeat(513)}&browser=Firefox&step=nope&step=event%3A`);
    expect(state.range).toBe('7d');
    expect(state.filters).toEqual({ browser: 'Firefox' });
    expect(state.steps).toEqual([]);
    const many = parseViewState(`?${Array.from({ length: 12 }, (_, i) => `step=event%3Ae${i}`).join('&')}`);
    expect(many.steps).toHaveLength(10);
  });

  it('adds, replaces and removes one filter at a time', () => {
    let state = parseViewState('');
    state = withFilter(state, 'channel', 'social');
    state = withFilter(state, 'page', '/a');
    state = withFilter(state, 'channel', 'email');
    expect(filterList(state.filters)).toEqual([
      { dimension: 'page', value: '/a' },
      { dimension: 'channel', value: 'email' },
    ]);
    expect(filtersKey(state.filters)).toBe('page=/a\nchannel=email');
    expect(withoutFilter(state, 'page').filters).toEqual({ channel: 'email' });
    expect(state.filters.page).toBe('/a');
  });
});
