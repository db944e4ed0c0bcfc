// @vitest-environment node
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServiceAnalyticsProvider, TrackClick, TrackForm, TrackView, useAnalytics, useSessionTracking } from './index.js';

function Everything() {
  const analytics = useAnalytics();
  const session = useSessionTracking();
  // Render-phase reads must be safe on the server too.
  analytics.getSessionId();
  analytics.getQueueSize();
  return (
    <main>
      <p>session:{session.sessionId}|clicks:{session.clicks}</p>
      <TrackView event="seen">
        <h1>Hello</h1>
      </TrackView>
      <TrackClick event="clicked">
        <button type="button">Buy</button>
      </TrackClick>
      <TrackForm formName="f" trackFieldChanges>
        <input name="email" />
      </TrackForm>
    </main>
  );
}

describe('server rendering (no window)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('renders the provider and every component without touching a browser global or sending anything', () => {
    expect(typeof window).toBe('undefined');
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const html = renderToString(
      <ServiceAnalyticsProvider config={{ apiKey: 'k', projectId: 'p', enableSessionRecording: true, enableErrorTracking: true }}>
        <Everything />
      </ServiceAnalyticsProvider>,
    );
    expect(html).toContain('<h1>Hello</h1>');
    expect(html).toMatch(/session:(<!-- -->)?\|clicks:(<!-- -->)?0/);
    expect(html).toContain('<form');
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('renders useSessionTracking() as the empty session, subscribing to nothing and starting no timer', () => {
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    function Session() {
      const s = useSessionTracking();
      return <p>{`${s.sessionId}|${s.isActive}|${s.duration}|${s.pageViews}|${s.clicks}|${s.scrollDepth}|${s.sessionData.events.length}`}</p>;
    }
    const html = renderToString(
      <ServiceAnalyticsProvider config={{ apiKey: 'k', projectId: 'p' }}>
        <Session />
      </ServiceAnalyticsProvider>,
    );
    expect(html).toContain('<p>|false|0|0|0|0|0</p>');
    expect(setIntervalSpy).not.toHaveBeenCalled();
    expect(setTimeoutSpy).not.toHaveBeenCalled();
  });

  it('renders loading, not the children, when a loading node is given', () => {
    const html = renderToString(
      <ServiceAnalyticsProvider config={{ apiKey: 'k', projectId: 'p' }} loading={<span>loading…</span>}>
        <span>content</span>
      </ServiceAnalyticsProvider>,
    );
    expect(html).toContain('loading…');
    expect(html).not.toContain('content');
  });

  it('imports with no side effect', async () => {
    const before = Object.keys(globalThis).sort();
    await import('./index.js');
    expect(Object.keys(globalThis).sort()).toEqual(before);
  });
});

describe('the built React entry', () => {
  it('starts with the "use client" directive and bundles no React of its own', async () => {
    const { buildClient } = await import('../../scripts/build-client.mjs');
    const built = await buildClient();
    const entry = built.files.get('react.js') ?? '';
    expect(entry.startsWith('"use client";') || entry.startsWith("'use client';")).toBe(true);
    expect(entry).toMatch(/from"react"/);
    expect(entry).not.toContain('react.production');
  }, 60_000);
});
