/**
 * Subscription, trial and payment events (DESIGN.md "Decisions" names them), the last known
 * subscription for `getSubscriptionData()`, and a first churn-risk estimate. Properties are sent as
 * given; the subscription is remembered when the properties carry a `status`.
 */
import type { EventProperties } from '../worker/types.js';
import type {
  ChurnRiskCategory,
  ChurnRiskMetrics,
  PaymentEventProperties,
  SubscriptionProperties,
} from './subscription-types.js';

/** Subscription operations of the client (SPEC.md "Client library operations"). */
export interface SubscriptionOperations {
  /** Sends `eventName` with the properties; remembers them as the subscription when they have a status. */
  trackSubscription(eventName: string, properties?: Partial<SubscriptionProperties> & EventProperties): void;
  /** `subscription_started`. */
  trackSubscriptionStarted(properties: SubscriptionProperties): void;
  /** `subscription_paused`. */
  trackSubscriptionPaused(properties: SubscriptionProperties): void;
  /** `subscription_reactivated`. */
  trackSubscriptionReactivated(properties: SubscriptionProperties): void;
  /** `subscription_upgraded`. */
  trackSubscriptionUpgraded(properties: SubscriptionProperties & { previous_plan?: string }): void;
  /** `subscription_downgraded`. */
  trackSubscriptionDowngraded(properties: SubscriptionProperties & { previous_plan?: string }): void;
  /** `subscription_canceled`. */
  trackSubscriptionCanceled(properties: SubscriptionProperties & { cancellation_reason?: string }): void;
  /** `trial_started`. */
  trackTrialStarted(properties: SubscriptionProperties): void;
  /** `trial_converted`. */
  trackTrialConverted(properties: SubscriptionProperties): void;
  /** `trial_expired`. */
  trackTrialExpired(properties: SubscriptionProperties): void;
  /** `payment_failed`; counted for the churn risk. */
  trackPaymentFailed(properties: PaymentEventProperties): void;
  /** `payment_succeeded`. */
  trackPaymentSucceeded(properties: PaymentEventProperties): void;
  /** The churn-risk estimate, see {@link calculateChurnRisk}. */
  calculateChurnRisk(): ChurnRiskMetrics;
  /** The last subscription seen (by `identify` traits or a subscription event), or null. */
  getSubscriptionData(): SubscriptionProperties | null;
}

/** What the churn estimate reads. */
export interface ChurnInput {
  /** 0–100, the session's engagement score. */
  engagementScore: number;
  paymentFailures: number;
  subscription: SubscriptionProperties | null;
}

const STATUS_RISK: Readonly<Partial<Record<string, number>>> = {
  past_due: 20,
  unpaid: 20,
  incomplete: 20,
  paused: 15,
  canceled: 30,
  incomplete_expired: 30,
};

/**
 * Churn risk, 0–100 (rounded, capped), the sum of:
 * - low engagement: 0.4 × (100 − engagement score), up to 40;
 * - payment failures seen on this page: 10 each, up to 30;
 * - the subscription: `canceled`/`incomplete_expired` 30, `past_due`/`unpaid`/`incomplete` 20,
 *   `paused` 15, else `cancel_at_period_end` 20, else 0.
 * Category: below 25 low, below 50 medium, below 75 high, else critical; an intervention is
 * recommended from 50. `predicted_churn_date` is the period end of a subscription set to cancel.
 */
export function calculateChurnRisk(input: ChurnInput): ChurnRiskMetrics {
  const engagement = Math.min(100, Math.max(0, input.engagementScore));
  const sub = input.subscription;
  const statusRisk = sub === null ? 0 : (STATUS_RISK[sub.status] ?? (sub.cancel_at_period_end === true ? 20 : 0));
  const score = Math.min(100, Math.round(0.4 * (100 - engagement) + Math.min(30, 10 * input.paymentFailures) + statusRisk));
  const category: ChurnRiskCategory = score < 25 ? 'low' : score < 50 ? 'medium' : score < 75 ? 'high' : 'critical';
  const metrics: ChurnRiskMetrics = {
    risk_score: score,
    risk_category: category,
    factors: { engagement_score: engagement, payment_failures: input.paymentFailures },
    intervention_recommended: score >= 50,
  };
  if (sub?.cancel_at_period_end === true && typeof sub.current_period_end === 'string') {
    metrics.predicted_churn_date = sub.current_period_end;
  }
  return metrics;
}

/** Event names of the fixed-name operations (DESIGN.md "Decisions"). */
const EVENT_NAMES = {
  trackSubscriptionStarted: 'subscription_started',
  trackSubscriptionPaused: 'subscription_paused',
  trackSubscriptionReactivated: 'subscription_reactivated',
  trackSubscriptionUpgraded: 'subscription_upgraded',
  trackSubscriptionDowngraded: 'subscription_downgraded',
  trackSubscriptionCanceled: 'subscription_canceled',
  trackTrialStarted: 'trial_started',
  trackTrialConverted: 'trial_converted',
  trackTrialExpired: 'trial_expired',
  trackPaymentSucceeded: 'payment_succeeded',
} as const;

/** Creates the operations over `send(eventName, properties)`. */
export function createSubscriptions(
  send: (event: string, properties: EventProperties | undefined) => void,
  engagementScore: () => number,
): SubscriptionOperations & {
  /** Remembers a subscription given by other means (identify traits). */
  remember(subscription: unknown): void;
  /** Forgets the subscription and the payment failures (`reset()`). */
  forget(): void;
} {
  let subscription: SubscriptionProperties | null = null;
  let paymentFailures = 0;

  function remember(properties: unknown): void {
    if (typeof properties === 'object' && properties !== null && typeof (properties as { status?: unknown }).status === 'string') {
      subscription = { ...(properties as SubscriptionProperties) };
    }
  }
  function track(name: string, properties: object | undefined): void {
    // Payment properties carry no status, so only subscriptions are remembered.
    remember(properties);
    send(name, properties as EventProperties | undefined);
  }

  const named = {} as Record<keyof typeof EVENT_NAMES, (properties: object) => void>;
  for (const [method, name] of Object.entries(EVENT_NAMES)) {
    named[method as keyof typeof EVENT_NAMES] = (properties) => track(name, properties);
  }

  return {
    ...named,
    remember,
    forget() {
      subscription = null;
      paymentFailures = 0;
    },
    trackSubscription: (eventName, properties) => track(String(eventName), properties),
    trackPaymentFailed(properties) {
      paymentFailures++;
      send('payment_failed', properties);
    },
    calculateChurnRisk: () => calculateChurnRisk({ engagementScore: engagementScore(), paymentFailures, subscription }),
    getSubscriptionData: () => (subscription === null ? null : { ...subscription }),
  };
}
