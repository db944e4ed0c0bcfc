import { describe, expect, it, vi } from 'vitest';
import type { Logger } from '../logger.js';
import type { KeyValueStore } from '../session/storage.js';
import { createSubscriptions } from './subscriptions.js';

const DAY = 86_400_000;
const KEY = 'service-analytics:p:billing';

function memoryStore(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, get: (k) => data.get(k) ?? null, set: (k, v) => void data.set(k, v), remove: (k) => void data.delete(k) };
}

function setup(options: { store?: KeyValueStore; now?: number; engagement?: number } = {}) {
  const clock = { t: options.now ?? 100 * DAY + 5000 };
  const send = vi.fn<(event: string, properties: Record<string, unknown> | undefined) => void>();
  const log: Logger = { debug: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const store = options.store ?? memoryStore();
  const subs = createSubscriptions({ send, store, key: KEY, now: () => clock.t, engagementScore: () => options.engagement ?? 100, log });
  return { clock, send, log, store, subs };
}

describe('createSubscriptions(): events', () => {
  it('sends every fixed-name operation under its documented event_type (docs/decisions.md, "Wire mapping of every client call")', () => {
    const { send, subs } = setup();
    const sub = { status: 'active' as const };
    subs.trackSubscriptionStarted(sub);
    subs.trackSubscriptionPaused({ status: 'paused' });
    subs.trackSubscriptionReactivated(sub);
    subs.trackSubscriptionUpgraded({ ...sub, previous_plan: 'basic' });
    subs.trackSubscriptionDowngraded({ ...sub, previous_plan: 'team' });
    subs.trackSubscriptionCanceled({ status: 'canceled', cancellation_reason: 'price' });
    subs.trackTrialStarted({ status: 'trialing' });
    subs.trackTrialConverted(sub);
    subs.trackTrialExpired({ status: 'incomplete_expired' });
    subs.trackPaymentFailed({ amount: 100 });
    subs.trackPaymentSucceeded({ amount: 100 });
    subs.trackSubscription('seat_added', { seats: 3 });
    expect(send.mock.calls.map(([name]) => name)).toEqual([
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
      'seat_added',
    ]);
    expect(send.mock.calls[3]![1]).toEqual({ status: 'active', previous_plan: 'basic' });
    expect(send.mock.calls[5]![1]).toEqual({ status: 'canceled', cancellation_reason: 'price' });
  });

  it('drops invalid properties, sends the rest, and logs the keys but never the values', () => {
    const { send, log, subs } = setup();
    subs.trackSubscriptionStarted({ status: 'active', mrr: 49.9, currency: 'EUR', payment_method_last4: '4242424242424242', plan_id: 'pro' });
    expect(send).toHaveBeenCalledWith('subscription_started', { status: 'active', plan_id: 'pro' });
    const logged = JSON.stringify((log.debug as ReturnType<typeof vi.fn>).mock.calls);
    expect(logged).toContain('mrr, currency, payment_method_last4');
    expect(logged).not.toContain('4242424242424242');
  });

  it('never sends a card number, whatever the field', () => {
    const { send, subs } = setup();
    subs.trackPaymentFailed({ amount: 4900, currency: 'eur', payment_status: 'failed', payment_method_last4: '4242 4242 4242 4242' });
    subs.trackPaymentSucceeded({ amount: 4900, note: 'card 4000056655665556' });
    subs.trackSubscription('x', { status: 'active', card: '5555555555554444' });
    const sent = JSON.stringify(send.mock.calls);
    for (const pan of ['4242 4242 4242 4242', '4000056655665556', '5555555555554444']) expect(sent).not.toContain(pan);
    expect(send.mock.calls[0]).toEqual(['payment_failed', { amount: 4900, currency: 'eur', payment_status: 'failed' }]);
  });

  it('keeps an event whose status is invalid, without remembering it', () => {
    const { send, subs } = setup();
    subs.trackSubscriptionCanceled({ status: 'cancelled' as 'canceled', cancellation_reason: 'x' });
    expect(send).toHaveBeenCalledWith('subscription_canceled', { cancellation_reason: 'x' });
    expect(subs.getSubscriptionData()).toBeNull();
  });

  it('ignores trackSubscription without an event name', () => {
    const { send, subs } = setup();
    subs.trackSubscription('', { status: 'active' });
    subs.trackSubscription(undefined as unknown as string);
    expect(send).not.toHaveBeenCalled();
  });
});

describe('createSubscriptions(): the remembered subscription', () => {
  it('is replaced (not merged) by each subscription event with a valid status; payments do not touch it', () => {
    const { subs } = setup();
    subs.trackSubscriptionStarted({ status: 'active', plan_id: 'pro', cancel_at_period_end: true });
    subs.trackSubscriptionReactivated({ status: 'active', plan_id: 'pro' });
    subs.trackPaymentSucceeded({ amount: 1, status: 'past_due' } as never);
    expect(subs.getSubscriptionData()).toEqual({ status: 'active', plan_id: 'pro' });
  });

  it('remember() validates identify traits and answers the copy to send', () => {
    const { subs } = setup();
    expect(subs.remember({ status: 'trialing', payment_method_last4: '12345', trial_end: '2026-06-01' })).toEqual({
      status: 'trialing',
      trial_end: '2026-06-01',
    });
    expect(subs.getSubscriptionData()).toEqual({ status: 'trialing', trial_end: '2026-06-01' });
    expect(subs.remember('premium')).toBeUndefined();
  });

  it('returns a copy', () => {
    const { subs } = setup();
    subs.trackSubscriptionStarted({ status: 'active' });
    subs.getSubscriptionData()!.status = 'canceled';
    expect(subs.getSubscriptionData()!.status).toBe('active');
  });

  it('survives a reload (localStorage) and is re-validated when read back', () => {
    const store = memoryStore();
    setup({ store }).subs.trackSubscriptionStarted({ status: 'past_due', mrr: 900 });
    expect(setup({ store }).subs.getSubscriptionData()).toEqual({ status: 'past_due', mrr: 900 });
    store.set(KEY, JSON.stringify({ s: { status: 'active', payment_method_last4: '4242424242424242' }, f: 2, d: 100 }));
    expect(setup({ store }).subs.getSubscriptionData()).toEqual({ status: 'active' });
    store.set(KEY, '{not json');
    expect(setup({ store }).subs.getSubscriptionData()).toBeNull();
  });

  it('forget() clears the subscription, the failures and the recency', () => {
    const store = memoryStore();
    store.set(KEY, JSON.stringify({ s: null, f: 0, d: 90 }));
    const { subs } = setup({ store });
    subs.trackSubscriptionStarted({ status: 'active' });
    subs.trackPaymentFailed({});
    subs.forget();
    expect(subs.getSubscriptionData()).toBeNull();
    expect(subs.calculateChurnRisk().factors).toMatchObject({ payment_failures: 0, days_since_last_active: 0 });
    expect(setup({ store }).subs.getSubscriptionData()).toBeNull();
  });
});

describe('createSubscriptions().calculateChurnRisk()', () => {
  it('counts payment failures until a success, across reloads', () => {
    const store = memoryStore();
    const first = setup({ store });
    first.subs.trackPaymentFailed({ amount: 1 });
    first.subs.trackPaymentFailed({ amount: 1 });
    expect(setup({ store }).subs.calculateChurnRisk().factors.payment_failures).toBe(2);
    first.subs.trackPaymentSucceeded({ amount: 1 });
    expect(first.subs.calculateChurnRisk().factors.payment_failures).toBe(0);
  });

  it('measures days since the last page load in UTC days, 0 on a first visit', () => {
    const store = memoryStore();
    expect(setup({ store, now: 100 * DAY + 1 }).subs.calculateChurnRisk().factors.days_since_last_active).toBe(0);
    expect(setup({ store, now: 100 * DAY + 9 * 3_600_000 }).subs.calculateChurnRisk().factors.days_since_last_active).toBe(0);
    expect(setup({ store, now: 112 * DAY }).subs.calculateChurnRisk().factors.days_since_last_active).toBe(12);
    expect(setup({ store, now: 112 * DAY + 5 }).subs.calculateChurnRisk().factors.days_since_last_active).toBe(0);
  });

  it('writes the day once per day, not per load', () => {
    const store = memoryStore();
    const set = vi.spyOn(store, 'set');
    setup({ store, now: 100 * DAY });
    setup({ store, now: 100 * DAY + 1000 });
    expect(set).toHaveBeenCalledTimes(1);
  });

  it('combines engagement, recency, failures and the subscription (formula in churn-risk.ts)', () => {
    const store = memoryStore();
    store.set(KEY, JSON.stringify({ s: null, f: 0, d: 95 }));
    const { subs } = setup({ store, engagement: 50, now: 100 * DAY });
    subs.trackSubscriptionStarted({ status: 'past_due', current_period_end: '2026-01-31' });
    subs.trackPaymentFailed({});
    // 0.2 × 50 + 5 days + 15 + 30 (past_due) = 60
    expect(subs.calculateChurnRisk()).toEqual({
      risk_score: 60,
      risk_category: 'high',
      factors: { engagement_score: 50, days_since_last_active: 5, payment_failures: 1 },
      intervention_recommended: true,
      predicted_churn_date: '2026-01-31',
    });
  });
});
