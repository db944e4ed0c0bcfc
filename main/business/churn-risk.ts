/**
 * The churn-risk estimate: a deterministic formula over what the client knows, so the same inputs
 * always give the same metrics and the server can recompute them.
 */
import type { ChurnRiskCategory, ChurnRiskMetrics, SubscriptionProperties } from './subscription-types.js';

/** What the churn estimate reads. */
export interface ChurnInput {
  /** 0–100: the current session's engagement score (`calculateEngagementScore`). */
  engagementScore: number;
  /** Whole days between the last day this browser was active before this page load and today. */
  daysSinceLastActive: number;
  /** `payment_failed` events since the last `payment_succeeded`. */
  paymentFailures: number;
  /** The remembered subscription, or null. */
  subscription: Partial<SubscriptionProperties> | null;
  /** Now, ms since the epoch (for a trial about to end). */
  now: number;
}

const DAY_MS = 86_400_000;

/** Points of the subscription's state; the highest that applies counts. */
const STATE_POINTS: Readonly<Partial<Record<string, number>>> = {
  canceled: 40,
  incomplete_expired: 40,
  unpaid: 35,
  past_due: 30,
  incomplete: 25,
  paused: 25,
};

/**
 * Churn risk, `risk_score` 0–100: the sum of four parts, rounded and capped at 100.
 *
 * | Part | Points |
 * |---|---|
 * | engagement | 0.2 × (100 − engagement score): 0–20 |
 * | recency | 1 per day since last active, up to 20 |
 * | payment failures | 15 per failure since the last success, up to 30 |
 * | subscription | the highest that applies: status `canceled` or `incomplete_expired` 40, `unpaid` 35, `cancel_at_period_end` 35, `past_due` 30, `incomplete` 25, `paused` 25, a trial (`trialing` or `is_trial`) whose `trial_end` is at most 3 days away (or past) 15; else 0 |
 *
 * `risk_category`: below 25 `low`, below 50 `medium`, below 75 `high`, else `critical`.
 * `intervention_recommended`: the score is 50 or more (high or critical).
 * `predicted_churn_date` (YYYY-MM-DD, UTC), the day the subscription is expected to end:
 * for a subscription set to end (`cancel_at_period_end`, or status `canceled`) its
 * `current_period_end`, else its `canceled_at`; otherwise, only at a score of 50 or more, a trial's
 * `trial_end`, else the `current_period_end` (the next renewal, where an at-risk customer leaves).
 * Absent when no such date is known.
 */
export function calculateChurnRisk(input: ChurnInput): ChurnRiskMetrics {
  const engagement = clamp(input.engagementScore, 100);
  const days = Math.floor(clamp(input.daysSinceLastActive, Infinity));
  const failures = Math.floor(clamp(input.paymentFailures, Infinity));
  const sub = input.subscription ?? {};
  const trial = sub.status === 'trialing' || sub.is_trial === true;
  const ending = sub.cancel_at_period_end === true || sub.status === 'canceled';
  const trialEnd = Date.parse(String(sub.trial_end));
  const state = Math.max(
    STATE_POINTS[sub.status ?? ''] ?? 0,
    sub.cancel_at_period_end === true ? 35 : 0,
    trial && trialEnd - input.now <= 3 * DAY_MS ? 15 : 0,
  );
  const score = Math.min(100, Math.round(0.2 * (100 - engagement) + Math.min(20, days) + Math.min(30, 15 * failures) + state));
  const category: ChurnRiskCategory = score < 25 ? 'low' : score < 50 ? 'medium' : score < 75 ? 'high' : 'critical';
  const metrics: ChurnRiskMetrics = {
    risk_score: score,
    risk_category: category,
    factors: { engagement_score: engagement, days_since_last_active: days, payment_failures: failures },
    intervention_recommended: score >= 50,
  };
  const end = ending
    ? (sub.current_period_end ?? sub.canceled_at)
    : score >= 50
      ? trial
        ? sub.trial_end
        : sub.current_period_end
      : undefined;
  const time = Date.parse(String(end));
  if (!Number.isNaN(time)) metrics.predicted_churn_date = new Date(time).toISOString().slice(0, 10);
  return metrics;
}

function clamp(value: number, max: number): number {
  return Number.isFinite(value) ? Math.min(max, Math.max(0, value)) : 0;
}
