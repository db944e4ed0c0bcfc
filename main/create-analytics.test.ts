import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Analytics } from './analytics.js';
import { DEFAULTS } from './config.js';
import { createAnalytics } from './create-analytics.js';
import { isAnalyticsError } from './errors.js';
import { endOfTask, inProcessClient, lazyModulesReady, pageObserversReady, receivedEvents } from '../test-support/client/facade-fakes.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const clients: Analytics[] = [];

function client(...args: Parameters<typeof inProcessClient>) {
  const made = inProcessClient(...args);
  clients.push(made.analytics);
  return made;
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('createAnalytics(config).config', () => {
  it('applies every documented default (README, "Using the client library"; docs/decisions.md, "Session rules (`sessionTimeout`)")', () => {
    const { analytics } = client({ enableAutoPageTracking: undefined, endpoint: undefined });
    expect(analytics.config).toMatchObject({
      apiKey: 'key_1',
      projectId: 'proj_1',
      endpoint: window.location.origin,
      debug: false,
      sessionTimeout: 1_800_000,
      batchSize: 20,
      flushInterval: 10_000,
      maxQueueSize: 1000,
      retryAttempts: 3,
      retryDelay: 1000,
      enableAutoPageTracking: true,
      enablePerformanceTracking: false,
      enableHeatmapTracking: false,
      enableSessionRecording: false,
      enableErrorTracking: false,
      enableABTesting: false,
      persistQueue: false,
      compress: true,
    });
    expect(analytics.config.workerUrl).toBeUndefined();
    expect(DEFAULTS.sessionTimeout).toBe(30 * 60 * 1000);
  });

  it('makes a relative endpoint absolute and drops a trailing slash', () => {
    expect(client({ endpoint: '/collect/' }).analytics.config.endpoint).toBe(`${window.location.origin}/collect`);
    expect(client({ endpoint: 'https://a.example/' }).analytics.config.endpoint).toBe('https://a.example');
  });

  it('falls back to the default for a numeric option that is not a usable number', () => {
    const { analytics } = client({ batchSize: Number.NaN, retryDelay: -5, sessionTimeout: '60' as unknown as number });
    expect(analytics.config).toMatchObject({ batchSize: 20, retryDelay: 1000, sessionTimeout: 1_800_000 });
  });
});

describe('event shapes on the wire', () => {
  it('track(name, properties) sends the name as event_type with the properties and context', async () => {
    const { analytics, server } = client();
    analytics.track('signup_clicked', { plan: 'pro', seats: 3, trial: true, note: null });
    await analytics.flush();
    const [event] = receivedEvents(server);
    expect(event).toMatchObject({
      event_type: 'signup_clicked',
      session_id: analytics.getSessionId(),
      user_agent: navigator.userAgent,
      properties: { plan: 'pro', seats: 3, trial: true, note: null, anonymous_id: analytics.getAnonymousId() },
    });
    expect(event!.event_id).toMatch(UUID_V7);
    expect(event!.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(event!.user_id).toBeUndefined();
    const props = event!.properties as Record<string, string>;
    expect(JSON.parse(props.page!)).toMatchObject({ url: window.location.href, path: window.location.pathname });
    expect(JSON.parse(props.screen!)).toEqual({ width: screen.width, height: screen.height });
  });

  it('page(properties) sends page_view with the page JSON-encoded, given properties winning', async () => {
    const { analytics, server } = client();
    document.title = 'Pricing';
    analytics.page({ title: 'Custom title' });
    await analytics.flush();
    const [event] = receivedEvents(server);
    expect(event!.event_type).toBe('page_view');
    const props = event!.properties as Record<string, string>;
    expect(JSON.parse(props.page!)).toMatchObject({ title: 'Custom title', url: window.location.href, search: '' });
    expect(JSON.parse(props.screen!)).toHaveProperty('width');
  });

  it('identify(userId, traits) sends user_identify and later events carry the user', async () => {
    const { analytics, server } = client();
    // Once the module that validates subscriptions has loaded, identify() sends at once (before it,
    // see business-operations.test.ts).
    await lazyModulesReady();
    analytics.identify('user_42', { email: 'a@b.c', plan: 'pro', subscription: { status: 'active', mrr: 900 } });
    analytics.track('after');
    await analytics.flush();
    const [identify, after] = receivedEvents(server);
    expect(identify).toMatchObject({ event_type: 'user_identify', user_id: 'user_42', properties: { email: 'a@b.c', plan: 'pro' } });
    expect(JSON.parse((identify!.properties as Record<string, string>).subscription!)).toEqual({ status: 'active', mrr: 900 });
    expect(after!.user_id).toBe('user_42');
    expect(analytics.getUserId()).toBe('user_42');
    expect(analytics.getSubscriptionData()).toEqual({ status: 'active', mrr: 900 });
  });

  it('alias(newId, previousId?) sends user_alias with previous_id and continues as the new id', async () => {
    const { analytics, server } = client();
    const anonymous = analytics.getAnonymousId();
    analytics.alias('user_new');
    analytics.alias('user_newer', 'explicit_old');
    await analytics.flush();
    const [first, second] = receivedEvents(server);
    expect(first).toMatchObject({ event_type: 'user_alias', user_id: 'user_new', properties: { previous_id: anonymous } });
    expect(second).toMatchObject({ event_type: 'user_alias', user_id: 'user_newer', properties: { previous_id: 'explicit_old' } });
    expect(analytics.getUserId()).toBe('user_newer');
  });

  it('helper operations send the event names of docs/decisions.md, "Wire mapping of every client call"', async () => {
    const { analytics, server } = client();
    const err = new Error('kaput');
    analytics.trackCustomError(err, { area: 'checkout' });
    analytics.trackCustomError('plain message');
    analytics.trackPerformance({ loadTime: 1200, firstContentfulPaint: 300 });
    analytics.trackFeatureUsage('export_csv', { rows: 10 });
    analytics.startFunnel('checkout', { source: 'cart' });
    analytics.advanceFunnel('checkout', 'shipping');
    analytics.trackFunnelStep('checkout', 'payment', 5);
    analytics.completeFunnel('checkout');
    analytics.startFunnel('onboarding');
    analytics.abandonFunnel('onboarding', 'closed tab');
    const sub = { status: 'active' as const, plan_id: 'pro', mrr: 4900 };
    analytics.trackSubscription('custom_subscription_event', sub);
    analytics.trackSubscriptionStarted(sub);
    analytics.trackSubscriptionPaused({ ...sub, status: 'paused' });
    analytics.trackSubscriptionReactivated(sub);
    analytics.trackSubscriptionUpgraded({ ...sub, previous_plan: 'basic' });
    analytics.trackSubscriptionDowngraded({ ...sub, previous_plan: 'team' });
    analytics.trackSubscriptionCanceled({ ...sub, status: 'canceled', cancellation_reason: 'price' });
    analytics.trackTrialStarted({ status: 'trialing' });
    analytics.trackTrialConverted(sub);
    analytics.trackTrialExpired({ status: 'incomplete_expired' });
    analytics.trackPaymentFailed({ amount: 4900, currency: 'eur', payment_status: 'failed', failure_reason: 'card_declined' });
    analytics.trackPaymentSucceeded({ amount: 4900, currency: 'eur', payment_status: 'succeeded' });
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events.map((e) => e.event_type)).toEqual([
      'error',
      'error',
      'performance',
      'feature_used',
      'funnel_started',
      'funnel_step',
      'funnel_step',
      'funnel_completed',
      'funnel_started',
      'funnel_abandoned',
      'custom_subscription_event',
      'subscription_started',
      'subscription_paused',
      'subscription_reactivated',
      'subscription_upgraded',
      'subscription_downgraded',
      'subscription_canceled',
      'trial_started',
      'trial_converted',
      'trial_expired',
      'payment_failed',
      'payment_succeeded',
    ]);
    const props = events.map((e) => e.properties as Record<string, unknown>);
    expect(props[0]).toMatchObject({ message: 'kaput', type: 'custom', area: 'checkout' });
    expect(props[0]!.stack).toContain('kaput');
    expect(props[1]).toMatchObject({ message: 'plain message', type: 'custom' });
    expect(props[2]).toMatchObject({ loadTime: 1200, firstContentfulPaint: 300 });
    expect(props[3]).toMatchObject({ feature: 'export_csv', rows: 10 });
    expect(props[4]).toMatchObject({ funnel: 'checkout', source: 'cart' });
    expect(props[5]).toMatchObject({ funnel: 'checkout', step: 'shipping', step_index: 0 });
    expect(props[6]).toMatchObject({ funnel: 'checkout', step: 'payment', step_index: 5 });
    expect(props[7]).toMatchObject({ funnel: 'checkout', steps: 2 });
    expect(props[9]).toMatchObject({ funnel: 'onboarding', reason: 'closed tab' });
    expect(props[14]).toMatchObject({ previous_plan: 'basic', plan_id: 'pro', mrr: 4900, status: 'active' });
    expect(props[16]).toMatchObject({ status: 'canceled', cancellation_reason: 'price' });
    expect(props[20]).toMatchObject({ amount: 4900, payment_status: 'failed', failure_reason: 'card_declined' });
    expect(analytics.getFunnelState('checkout')).toMatchObject({ status: 'completed', currentStepIndex: 5 });
    expect(analytics.getFunnelState('onboarding')).toMatchObject({ status: 'abandoned', abandonReason: 'closed tab' });
    expect(analytics.getFunnelState('never')).toBeUndefined();
    expect(analytics.getSubscriptionData()).toMatchObject({ status: 'incomplete_expired' });
    // trackPaymentSucceeded() after trackPaymentFailed() resets the count.
    expect(analytics.calculateChurnRisk().factors.payment_failures).toBe(0);
  });

  it('recorder operations follow the recorder states (the recorder itself: recorder/*.test.ts)', () => {
    const { analytics } = client({ enableSessionRecording: true });
    expect(analytics.isRecordingActive()).toBe(true);
    analytics.pauseRecording();
    expect(analytics.isRecordingActive()).toBe(false);
    analytics.resumeRecording();
    expect(analytics.isRecordingActive()).toBe(true);
    analytics.stopRecording();
    expect(analytics.isRecordingActive()).toBe(false);
    expect(analytics.getQueueSize()).toBe(0);
  });
});

describe('automatic page tracking', () => {
  it('sends one page view on start and none for the same URL again', async () => {
    const { analytics, server } = client({ enableAutoPageTracking: true });
    await pageObserversReady();
    window.dispatchEvent(new Event('popstate'));
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['page_view']);
    history.pushState({}, '', '/next-page');
    window.dispatchEvent(new Event('popstate'));
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events.map((e) => e.event_type)).toEqual(['page_view', 'page_view']);
    expect(JSON.parse((events[1]!.properties as Record<string, string>).page!)).toMatchObject({ path: '/next-page' });
    expect(analytics.getSessionData()).toMatchObject({ pageViews: 2, pageChanges: 1 });
    history.pushState({}, '', '/');
  });

  it('catches up with a navigation that happened before the page observers loaded', async () => {
    const { analytics, server } = client({ enableAutoPageTracking: true });
    history.pushState({}, '', '/early');
    await pageObserversReady();
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['page_view', 'page_view']);
    history.pushState({}, '', '/');
  });

  it('sends nothing on start when off', async () => {
    const { analytics } = client({ enableAutoPageTracking: false });
    await endOfTask();
    expect(analytics.getQueueSize()).toBe(0);
  });
});

