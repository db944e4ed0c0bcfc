import { act, cleanup, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiClient, Params } from '../api/api-client.js';
import { ApiContext } from '../lib/api-context.js';
import { NOW_REFRESH_MS, VisitorsNow } from './visitors-now.js';

/** A client that answers the live report with the next of `visitors`, and records what it was asked. */
function fakeApi(visitors: number[]): { api: ApiClient; asked: Array<{ path: string; params: Params | undefined }> } {
  const asked: Array<{ path: string; params: Params | undefined }> = [];
  const api: ApiClient = {
    get<T>(path: string, params?: Params): Promise<T> {
      asked.push({ path, params });
      const n = visitors[Math.min(asked.length, visitors.length) - 1] ?? 0;
      return Promise.resolve({ minutes: 5, totals: { visitors: n, events: 0, page_views: 0, sessions: 0 }, points: [] } as T);
    },
    send: () => Promise.reject(new Error('not used')),
    download: () => Promise.reject(new Error('not used')),
  };
  return { api, asked };
}

let visibility: DocumentVisibilityState = 'visible';
const setVisibility = (state: DocumentVisibilityState): void => {
  visibility = state;
  document.dispatchEvent(new Event('visibilitychange'));
};

beforeEach(() => {
  vi.useFakeTimers();
  visibility = 'visible';
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => visibility });
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

/** Lets the answers of the fake client settle and React render them. */
const settle = () => act(async () => vi.advanceTimersByTimeAsync(0));

describe('VisitorsNow', () => {
  it("shows the live report's visitors of the last 5 minutes, for the whole site, in a polite live region", async () => {
    const { api, asked } = fakeApi([3]);
    render(createElement(ApiContext.Provider, { value: api }, createElement(VisitorsNow)));
    const badge = screen.getByTestId('visitors-now');
    expect(badge.getAttribute('aria-live')).toBe('polite');
    await settle();
    expect(badge.textContent).toBe('3 visitors now');
    expect(asked).toEqual([{ path: 'reports/live', params: { minutes: 5 } }]);
  });

  it('asks again every 30 s while the tab is visible, not while it is hidden, and at once when it shows again', async () => {
    const { api, asked } = fakeApi([2, 1, 5]);
    render(createElement(ApiContext.Provider, { value: api }, createElement(VisitorsNow)));
    await settle();
    await act(async () => vi.advanceTimersByTimeAsync(NOW_REFRESH_MS - 1));
    expect(asked).toHaveLength(1);
    await act(async () => vi.advanceTimersByTimeAsync(1));
    expect(asked).toHaveLength(2);
    expect(screen.getByTestId('visitors-now').textContent).toBe('1 visitor now');

    await act(async () => setVisibility('hidden'));
    await act(async () => vi.advanceTimersByTimeAsync(5 * NOW_REFRESH_MS));
    expect(asked).toHaveLength(2);
    await act(async () => setVisibility('visible'));
    await settle();
    expect(asked).toHaveLength(3);
    expect(screen.getByTestId('visitors-now').textContent).toBe('5 visitors now');
  });
});
