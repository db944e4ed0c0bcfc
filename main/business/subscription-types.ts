/** Subscription, payment and churn shapes: SubscriptionProperties, PaymentEventProperties, ChurnRiskMetrics. */
import type { EventPropertyValue } from '../../protocol/event-model/analytics-event.js';

/** `SubscriptionProperties.status`. */
export type SubscriptionStatus =
  | 'active'
  | 'trialing'
  | 'past_due'
  | 'canceled'
  | 'paused'
  | 'incomplete'
  | 'incomplete_expired'
  | 'unpaid';

/** `SubscriptionProperties.billing_interval`. */
export type BillingInterval = 'day' | 'week' | 'month' | 'year';

/**
 * A subscription's properties. Money values are integers in cents, dates ISO date strings;
 * any extra scalar key is allowed.
 */
export interface SubscriptionProperties {
  status: SubscriptionStatus;
  plan_id?: string;
  plan_name?: string;
  plan_tier?: string;
  /** Monthly recurring revenue, cents. */
  mrr?: number;
  /** Annual recurring revenue, cents. */
  arr?: number;
  /** Lifetime value, cents. */
  ltv?: number;
  /** Lower-case currency code, e.g. `eur`. */
  currency?: string;
  billing_interval?: BillingInterval;
  billing_cycle_anchor?: string;
  current_period_start?: string;
  current_period_end?: string;
  trial_start?: string;
  trial_end?: string;
  is_trial?: boolean;
  payment_method_type?: string;
  /** The last four digits only. */
  payment_method_last4?: string;
  payment_method_brand?: string;
  cancel_at_period_end?: boolean;
  canceled_at?: string;
  cancellation_reason?: string;
  /** `manual` or the name of a billing provider. */
  provider?: 'manual' | (string & {});
  provider_customer_id?: string;
  provider_subscription_id?: string;
  created_at?: string;
  updated_at?: string;
  [key: string]: EventPropertyValue;
}

/** `PaymentEventProperties.payment_status`. */
export type PaymentStatus = 'succeeded' | 'failed' | 'pending' | 'refunded';

/** A payment event's properties (extends EventProperties). */
export interface PaymentEventProperties {
  /** Amount in cents. */
  amount?: number;
  currency?: string;
  payment_status?: PaymentStatus;
  failure_reason?: string;
  invoice_id?: string;
  charge_id?: string;
  [key: string]: EventPropertyValue;
}

/** `ChurnRiskMetrics.risk_category`. */
export type ChurnRiskCategory = 'low' | 'medium' | 'high' | 'critical';

/** What `calculateChurnRisk()` answers. */
export interface ChurnRiskMetrics {
  /** 0–100. */
  risk_score: number;
  risk_category: ChurnRiskCategory;
  factors: {
    engagement_score?: number;
    days_since_last_active?: number;
    feature_adoption_rate?: number;
    support_tickets?: number;
    negative_feedback_count?: number;
    payment_failures?: number;
  };
  /** ISO date. */
  predicted_churn_date?: string;
  intervention_recommended?: boolean;
}