describe('the per-task post', () => {
  it('is asynchronous to the caller: track() returns before anything is sent', () => {
    const { analytics, server } = client();
    for (let i = 0; i < 5; i++) analytics.track('burst', { i });
    expect(server.requests).toHaveLength(0);
    expect(analytics.getQueueSize()).toBe(5);
  });
});

describe('getQueueSize()', () => {
  it('counts buffered, posted and queued events, and drops to 0 once they are accepted', async () => {
    const { analytics, server } = client();
    server.state.hold = true;
    analytics.track('a');
    analytics.track('b');
    analytics.track('c');
    expect(analytics.getQueueSize()).toBe(3);
    await endOfTask();
    expect(analytics.getQueueSize()).toBe(3);
    const flushed = analytics.flush();
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    expect(analytics.getQueueSize()).toBe(3);
    server.release();
    await flushed;
    await vi.waitFor(() => expect(analytics.getQueueSize()).toBe(0));
  });
});

describe('flush()', () => {
  it('rejects with an AnalyticsError when sending fails, and the events stay queued', async () => {
    const { analytics, server } = client({ retryDelay: 60_000 });
    server.reply('network-error');
    analytics.track('kept');
    const error: unknown = await analytics.flush().catch((e: unknown) => e);
    expect(isAnalyticsError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'NETWORK_ERROR' });
    expect(analytics.getQueueSize()).toBe(1);
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['kept', 'kept']);
    await vi.waitFor(() => expect(analytics.getQueueSize()).toBe(0));
  });

  it('rejects with AUTH_ERROR when the server refuses the key', async () => {
    const { analytics, server } = client();
    server.reply({ status: 401, body: { error: 'Invalid API key', code: 'AUTH_ERROR' } });
    analytics.track('x');
    await expect(analytics.flush()).rejects.toMatchObject({ name: 'AnalyticsError', code: 'AUTH_ERROR', status: 401 });
  });

  it('resolves at once with nothing queued', async () => {
    const { analytics, server } = client();
    await analytics.flush();
    expect(server.requests).toHaveLength(0);
  });
});

