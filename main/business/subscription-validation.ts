/**
 * Validation of SubscriptionProperties and PaymentEventProperties (docs/decisions.md, "Wire mapping
 * of every client call"): every property is checked against its rule, and one that fails is
 * dropped, so an invalid value (a card number given by mistake) is never sent as is. Pure, no I/O;
 * `validate()` answers `[dropped, value]` rather than throwing (superstruct's convention;
 * docs/architecture.md, "Conventions").
 *
 * Rules:
 * - `status`: active, trialing, past_due, canceled, paused, incomplete, incomplete_expired, unpaid
 * - `billing_interval`: day, week, month, year
 * - `payment_status`: succeeded, failed, pending, refunded
 * - `mrr`, `arr`, `ltv`, `amount`: a non-negative integer (cents), at most 2^53 − 1
 * - `currency`: three lower-case letters (`eur`, `usd`)
 * - `payment_method_last4`: exactly four digits, as a string
 * - `billing_cycle_anchor`, `current_period_start`, `current_period_end`, `trial_start`,
 *   `trial_end`, `canceled_at`, `created_at`, `updated_at`: an ISO 8601 date (`2026-05-01`) or
 *   date-time (`2026-05-01T12:00:00Z`, offset optional), of a day that exists
 * - `is_trial`, `cancel_at_period_end`: a boolean
 * - the other named fields (`plan_id`, `provider`, `failure_reason`, `previous_plan`, …): a string
 * - any other key: a string, number, boolean, null or undefined (objects and functions are dropped)
 * - and whatever the key: a string holding something that looks like a payment card number (13 to
 *   19 digits, spaces or dashes between them allowed, passing the Luhn check) is dropped, so a card
 *   number given by mistake (in `payment_method_last4` or any other field) is never sent.
 */
import type { EventPropertyValue } from '../../protocol/event-model/analytics-event.js';

/** Properties that passed validation: scalar values only. */
export type ValidProperties = Record<string, EventPropertyValue>;

type Rule = (value: unknown) => boolean;

const isString: Rule = (value) => typeof value === 'string';
const oneOf = (values: string): Rule => {
  const allowed = new Set(values.split(' '));
  return (value) => allowed.has(value as string);
};
const matches =
  (pattern: RegExp): Rule =>
  (value) =>
    typeof value === 'string' && pattern.test(value);

const ISO_DATE = /^\d{4}-\d\d-\d\d(?:T\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:?\d\d)?)?$/;

/** An ISO 8601 date or date-time of a day that exists (Date.parse alone accepts 2026-02-30). */
export const isIsoDate: Rule = (value) => {
  if (typeof value !== 'string' || !ISO_DATE.test(value) || Number.isNaN(Date.parse(value))) return false;
  const day = value.slice(0, 10);
  const time = Date.parse(day);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(day);
};

/** A non-negative integer amount in cents. */
export const isCents: Rule = (value) => Number.isSafeInteger(value) && (value as number) >= 0;

const RULES: Record<string, Rule> = {
  status: oneOf('active trialing past_due canceled paused incomplete incomplete_expired unpaid'),
  billing_interval: oneOf('day week month year'),
  payment_status: oneOf('succeeded failed pending refunded'),
  currency: matches(/^[a-z]{3}$/),
  payment_method_last4: matches(/^\d{4}$/),
  is_trial: (value) => typeof value === 'boolean',
  cancel_at_period_end: (value) => typeof value === 'boolean',
};
for (const key of ['mrr', 'arr', 'ltv', 'amount']) RULES[key] = isCents;
for (const key of 'billing_cycle_anchor current_period_start current_period_end trial_start trial_end canceled_at created_at updated_at'.split(' ')) {
  RULES[key] = isIsoDate;
}
for (const key of 'plan_id plan_name plan_tier payment_method_type payment_method_brand cancellation_reason provider provider_customer_id provider_subscription_id failure_reason invoice_id charge_id previous_plan'.split(' ')) {
  RULES[key] = isString;
}

/** 13–19 digits, single spaces or dashes between them allowed. */
const DIGIT_RUN = /\d(?:[ -]?\d){12,18}/g;

/** True when `text` holds a Luhn-valid run of 13–19 digits: what a payment card number looks like. */
export function containsCardNumber(text: string): boolean {
  for (const run of text.match(DIGIT_RUN) ?? []) {
    const digits = run.replace(/\D/g, '');
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let digit = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
      sum += digit;
    }
    if (sum % 10 === 0) return true;
  }
  return false;
}

/**
 * Checks every property of `input` (subscription or payment properties, see the module's rules).
 * @returns the names of the dropped properties (never their values, which may be secrets) and a
 *   copy of `input` without them; `undefined` when `input` is not an object.
 */
export function validate(input: unknown): [dropped: string[], value: ValidProperties | undefined] {
  if (typeof input !== 'object' || input === null) return [[], undefined];
  const dropped: string[] = [];
  const value: ValidProperties = {};
  const source = input as Record<string, unknown>;
  for (const key in source) {
    if (key === '__proto__' || !Object.hasOwn(source, key)) continue;
    const item = source[key];
    const rule = RULES[key];
    const ok =
      (rule === undefined
        ? item === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof item)
        : item === undefined || rule(item)) && !(typeof item === 'string' && containsCardNumber(item));
    if (ok) value[key] = item as EventPropertyValue;
    else dropped.push(key);
  }
  return [dropped, value];
}
