/**
 * Subscription, trial and payment events (named in docs/decisions.md, "Wire mapping of every client
 * call"), the remembered subscription for `getSubscriptionData()`, and the inputs of
 * `calculateChurnRisk()`. Part of the lazily loaded `business-module.ts` chunk (the main thread
 * forwards to it, `business-operations.ts`).
 *
 * Decisions:
 * - Properties are validated (`subscription-validation.ts`): a property that breaks its rule is
 *   dropped and the rest is sent; the debug log names the dropped keys, never their values. The
 *   call itself is not refused, so an event with a mistyped field is still counted.
 * - The latest subscription-event or `identify()` subscription with a valid `status` replaces the
 *   remembered one (no merge, so a stale field cannot linger). Payment events never change it.
 * - State (subscription, payment failures, last active day) is kept in memory and in localStorage
 *   (`service-analytics:<projectId>:billing`), so it survives reloads; `reset()` clears it, and so
 *   does `identify()` with a user id other than the current one.
 * - Payment failures count `trackPaymentFailed` calls; `trackPaymentSucceeded` resets them to 0
 *   (the customer's payment problem is resolved).
 * - Recency: the UTC day of the last page load is stored; `days_since_last_active` is the number of
 *   days between the stored day and the day of this page load (0 on a first visit).
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import { calculateChurnRisk } from './churn-risk.js';
import type { Logger } from '../logger.js';
import type { KeyValueStore } from '../session/storage.js';
import type { ChurnRiskMetrics, PaymentEventProperties, SubscriptionProperties } from './subscription-types.js';
import { type ValidProperties, validate } from './subscription-validation.js';

/** Subscription operations of the client. */
export interface SubscriptionOperations {
  /** Sends `eventName` with the validated properties; remembers them as the subscription when they have a valid `status`. */
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
  /** `payment_failed`; counted for the churn risk until the next `payment_succeeded`. */
  trackPaymentFailed(properties: PaymentEventProperties): void;
  /** `payment_succeeded`; resets the payment-failure count. */
  trackPaymentSucceeded(properties: PaymentEventProperties): void;
  /**
   * The churn-risk estimate over this client's state (formula: `calculateChurnRisk` of
   * `churn-risk.ts`); the neutral low-risk fallback until the lazily loaded module has arrived.
   */
  calculateChurnRisk(): ChurnRiskMetrics;
  /** A copy of the remembered subscription, or null (also until the lazily loaded module has arrived). */
  getSubscriptionData(): SubscriptionProperties | null;
}

/** The operations plus what the facade needs from them. */
export interface Subscriptions extends SubscriptionOperations {
  /**
   * Validates and remembers (when its `status` is valid) the subscription given to `identify()`.
   * @returns the validated copy to send in its place, or undefined when `subscription` is not an object.
   */
  remember(subscription: unknown): ValidProperties | undefined;
  /** Forgets the subscription, the payment failures and the recency (`reset()`, another user). */
  forget(): void;
}

/** Options of {@link createSubscriptions}. */
export interface SubscriptionsOptions {
  /** Sends one event through the facade's funnel. */
  send(event: string, properties: EventProperties | undefined): void;
  store: KeyValueStore;
  /** Storage key of the state, per project. */
  key: string;
  now(): number;
  /** The current session's engagement score, 0–100. */
  engagementScore(): number;
  log: Logger;
}

/** The stored state. */
interface Stored {
  /** The subscription. */
  s: SubscriptionProperties | null;
  /** Payment failures. */
  f: number;
  /** The UTC day number of the last page load. */
  d: number;
}

const DAY_MS = 86_400_000;

/** The fixed-name subscription and trial operations, made from name lists in {@link createSubscriptions}. */
type NamedOperation = Exclude<
  keyof SubscriptionOperations,
  'trackSubscription' | 'trackPaymentFailed' | 'trackPaymentSucceeded' | 'calculateChurnRisk' | 'getSubscriptionData'
>;

/** Creates the operations; reads the stored state once and records today as the last active day. */
export function createSubscriptions(options: SubscriptionsOptions): Subscriptions {
  const { send, store, key, log } = options;
  const today = Math.floor(options.now() / DAY_MS);
  let state: Stored = { s: null, f: 0, d: Number.NaN };
  try {
    const stored = JSON.parse(store.get(key) ?? 'null') as Partial<Stored> | null;
    state.s = asSubscription(validate(stored?.s)[1]);
    state.f = Number.isSafeInteger(stored?.f) ? Math.max(0, stored!.f!) : 0;
    if (Number.isSafeInteger(stored?.d)) state.d = stored!.d!;
  } catch {
    // A corrupt entry starts afresh.
  }
  let daysSinceLastActive = Math.max(0, today - state.d) || 0;
  if (state.d !== today) save({ d: today });

  function save(change: Partial<Stored>): void {
    state = { ...state, ...change };
    store.set(key, JSON.stringify(state));
  }

  function checked(op: string, properties: unknown): ValidProperties | undefined {
    const [dropped, valid] = validate(properties);
    if (dropped.length > 0) log.debug(`${op}(): invalid properties not sent: ${dropped.join(', ')}`);
    return valid;
  }

  function track(op: string, event: string, properties: unknown, subscription: boolean): void {
    const valid = checked(op, properties);
    const s = subscription ? asSubscription(valid) : null;
    if (s !== null) save({ s });
    send(event, valid);
  }

  const named: Record<string, (properties: unknown) => void> = {};
  for (const [prefix, event, names] of [
    ['trackSubscription', 'subscription_', 'Started Paused Reactivated Upgraded Downgraded Canceled'],
    ['trackTrial', 'trial_', 'Started Converted Expired'],
  ] as const) {
    for (const name of names.split(' ')) named[prefix + name] = (p) => track(prefix + name, event + name.toLowerCase(), p, true);
  }

  const operations: Omit<Subscriptions, NamedOperation> = {
    trackSubscription(eventName, properties) {
      if (typeof eventName !== 'string' || eventName === '') return log.debug('trackSubscription() needs an event name; ignored');
      track('trackSubscription', eventName, properties, true);
    },
    trackPaymentFailed(properties) {
      save({ f: state.f + 1 });
      send('payment_failed', checked('trackPaymentFailed', properties));
    },
    trackPaymentSucceeded(properties) {
      if (state.f !== 0) save({ f: 0 });
      send('payment_succeeded', checked('trackPaymentSucceeded', properties));
    },
    calculateChurnRisk: () =>
      calculateChurnRisk({
        engagementScore: options.engagementScore(),
        daysSinceLastActive,
        paymentFailures: state.f,
        subscription: state.s,
        now: options.now(),
      }),
    getSubscriptionData: () => (state.s === null ? null : { ...state.s }),
    remember(subscription) {
      const valid = checked('identify', subscription);
      const s = asSubscription(valid);
      if (s !== null) save({ s });
      return valid;
    },
    forget() {
      daysSinceLastActive = 0;
      save({ s: null, f: 0, d: Math.floor(options.now() / DAY_MS) });
    },
  };
  return { ...(named as Record<NamedOperation, (properties: SubscriptionProperties) => void>), ...operations };
}

/** The validated properties as a subscription: only with a (valid) status. */
function asSubscription(valid: ValidProperties | undefined): SubscriptionProperties | null {
  return valid?.status === undefined ? null : ({ ...valid } as SubscriptionProperties);
}
