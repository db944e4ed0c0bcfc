import { act } from '@testing-library/react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import type { AnalyticsConfig } from '../config.js';
import { endOfTask } from '../../test-support/client/facade-fakes.js';
import { ServiceAnalyticsProvider, TrackClick, TrackView, useSessionTracking } from './index.js';

function App() {
  const session = useSessionTracking();
  return (
    <main>
      <p>clicks:{session.clicks}</p>
      <TrackView event="seen">
        <h1>Hello</h1>
      </TrackView>
      <TrackClick event="clicked">
        <button type="button">Buy</button>
      </TrackClick>
    </main>
  );
}

describe('hydration', () => {
  it('hydrates server-rendered markup without a mismatch', async () => {
    const server = createFakeFetch();
    const config: AnalyticsConfig = {
      apiKey: 'k',
      projectId: 'p',
      endpoint: 'https://analytics.test',
      transport: { strategies: ['in-process'], coreDeps: { fetch: server.fetch, compress: undefined } },
    };
    const html = renderToString(
      <ServiceAnalyticsProvider config={config}>
        <App />
      </ServiceAnalyticsProvider>,
    );
    const container = document.createElement('div');
    container.innerHTML = html;
    document.body.append(container);
    const recoverable = vi.fn();
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
    let root: ReturnType<typeof hydrateRoot> | undefined;
    await act(async () => {
      root = hydrateRoot(
        container,
        <ServiceAnalyticsProvider config={config}>
          <App />
        </ServiceAnalyticsProvider>,
        { onRecoverableError: recoverable },
      );
    });
    await act(endOfTask);
    expect(recoverable).not.toHaveBeenCalled();
    expect(consoleError).not.toHaveBeenCalled();
    expect(container.querySelector('h1')?.textContent).toBe('Hello');
    act(() => root?.unmount());
    consoleError.mockRestore();
  });
});