describe('clearQueue()', () => {
  it('discards buffered and queued events and reports them to onDiscard', async () => {
    const onDiscard = vi.fn();
    const { analytics, server } = client({ onDiscard });
    analytics.track('posted');
    await endOfTask();
    analytics.track('buffered');
    analytics.clearQueue();
    await vi.waitFor(() => expect(analytics.getQueueSize()).toBe(0));
    await analytics.flush();
    expect(server.requests).toHaveLength(0);
    const reasons = onDiscard.mock.calls.map(([info]) => (info as { reason: string }).reason);
    expect(reasons.every((r) => r === 'cleared')).toBe(true);
    expect(onDiscard.mock.calls.flatMap(([info]) => (info as { ids: string[] }).ids)).toHaveLength(2);
  });

  it('keeps events tracked right after it', async () => {
    const { analytics, server } = client();
    analytics.track('gone');
    analytics.clearQueue();
    analytics.track('kept');
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['kept']);
  });
});

describe('analytics.session', () => {
  /** Lets the microtask the store queued for its listeners run. */
  const microtask = (): Promise<void> => Promise.resolve();

  it('tells its listeners of a page view, a click and reset(), once each, and the snapshot follows', async () => {
    const { analytics } = client();
    await pageObserversReady();
    const listener = vi.fn();
    const unsubscribe = analytics.session.subscribe(listener);
    const first = analytics.session.getSnapshot();
    expect(analytics.session.getSnapshot()).toBe(first);

    analytics.page();
    await microtask();
    expect(listener).toHaveBeenCalledTimes(1);
    expect(analytics.session.getSnapshot()).toMatchObject({ pageViews: 1, events: ['page_view'] });

    document.body.click();
    await microtask();
    expect(listener).toHaveBeenCalledTimes(2);
    expect(analytics.session.getSnapshot().clicks).toBe(1);

    const session = analytics.getSessionId();
    analytics.reset();
    await microtask();
    expect(listener).toHaveBeenCalledTimes(3);
    expect(analytics.session.getSnapshot()).toMatchObject({ sessionId: analytics.getSessionId(), pageViews: 0, clicks: 0 });
    expect(analytics.session.getSnapshot().sessionId).not.toBe(session);

    unsubscribe();
    analytics.track('unheard');
    await microtask();
    expect(listener).toHaveBeenCalledTimes(3);
  });

  it('answers what getSessionData() answers', () => {
    const { analytics } = client();
    analytics.track('a');
    expect(analytics.session.getSnapshot()).toEqual(analytics.getSessionData());
  });
});

