import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { StrictMode, useEffect } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import type { AnalyticsConfig } from '../config.js';
import { endOfTask, pageObserversReady, receivedEvents } from '../../test-support/client/facade-fakes.js';
import { ServiceAnalyticsProvider, TrackClick, TrackForm, TrackView, useAnalytics, useServiceAnalytics, useSessionTracking } from './index.js';

function setup(extra: Partial<AnalyticsConfig> = {}) {
  const server = createFakeFetch();
  const config: AnalyticsConfig = {
    apiKey: 'key_1',
    projectId: 'proj_react',
    endpoint: 'https://analytics.test',
    enableAutoPageTracking: false,
    batchSize: 1000,
    ...extra,
    transport: { strategies: ['in-process'], coreDeps: { fetch: server.fetch, compress: undefined } },
  };
  return { server, config };
}

/** Flushes the client of the nearest provider and answers what the fake server received. */
function Flusher({ onReady }: { onReady: (flush: () => Promise<void>) => void }) {
  const analytics = useAnalytics();
  useEffect(() => onReady(() => analytics.flush()), [analytics, onReady]);
  return null;
}

async function renderAndFlush(ui: React.ReactNode, config: AnalyticsConfig) {
  let flush: (() => Promise<void>) | undefined;
  const view = render(
    <ServiceAnalyticsProvider config={config}>
      {ui}
      <Flusher onReady={(f) => (flush = f)} />
    </ServiceAnalyticsProvider>,
  );
  await act(endOfTask);
  return { view, flush: async () => act(async () => flush?.()) };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('ServiceAnalyticsProvider', () => {
  it('starts one client under StrictMode and sends one page view', async () => {
    const { server, config } = setup({ enableAutoPageTracking: true });
    const { flush } = await renderAndFlush(<StrictMode><p>hi</p></StrictMode>, config);
    await new Promise((r) => setTimeout(r, 20));
    await flush();
    const pageViews = receivedEvents(server).filter((e) => e.event_type === 'page_view');
    expect(pageViews).toHaveLength(1);
  });

  it('does not shut the client down in the StrictMode rehearsal unmount', async () => {
    const { server, config } = setup();
    let client: ReturnType<typeof useAnalytics> | undefined;
    function Grab() {
      client = useAnalytics();
      return null;
    }
    render(
      <StrictMode>
        <ServiceAnalyticsProvider config={config}>
          <Grab />
        </ServiceAnalyticsProvider>
      </StrictMode>,
    );
    await act(endOfTask);
    await new Promise((r) => setTimeout(r, 20));
    client?.track('still_alive');
    await act(async () => client?.flush());
    expect(receivedEvents(server).map((e) => e.event_type)).toContain('still_alive');
  });

  it('replays calls made by children before the client exists', async () => {
    const { server, config } = setup();
    function EarlyTracker() {
      const analytics = useAnalytics();
      useEffect(() => analytics.track('child_mounted', { early: true }), [analytics]);
      return null;
    }
    const { flush } = await renderAndFlush(<EarlyTracker />, config);
    await flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toContain('child_mounted');
  });

  it('shows the children once the client is ready (loading is covered by the SSR test)', async () => {
    const { config } = setup();
    render(
      <ServiceAnalyticsProvider config={config} loading={<span>loading…</span>}>
        <span>content</span>
      </ServiceAnalyticsProvider>,
    );
    // Effects have run by the time render() returns; the first paint showed loading.
    expect(screen.getByText('content')).toBeTruthy();
    expect(screen.queryByText('loading…')).toBeNull();
  });

  it('shuts the client down on unmount: later calls send nothing', async () => {
    const { server, config } = setup();
    let client: ReturnType<typeof useAnalytics> | undefined;
    function Grab() {
      client = useAnalytics();
      return null;
    }
    const { unmount } = render(
      <ServiceAnalyticsProvider config={config}>
        <Grab />
      </ServiceAnalyticsProvider>,
    );
    await act(endOfTask);
    unmount();
    await new Promise((r) => setTimeout(r, 20));
    client?.track('after_unmount');
    await new Promise((r) => setTimeout(r, 20));
    expect(receivedEvents(server).map((e) => e.event_type)).not.toContain('after_unmount');
  });
});

describe('useAnalytics / useServiceAnalytics', () => {
  it.each([
    ['useAnalytics', useAnalytics],
    ['useServiceAnalytics', useServiceAnalytics],
  ])('%s throws a sentence naming the fix outside a provider', (name, hook) => {
    function Lonely() {
      hook();
      return null;
    }
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(() => render(<Lonely />)).toThrow(`${name}() was called outside <ServiceAnalyticsProvider>. Wrap your app`);
    spy.mockRestore();
  });

  it('returns every operation of the client', async () => {
    const { config } = setup();
    let ops: ReturnType<typeof useAnalytics> | undefined;
    function Grab() {
      ops = useServiceAnalytics();
      return null;
    }
    render(
      <ServiceAnalyticsProvider config={config}>
        <Grab />
      </ServiceAnalyticsProvider>,
    );
    await act(endOfTask);
    for (const name of ['track', 'page', 'identify', 'alias', 'reset', 'flush', 'getSessionId', 'startFunnel', 'trackSubscriptionStarted', 'startRecording'] as const) {
      expect(typeof ops?.[name]).toBe('function');
    }
    expect(ops?.config.projectId).toBe('proj_react');
  });
});

describe('TrackClick', () => {
  it('tracks each click and keeps the child’s own onClick', async () => {
    const { server, config } = setup();
    const own = vi.fn();
    const { flush } = await renderAndFlush(
      <TrackClick event="cta_clicked" properties={{ position: 'hero' }}>
        <button type="button" onClick={own}>Buy</button>
      </TrackClick>,
      config,
    );
    fireEvent.click(screen.getByText('Buy'));
    fireEvent.click(screen.getByText('Buy'));
    await flush();
    const clicks = receivedEvents(server).filter((e) => e.event_type === 'cta_clicked');
    expect(clicks).toHaveLength(2);
    expect(clicks[0]?.properties).toMatchObject({ position: 'hero' });
    expect(own).toHaveBeenCalledTimes(2);
  });
});

describe('TrackForm', () => {
  it('tracks field changes by name and kind, never the value, and the submit', async () => {
    const { server, config } = setup();
    const { flush } = await renderAndFlush(
      <TrackForm formName="signup" trackFieldChanges onSubmit={(e) => e.preventDefault()}>
        <input name="email" type="email" aria-label="email" />
        <input name="password" type="password" aria-label="password" />
        <button type="submit">Send</button>
      </TrackForm>,
      config,
    );
    fireEvent.change(screen.getByLabelText('email'), { target: { value: 'secret-sentinel@example.com' } });
    fireEvent.change(screen.getByLabelText('password'), { target: { value: 'hunter2-sentinel' } });
    fireEvent.submit(screen.getByText('Send').closest('form') as HTMLFormElement);
    await flush();
    const events = receivedEvents(server).filter((e) => String(e.event_type).startsWith('form_'));
    expect(events.map((e) => e.event_type)).toEqual(['form_field_change', 'form_field_change', 'form_submit']);
    expect(events[0]?.properties).toMatchObject({ form: 'signup', field: 'email', field_type: 'email' });
    expect(events[2]?.properties).toMatchObject({ form: 'signup', field_count: 3, changed_fields: 2 });
    expect(JSON.stringify(server.requests)).not.toContain('sentinel');
  });

  it('sends nothing for field changes unless asked, and no submit when trackSubmit is false', async () => {
    const { server, config } = setup();
    const { flush } = await renderAndFlush(
      <TrackForm formName="quiet" trackSubmit={false} onSubmit={(e) => e.preventDefault()}>
        <input name="q" aria-label="q" />
      </TrackForm>,
      config,
    );
    fireEvent.change(screen.getByLabelText('q'), { target: { value: 'x' } });
    fireEvent.submit(screen.getByLabelText('q').closest('form') as HTMLFormElement);
    await flush();
    expect(receivedEvents(server).filter((e) => String(e.event_type).startsWith('form_'))).toEqual([]);
  });
  it('forwards the app’s own onChange and onSubmit, with the event, as well as tracking', async () => {
    const { server, config } = setup();
    const onChange = vi.fn<(event: React.ChangeEvent<HTMLFormElement>) => void>();
    const onSubmit = vi.fn((event: React.SubmitEvent<HTMLFormElement>) => event.preventDefault());
    const { flush } = await renderAndFlush(
      <TrackForm formName="own" trackFieldChanges onChange={onChange} onSubmit={onSubmit}>
        <input name="city" aria-label="city" />
      </TrackForm>,
      config,
    );
    const input = screen.getByLabelText('city');
    const form = input.closest('form') as HTMLFormElement;
    fireEvent.change(input, { target: { value: 'Oslo' } });
    fireEvent.submit(form);
    expect(onChange).toHaveBeenCalledTimes(1);
    expect(onChange.mock.calls[0]![0]).toMatchObject({ type: 'change', target: input });
    expect(onSubmit).toHaveBeenCalledTimes(1);
    expect(onSubmit.mock.calls[0]![0]).toMatchObject({ type: 'submit', target: form });
    expect(onSubmit.mock.calls[0]![0].isDefaultPrevented()).toBe(true);
    await flush();
    const events = receivedEvents(server).filter((e) => String(e.event_type).startsWith('form_'));
    expect(events.map((e) => [e.event_type, e.properties])).toEqual([
      ['form_field_change', expect.objectContaining({ form: 'own', field: 'city', change_count: 1 })],
      ['form_submit', expect.objectContaining({ form: 'own', field_count: 1, changed_fields: 1 })],
    ]);
  });
});

describe('TrackView', () => {
  class FakeIntersectionObserver {
    static instances: FakeIntersectionObserver[] = [];
    readonly targets: Element[] = [];
    disconnected = false;
    constructor(
      readonly callback: IntersectionObserverCallback,
      readonly options: IntersectionObserverInit,
    ) {
      FakeIntersectionObserver.instances.push(this);
    }
    observe(target: Element) {
      this.targets.push(target);
    }
    disconnect() {
      this.disconnected = true;
    }
    /** Reports the target `ratio` visible. */
    show(ratio: number) {
      const entry = { isIntersecting: ratio > 0, intersectionRatio: ratio, target: this.targets[0] } as IntersectionObserverEntry;
      this.callback([entry], this as unknown as IntersectionObserver);
    }
  }

  /** Events named `name` the fake server holds after a flush. */
  async function sent(server: ReturnType<typeof setup>['server'], flush: () => Promise<void>, name: string) {
    await flush();
    return receivedEvents(server).filter((e) => e.event_type === name);
  }

  it('tracks once per mount after the child stayed visible above the threshold for the delay', async () => {
    vi.stubGlobal('IntersectionObserver', FakeIntersectionObserver);
    FakeIntersectionObserver.instances = [];
    const { server, config } = setup();
    const { flush } = await renderAndFlush(
      <TrackView event="pricing_seen" properties={{ plan: 'pro' }} threshold={0.6} delay={50}>
        <section>Pricing</section>
      </TrackView>,
      config,
    );
    const observer = FakeIntersectionObserver.instances.at(-1) as FakeIntersectionObserver;
    expect(observer.options.threshold).toEqual([0.6]);
    // Timers faked from here on, so that "before the delay" and "when it passed" are exact; the
    // client delivers on a flush, which needs no timer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      observer.show(0.3); // below the threshold: never a view
      vi.advanceTimersByTime(100);
      // A glimpse: visible, then hidden 20 ms later, before the 50 ms delay.
      observer.show(0.7);
      vi.advanceTimersByTime(20);
      observer.show(0);
      vi.advanceTimersByTime(30); // the moment the delay would have passed since the glimpse began
      expect(await sent(server, flush, 'pricing_seen')).toEqual([]);
      vi.advanceTimersByTime(100);
      expect(await sent(server, flush, 'pricing_seen')).toEqual([]);
      expect(observer.disconnected).toBe(false);

      // A full view: visible for the whole delay, counted when the delay has passed, not before.
      observer.show(0.9);
      vi.advanceTimersByTime(49);
      expect(await sent(server, flush, 'pricing_seen')).toEqual([]);
      vi.advanceTimersByTime(1);
      const seen = await sent(server, flush, 'pricing_seen');
      expect(seen).toHaveLength(1);
      expect(seen[0]?.properties).toMatchObject({ plan: 'pro' });
      expect(observer.disconnected).toBe(true);

      // Once per mount: later views (were the observer still to report them) add nothing.
      observer.show(0);
      observer.show(0.9);
      vi.advanceTimersByTime(200);
      expect(await sent(server, flush, 'pricing_seen')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('useSessionTracking', () => {
  it('gives the live session and re-renders when clicks change', async () => {
    const { config } = setup();
    const renders: Array<{ sessionId: string; clicks: number; isActive: boolean }> = [];
    function Session() {
      const s = useSessionTracking();
      renders.push({ sessionId: s.sessionId, clicks: s.clicks, isActive: s.isActive });
      return <span data-testid="clicks">{s.clicks}</span>;
    }
    render(
      <ServiceAnalyticsProvider config={config}>
        <Session />
      </ServiceAnalyticsProvider>,
    );
    await act(pageObserversReady);
    await act(async () => {
      fireEvent.click(document.body);
      fireEvent.click(document.body);
      await new Promise((r) => setTimeout(r, 20));
    });
    const last = renders.at(-1);
    expect(last?.sessionId).not.toBe('');
    expect(last?.isActive).toBe(true);
    expect(last?.clicks).toBe(2);
    expect(screen.getByTestId('clicks').textContent).toBe('2');
  });

  it('re-renders from the subscription alone: no timer runs, so nothing polls', async () => {
    const { config } = setup();
    // Every timer is fake and none is advanced before the checks: a poll could never run.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    try {
      let analytics: ReturnType<typeof useAnalytics> | undefined;
      let renders = 0;
      function Session() {
        analytics = useAnalytics();
        const s = useSessionTracking();
        renders++;
        return <span data-testid="events">{`${s.pageViews}/${s.sessionData.events.length}`}</span>;
      }
      const { unmount } = render(
        <ServiceAnalyticsProvider config={config}>
          <Session />
        </ServiceAnalyticsProvider>,
      );
      await act(async () => {});
      expect(screen.getByTestId('events').textContent).toBe('0/0');
      // Neither call fires a DOM event: only the client's own notification can re-render.
      await act(async () => analytics?.page());
      expect(screen.getByTestId('events').textContent).toBe('1/1');
      await act(async () => analytics?.track('no_dom_event'));
      expect(screen.getByTestId('events').textContent).toBe('1/2');
      // Nothing changed: no render.
      const settled = renders;
      await act(async () => {});
      expect(renders).toBe(settled);
      unmount();
      vi.advanceTimersByTime(0); // The provider's shutdown of the client.
    } finally {
      vi.useRealTimers();
    }
  });

  it('ticks duration once a second while mounted, from the session start', async () => {
    const { config } = setup();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'], now: 1_700_000_000_000 });
    try {
      const durations: number[] = [];
      function Session() {
        const s = useSessionTracking();
        durations.push(s.duration);
        return <span data-testid="duration">{s.duration}</span>;
      }
      const { unmount } = render(
        <ServiceAnalyticsProvider config={config}>
          <Session />
        </ServiceAnalyticsProvider>,
      );
      await act(async () => {});
      expect(screen.getByTestId('duration').textContent).toBe('0');
      const before = durations.length;
      act(() => vi.advanceTimersByTime(999));
      expect(durations.length).toBe(before);
      act(() => vi.advanceTimersByTime(1));
      expect(screen.getByTestId('duration').textContent).toBe('1000');
      act(() => vi.advanceTimersByTime(2000));
      expect(screen.getByTestId('duration').textContent).toBe('3000');
      unmount();
      vi.advanceTimersByTime(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
