import { describe, expect, it, vi } from 'vitest';
import { calculateChurnRisk, createSubscriptions } from './subscriptions.js';

describe('calculateChurnRisk()', () => {
  it('adds low engagement, payment failures and the subscription status', () => {
    expect(calculateChurnRisk({ engagementScore: 100, paymentFailures: 0, subscription: null })).toEqual({
      risk_score: 0,
      risk_category: 'low',
      factors: { engagement_score: 100, payment_failures: 0 },
      intervention_recommended: false,
    });
    // 0.4 × 50 + 2 × 10 + 20 (past_due) = 60
    expect(calculateChurnRisk({ engagementScore: 50, paymentFailures: 2, subscription: { status: 'past_due' } })).toMatchObject({
      risk_score: 60,
      risk_category: 'high',
      intervention_recommended: true,
    });
    expect(calculateChurnRisk({ engagementScore: 0, paymentFailures: 9, subscription: { status: 'canceled' } }).risk_category).toBe('critical');
  });

  it('predicts the churn date of a subscription set to cancel at period end', () => {
    const metrics = calculateChurnRisk({
      engagementScore: 80,
      paymentFailures: 0,
      subscription: { status: 'active', cancel_at_period_end: true, current_period_end: '2026-12-31' },
    });
    expect(metrics).toMatchObject({ risk_score: 28, risk_category: 'medium', predicted_churn_date: '2026-12-31' });
  });
});

describe('createSubscriptions()', () => {
  it('sends the named events and remembers the latest subscription', () => {
    const send = vi.fn();
    const subs = createSubscriptions(send, () => 100);
    subs.trackSubscriptionStarted({ status: 'active', plan_id: 'pro' });
    subs.trackSubscriptionCanceled({ status: 'canceled', cancellation_reason: 'price' });
    subs.trackPaymentFailed({ amount: 100 });
    expect(send.mock.calls.map(([name]) => name)).toEqual(['subscription_started', 'subscription_canceled', 'payment_failed']);
    expect(subs.getSubscriptionData()).toEqual({ status: 'canceled', cancellation_reason: 'price' });
    expect(subs.calculateChurnRisk().factors.payment_failures).toBe(1);
    subs.forget();
    expect(subs.getSubscriptionData()).toBeNull();
  });
});
