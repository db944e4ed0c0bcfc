// @vitest-environment node
/**
 * Server rendering: importing the library in Node has no side effect, and every operation of a
 * client made there works without throwing, sends nothing and starts no timers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const NOW = Date.parse('2026-05-01T10:00:00.000Z');

afterEach(() => {
  vi.useRealTimers();
});

describe('the library outside a browser', () => {
  it('imports without touching globals and serves every operation', async () => {
    expect(typeof (globalThis as { window?: unknown }).window).toBe('undefined');
    // Only Date is faked (timers stay real and spied on): session times become exact.
    vi.useFakeTimers({ toFake: ['Date'], now: NOW });
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const library = await import('./index.js');
    const analytics = library.createAnalytics({ apiKey: 'k', projectId: 'p', debug: false, userId: 'u0' });
    const withExperiments = library.createAnalytics({
      apiKey: 'k',
      projectId: 'p',
      enableABTesting: true,
      abTestConfig: { experiments: [ssrExperiment], experimentsUrl: 'https://experiments.example/list.json' },
    });
    // Funnels, subscriptions and experiments live in lazily loaded modules (business-operations.ts).
    await Promise.all([import('./business/business-module.js'), import('./experiments/experiments.js')]);
    await new Promise((resolve) => setImmediate(resolve));

    analytics.track('ssr_event', { a: 1 });
    analytics.page({ title: 'x' });
    analytics.identify('u1', { email: 'e@x', subscription: { status: 'active' } });
    analytics.alias('u2');
    analytics.setUserId('u3');
    expect(analytics.getUserId()).toBe('u3');
    expect(analytics.getAnonymousId()).not.toBe('');
    expect(analytics.getSessionId()).not.toBe('');
    // The whole state: no DOM, so no clicks, scrolls or page changes; the clock stood still.
    expect(analytics.getSessionData()).toEqual({
      sessionId: analytics.getSessionId(),
      startTime: NOW,
      duration: 0,
      isActive: true,
      pageViews: 1,
      clicks: 0,
      clickEvents: 0,
      scrollEvents: 0,
      scrollDepth: 0,
      maxScrollDepth: 0,
      pageChanges: 0,
      events: ['ssr_event', 'page_view', 'user_identify', 'user_alias'],
      // Only the events part scores: 10 × 4/20.
      engagementScore: 2,
      bounceLikelihood: 98,
    });
    expect(analytics.getActiveSession().sessionId).toBe(analytics.getSessionId());
    expect(analytics.calculateEngagementScore()).toBe(2);
    expect(analytics.getQueueSize()).toBe(0);
    analytics.clearQueue();
    analytics.trackCustomError(new Error('e'));
    analytics.trackPerformance({ loadTime: 1 });
    analytics.trackFeatureUsage('f');
    analytics.startFunnel('f');
    analytics.advanceFunnel('f', 's');
    analytics.trackFunnelStep('f', 's2', 1);
    analytics.completeFunnel('f');
    analytics.abandonFunnel('g', 'r');
    expect(analytics.getFunnelState('f')).toMatchObject({ status: 'completed' });
    analytics.startRecording();
    analytics.pauseRecording();
    analytics.resumeRecording();
    analytics.stopRecording();
    expect(analytics.isRecordingActive()).toBe(false);
    analytics.trackSubscription('s', { status: 'active' });
    analytics.trackSubscriptionStarted({ status: 'active' });
    analytics.trackSubscriptionPaused({ status: 'paused' });
    analytics.trackSubscriptionReactivated({ status: 'active' });
    analytics.trackSubscriptionUpgraded({ status: 'active', previous_plan: 'a' });
    analytics.trackSubscriptionDowngraded({ status: 'active', previous_plan: 'b' });
    analytics.trackSubscriptionCanceled({ status: 'canceled', cancellation_reason: 'c' });
    analytics.trackTrialStarted({ status: 'trialing' });
    analytics.trackTrialConverted({ status: 'active' });
    analytics.trackTrialExpired({ status: 'incomplete_expired' });
    analytics.trackPaymentFailed({ amount: 1 });
    analytics.trackPaymentSucceeded({ amount: 1 });
    expect(analytics.calculateChurnRisk().risk_score).toBeGreaterThan(0);
    expect(analytics.getSubscriptionData()).toMatchObject({ status: 'incomplete_expired' });
    expect(analytics.getVariant('exp')).toBeNull();
    expect(analytics.isInVariant('exp', 'b')).toBe(false);
    expect(analytics.getExperimentAssignments()).toEqual([]);
    expect(withExperiments.getVariant('exp')).toBe('b');
    expect(withExperiments.getExperimentAssignments()).toHaveLength(1);
    analytics.reset();
    expect(analytics.getUserId()).toBeNull();
    await expect(analytics.flush()).resolves.toBeUndefined();
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'off' });
    await analytics.shutdown();
    await withExperiments.shutdown();

    expect(setTimeoutSpy).not.toHaveBeenCalled();
    expect(setIntervalSpy).not.toHaveBeenCalled();
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(analytics.config.endpoint).toBe('http://localhost:8787');
  });

  it('serves the session store, telling its listeners, without a timer', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const library = await import('./index.js');
    const analytics = library.createAnalytics({ apiKey: 'k', projectId: 'p', enableAutoPageTracking: false });
    const listener = vi.fn();
    const unsubscribe = analytics.session.subscribe(listener);
    analytics.track('ssr_event');
    await Promise.resolve();
    expect(listener).toHaveBeenCalledTimes(1);
    expect(analytics.session.getSnapshot()).toMatchObject({ isActive: true, events: ['ssr_event'] });
    unsubscribe();
    await analytics.shutdown();
    expect(setTimeoutSpy).not.toHaveBeenCalled();
  });
});

const ssrExperiment = {
  id: 'e1',
  key: 'exp',
  name: 'Experiment',
  status: 'RUNNING' as const,
  trafficSplit: 1,
  variants: [{ id: 'v1', key: 'b', name: 'B', isControl: false, trafficSplit: 1, createdAt: '', updatedAt: '' }],
  createdAt: '',
  updatedAt: '',
};
