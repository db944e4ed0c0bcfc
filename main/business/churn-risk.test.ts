import { describe, expect, it } from 'vitest';
import { type ChurnInput, calculateChurnRisk } from './churn-risk.js';
import type { ChurnRiskCategory } from './subscription-types.js';

const NOW = Date.parse('2026-05-01T00:00:00Z');

function input(partial: Partial<ChurnInput>): ChurnInput {
  return { engagementScore: 100, daysSinceLastActive: 0, paymentFailures: 0, subscription: null, now: NOW, ...partial };
}

/** [case, input, risk_score, risk_category, predicted_churn_date] */
const TABLE: Array<[string, Partial<ChurnInput>, number, ChurnRiskCategory, string | undefined]> = [
  ['nothing known, fully engaged', {}, 0, 'low', undefined],
  ['no engagement: 0.2 × 100', { engagementScore: 0 }, 20, 'low', undefined],
  ['half engagement and 5 days away', { engagementScore: 50, daysSinceLastActive: 5, subscription: { status: 'active' } }, 15, 'low', undefined],
  ['recency is capped at 20', { daysSinceLastActive: 400 }, 20, 'low', undefined],
  ['one payment failure', { paymentFailures: 1 }, 15, 'low', undefined],
  ['failures are capped at 30', { paymentFailures: 9 }, 30, 'medium', undefined],
  ['boundary: 24 is low', { engagementScore: 0, daysSinceLastActive: 4 }, 24, 'low', undefined],
  ['boundary: 25 is medium', { engagementScore: 0, daysSinceLastActive: 5 }, 25, 'medium', undefined],
  ['paused', { subscription: { status: 'paused' } }, 25, 'medium', undefined],
  ['incomplete', { subscription: { status: 'incomplete' } }, 25, 'medium', undefined],
  ['past_due', { subscription: { status: 'past_due' } }, 30, 'medium', undefined],
  ['unpaid', { subscription: { status: 'unpaid' } }, 35, 'medium', undefined],
  ['incomplete_expired', { subscription: { status: 'incomplete_expired' } }, 40, 'medium', undefined],
  [
    'cancel at period end: the period end is the churn date',
    { engagementScore: 80, subscription: { status: 'active', cancel_at_period_end: true, current_period_end: '2026-12-31' } },
    39,
    'medium',
    '2026-12-31',
  ],
  [
    'boundary: 50 is high, predicted at the next renewal',
    { engagementScore: 0, paymentFailures: 2, subscription: { status: 'active', current_period_end: '2026-06-01T00:00:00Z' } },
    50,
    'high',
    '2026-06-01',
  ],
  [
    'past_due with a failure and half engagement',
    { engagementScore: 50, paymentFailures: 1, subscription: { status: 'past_due', current_period_end: '2026-07-01T12:00:00Z' } },
    55,
    'high',
    '2026-07-01',
  ],
  [
    'boundary: 75 is critical',
    { engagementScore: 0, daysSinceLastActive: 20, subscription: { status: 'unpaid' } },
    75,
    'critical',
    undefined,
  ],
  [
    'canceled, disengaged, away and failing: capped at 100, dated by canceled_at',
    { engagementScore: 0, daysSinceLastActive: 30, paymentFailures: 3, subscription: { status: 'canceled', canceled_at: '2026-04-01T10:00:00Z' } },
    100,
    'critical',
    '2026-04-01',
  ],
  ['trial ending in 2 days', { engagementScore: 60, subscription: { status: 'trialing', trial_end: '2026-05-03' } }, 23, 'low', undefined],
  ['trial ending in 10 days', { engagementScore: 60, subscription: { status: 'trialing', trial_end: '2026-05-11' } }, 8, 'low', undefined],
  ['is_trial past its end', { subscription: { status: 'active', is_trial: true, trial_end: '2026-04-20' } }, 15, 'low', undefined],
  [
    'an at-risk trial is predicted to churn at its end',
    { engagementScore: 0, paymentFailures: 2, subscription: { status: 'trialing', trial_end: '2026-05-03', current_period_end: '2026-06-01' } },
    65,
    'high',
    '2026-05-03',
  ],
  ['cancel_at_period_end without dates has no prediction', { subscription: { status: 'active', cancel_at_period_end: true } }, 35, 'medium', undefined],
  ['non-numbers count as 0', { engagementScore: Number.NaN, daysSinceLastActive: -3, paymentFailures: Number.NaN }, 20, 'low', undefined],
];

describe('calculateChurnRisk(input)', () => {
  it.each(TABLE)('%s', (_name, partial, score, category, predicted) => {
    const metrics = calculateChurnRisk(input(partial));
    expect(metrics.risk_score).toBe(score);
    expect(metrics.risk_category).toBe(category);
    expect(metrics.intervention_recommended).toBe(score >= 50);
    expect(metrics.predicted_churn_date).toBe(predicted);
  });

  it('reports its factors', () => {
    expect(calculateChurnRisk(input({ engagementScore: 42, daysSinceLastActive: 3.7, paymentFailures: 2 })).factors).toEqual({
      engagement_score: 42,
      days_since_last_active: 3,
      payment_failures: 2,
    });
  });

  it('is deterministic', () => {
    const same = input({ engagementScore: 33, daysSinceLastActive: 7, paymentFailures: 1, subscription: { status: 'past_due' } });
    expect(calculateChurnRisk(same)).toEqual(calculateChurnRisk({ ...same }));
  });
});
