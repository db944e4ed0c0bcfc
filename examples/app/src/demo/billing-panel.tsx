/**
 * Subscription and payment events, `identify()` with a subscription, and what the client derives
 * from them: `calculateChurnRisk()` and `getSubscriptionData()`. Money is in cents.
 */
import { type ReactNode, useReducer, useState } from 'react';
import type { SubscriptionProperties } from 'service-analytics';
import { useAnalytics } from 'service-analytics/react';

/** The demo user; a made-up id, nothing typed by the visitor. */
export const DEMO_USER_ID = 'demo-user-42';

const DAY = 86_400_000;
const isoDate = (ms: number): string => new Date(ms).toISOString();

const STARTER: SubscriptionProperties = {
  status: 'active',
  plan_id: 'starter',
  plan_name: 'Starter',
  plan_tier: 'basic',
  mrr: 1900,
  arr: 22800,
  currency: 'usd',
  billing_interval: 'month',
  provider: 'manual',
};

/** The billing demo. */
export function BillingDemo(): ReactNode {
  const analytics = useAnalytics();
  const [, refresh] = useReducer((n: number) => n + 1, 0);
  const [last, setLast] = useState('');
  const act = (label: string, run: () => void) => () => {
    run();
    setLast(label);
    refresh();
  };
  const risk = analytics.calculateChurnRisk();
  const subscription = analytics.getSubscriptionData();
  const now = Date.now();
  return (
    <section className="card" aria-labelledby="billing-heading">
      <h2 id="billing-heading">Subscriptions and payments</h2>
      <p className="hint">
        <code>identify(userId, {'{ subscription }'})</code>, <code>trackSubscriptionStarted/Upgraded/Canceled</code>,{' '}
        <code>trackPaymentSucceeded/Failed</code>. Amounts are in cents.
      </p>
      <div className="actions">
        <button
          type="button"
          onClick={act(`user_identify (${DEMO_USER_ID}, trialing)`, () =>
            analytics.identify(DEMO_USER_ID, {
              plan: 'starter',
              subscription: { status: 'trialing', plan_id: 'starter', plan_name: 'Starter', is_trial: true, trial_start: isoDate(now), trial_end: isoDate(now + 14 * DAY), currency: 'usd', billing_interval: 'month', provider: 'manual' },
            }),
          )}
        >
          Identify demo user
        </button>
        <button type="button" onClick={act('subscription_started (Starter)', () => analytics.trackSubscriptionStarted({ ...STARTER, current_period_start: isoDate(now), current_period_end: isoDate(now + 30 * DAY) }))}>
          Start subscription
        </button>
        <button
          type="button"
          onClick={act('subscription_upgraded (Starter → Pro)', () =>
            analytics.trackSubscriptionUpgraded({ ...STARTER, plan_id: 'pro', plan_name: 'Pro', plan_tier: 'pro', mrr: 4900, arr: 58800, previous_plan: 'starter' }),
          )}
        >
          Upgrade to Pro
        </button>
        <button
          type="button"
          onClick={act('subscription_canceled (too expensive)', () =>
            analytics.trackSubscriptionCanceled({ ...STARTER, status: 'canceled', plan_id: 'pro', plan_name: 'Pro', mrr: 4900, cancel_at_period_end: true, canceled_at: isoDate(now), cancellation_reason: 'too_expensive' }),
          )}
        >
          Cancel
        </button>
      </div>
      <div className="actions">
        <button
          type="button"
          onClick={act('payment_succeeded ($49.00)', () =>
            analytics.trackPaymentSucceeded({ amount: 4900, currency: 'usd', payment_status: 'succeeded', invoice_id: 'in_demo_001', charge_id: 'ch_demo_001' }),
          )}
        >
          Payment succeeded
        </button>
        <button
          type="button"
          onClick={act('payment_failed (card declined)', () =>
            analytics.trackPaymentFailed({ amount: 4900, currency: 'usd', payment_status: 'failed', failure_reason: 'card_declined', invoice_id: 'in_demo_002' }),
          )}
        >
          Payment failed
        </button>
      </div>
      <p className="status" role="status">
        {last && (
          <>
            Sent <code>{last}</code>
          </>
        )}
      </p>
      <h3>Churn risk</h3>
      <p className="hint">
        <code>calculateChurnRisk()</code>, from engagement, payment failures and the subscription
      </p>
      <p>
        <span className={`badge badge-${risk.risk_category}`} data-testid="churn-category">
          {risk.risk_category}
        </span>{' '}
        score <strong data-testid="churn-score">{Math.round(risk.risk_score)}</strong> / 100
        {risk.intervention_recommended ? ' · intervention recommended' : ''}
      </p>
      <details>
        <summary>Factors and subscription data</summary>
        <pre className="json">{JSON.stringify({ factors: risk.factors, subscription }, null, 2)}</pre>
      </details>
    </section>
  );
}
