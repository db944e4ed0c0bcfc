import { act, cleanup, render } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Resource } from '../lib/use-resource.js';
import { Panel, SLOW_AFTER_MS } from './panel.js';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const panel = (resource: Resource<number>) => createElement(Panel<number>, { title: 'Top pages', resource, children: (n: number) => `${n} pages` });

describe('<Panel>', () => {
  it('says why once loading lasts, and stops saying it once the answer is there', () => {
    vi.useFakeTimers();
    const view = render(panel({ state: 'loading' }));
    expect(view.container.textContent).toContain('Loading…');
    act(() => vi.advanceTimersByTime(SLOW_AFTER_MS - 1));
    expect(view.container.textContent).toContain('Loading…');
    act(() => vi.advanceTimersByTime(1));
    expect(view.container.textContent).toContain('the server is computing this range');

    view.rerender(panel({ state: 'ready', value: 3, refreshing: false }));
    expect(view.container.textContent).toContain('3 pages');
    // Loading again (another range): plain at first, as before.
    view.rerender(panel({ state: 'loading' }));
    expect(view.container.textContent).toContain('Loading…');
    expect(view.container.textContent).not.toContain('computing');
  });

  it('counts again from a new load that replaces a slow one', () => {
    vi.useFakeTimers();
    const view = render(panel({ state: 'loading' }));
    act(() => vi.advanceTimersByTime(SLOW_AFTER_MS));
    expect(view.container.textContent).toContain('computing');
    view.rerender(panel({ state: 'loading' }));
    expect(view.container.textContent).toContain('Loading…');
    act(() => vi.advanceTimersByTime(SLOW_AFTER_MS));
    expect(view.container.textContent).toContain('computing');
  });
});
