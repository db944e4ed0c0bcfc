/**
 * Funnels, subscriptions and payments through the facade: the lazily loaded module, calls made
 * before it arrives, identify() with a subscription, and what reaches the server.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Analytics } from '../analytics.js';
import { createBusinessModule } from './business-module.js';
import { createBusinessOperations } from './business-operations.js';
import { SILENT } from '../logger.js';
import { createSafeStorage } from '../session/storage.js';
import { inProcessClient, lazyModulesReady, receivedEvents } from '../../test-support/client/facade-fakes.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const clients: Analytics[] = [];

function client(clock = { t: T0 }) {
  const made = inProcessClient({}, { now: () => clock.t });
  clients.push(made.analytics);
  return { ...made, clock };
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('before the business module has arrived', () => {
  it('queues calls and sends them in order, stamped with their call time; flush() waits for them', async () => {
    const { analytics, server, clock } = client();
    analytics.startFunnel('checkout');
    clock.t = T0 + 250;
    analytics.advanceFunnel('checkout', 'shipping');
    clock.t = T0 + 400;
    analytics.trackPaymentFailed({ amount: 4900, currency: 'eur', payment_status: 'failed' });
    analytics.track('plain'); // not deferred
    expect(analytics.getFunnelState('checkout')).toBeUndefined();
    expect(analytics.getSubscriptionData()).toBeNull();
    expect(analytics.calculateChurnRisk()).toEqual({ risk_score: 0, risk_category: 'low', factors: {} });
    clock.t = T0 + 1000;
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events.map((e) => [e.event_type, e.timestamp])).toEqual([
      ['plain', '2026-05-01T10:00:00.400Z'],
      ['funnel_started', '2026-05-01T10:00:00.000Z'],
      ['funnel_step', '2026-05-01T10:00:00.250Z'],
      ['payment_failed', '2026-05-01T10:00:00.400Z'],
    ]);
    expect(events[2]!.properties).toMatchObject({ funnel: 'checkout', step: 'shipping', step_index: 0, ms_since_start: 250 });
    expect(analytics.getFunnelState('checkout')).toMatchObject({ status: 'started', startedAt: T0, currentStep: 'shipping' });
    expect(analytics.calculateChurnRisk().factors.payment_failures).toBe(1);
  });

  it('sends identify() with a subscription once the module validated it, with the call time', async () => {
    const { analytics, server, clock } = client();
    analytics.identify('user_1', { email: 'a@b.c', subscription: { status: 'active', payment_method_last4: '4242424242424242', mrr: 900 } });
    clock.t = T0 + 50;
    analytics.track('after');
    expect(analytics.getUserId()).toBe('user_1');
    await analytics.flush();
    const identify = receivedEvents(server).find((e) => e.event_type === 'user_identify')!;
    expect(identify).toMatchObject({ user_id: 'user_1', timestamp: '2026-05-01T10:00:00.000Z', properties: { email: 'a@b.c' } });
    expect(JSON.parse((identify.properties as Record<string, string>).subscription!)).toEqual({ status: 'active', mrr: 900 });
    expect(JSON.stringify(server.requests)).not.toContain('4242424242424242');
    expect(analytics.getSubscriptionData()).toEqual({ status: 'active', mrr: 900 });
  });
});

describe('after the business module has arrived', () => {
  it('answers at once and sends validated events', async () => {
    const { analytics, server } = client();
    await lazyModulesReady();
    analytics.startFunnel('f');
    expect(analytics.getFunnelState('f')).toMatchObject({ status: 'started' });
    analytics.trackSubscriptionStarted({ status: 'active', mrr: 12.5, currency: 'usd', plan_id: 'pro' });
    expect(analytics.getSubscriptionData()).toEqual({ status: 'active', currency: 'usd', plan_id: 'pro' });
    analytics.trackPaymentSucceeded({ amount: 4900, charge_id: 'ch_1', payment_method_last4: '5555555555554444' });
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events.map((e) => e.event_type)).toEqual(['funnel_started', 'subscription_started', 'payment_succeeded']);
    expect(events[1]!.properties).toMatchObject({ status: 'active', currency: 'usd', plan_id: 'pro' });
    expect(events[1]!.properties).not.toHaveProperty('mrr');
    expect(events[2]!.properties).toMatchObject({ amount: 4900, charge_id: 'ch_1' });
    expect(JSON.stringify(server.requests)).not.toContain('5555555555554444');
  });

  it('keeps the subscription across a reload, and forgets it on reset() and on identify() of another user', async () => {
    const first = client();
    await lazyModulesReady();
    first.analytics.identify('user_1', { subscription: { status: 'past_due' } });
    const reloaded = client();
    await lazyModulesReady();
    expect(reloaded.analytics.getSubscriptionData()).toEqual({ status: 'past_due' });
    reloaded.analytics.identify('user_1');
    expect(reloaded.analytics.getSubscriptionData()).toEqual({ status: 'past_due' });
    reloaded.analytics.identify('user_2');
    expect(reloaded.analytics.getSubscriptionData()).toBeNull();
    reloaded.analytics.trackSubscriptionStarted({ status: 'active' });
    reloaded.analytics.reset();
    expect(reloaded.analytics.getSubscriptionData()).toBeNull();
  });
});

describe('createBusinessOperations(options)', () => {
  it('forwards every operation of the business module', () => {
    const options = { send: () => {}, store: createSafeStorage(() => undefined), keyPrefix: 'p:', now: () => 0, engagementScore: () => 0, log: SILENT };
    const forwarded = Object.keys(createBusinessOperations(options));
    const served = Object.keys(createBusinessModule(options)).filter((name) => name !== 'remember' && name !== 'rememberEncoded');
    expect(served.length).toBeGreaterThan(20);
    expect(forwarded).toEqual(expect.arrayContaining(served));
  });
});