describe('never throws into the host app', () => {
  it('works with a localStorage that throws on every access', async () => {
    const broken = new Proxy({} as Storage, {
      get() {
        throw new Error('SecurityError');
      },
    });
    const { analytics, server } = client({}, { storage: () => broken });
    analytics.identify('u1');
    analytics.track('still works');
    expect(analytics.getAnonymousId()).not.toBe('');
    expect(analytics.getUserId()).toBe('u1');
    await analytics.flush();
    expect(receivedEvents(server)).toHaveLength(2);
  });

  it('survives bad arguments to every operation', async () => {
    const { analytics } = client({ debug: false });
    const bad = analytics as unknown as Record<string, (...args: unknown[]) => unknown>;
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const [name, op] of Object.entries(bad)) {
      if (typeof op !== 'function' || name === 'shutdown' || name === 'flush' || name === 'getDeliveryStats') continue;
      expect(() => op(undefined, null, cyclic)).not.toThrow();
      expect(() => op(cyclic, () => 1, Symbol('x'))).not.toThrow();
    }
    // optOut() was among them: back in, so that flush() has something to answer for.
    analytics.optIn();
    await expect(analytics.flush()).resolves.toBeUndefined();
  });

  it('createAnalytics() itself survives a missing config', async () => {
    const analytics = createAnalytics(undefined as never);
    clients.push(analytics);
    expect(() => analytics.track('x')).not.toThrow();
    expect(typeof analytics.getSessionId()).toBe('string');
  });
});
