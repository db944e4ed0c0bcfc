import { describe, expect, it } from 'vitest';
import { containsCardNumber, isIsoDate, validate } from './subscription-validation.js';

/** [property, value, kept?] — one fixture per rule, valid and invalid values side by side. */
const FIXTURES: Array<[string, unknown, boolean]> = [
  ['status', 'active', true],
  ['status', 'incomplete_expired', true],
  ['status', 'cancelled', false],
  ['status', 'ACTIVE', false],
  ['status', 1, false],
  ['billing_interval', 'month', true],
  ['billing_interval', 'monthly', false],
  ['payment_status', 'refunded', true],
  ['payment_status', 'declined', false],
  ['mrr', 4900, true],
  ['mrr', 0, true],
  ['mrr', 49.99, false],
  ['arr', -100, false],
  ['ltv', '4900', false],
  ['amount', 2 ** 53, false],
  ['amount', Number.NaN, false],
  ['amount', Number.POSITIVE_INFINITY, false],
  ['currency', 'eur', true],
  ['currency', 'EUR', false],
  ['currency', 'euro', false],
  ['currency', 'e1r', false],
  ['payment_method_last4', '4242', true],
  ['payment_method_last4', '0000', true],
  ['payment_method_last4', 4242, false],
  ['payment_method_last4', '424', false],
  ['payment_method_last4', '42424', false],
  ['payment_method_last4', '4242424242424242', false],
  ['payment_method_last4', '**** 4242', false],
  ['payment_method_last4', 'abcd', false],
  ['current_period_end', '2026-12-31', true],
  ['current_period_end', '2026-12-31T23:59:59Z', true],
  ['trial_end', '2026-05-01T12:00:00.123+02:00', true],
  ['trial_end', '2026-05-01T12:00', true],
  ['created_at', '2026-02-30', false],
  ['created_at', '2026-13-01', false],
  ['created_at', '31/12/2026', false],
  ['created_at', 'yesterday', false],
  ['canceled_at', 1767225599000, false],
  ['is_trial', true, true],
  ['is_trial', 'true', false],
  ['cancel_at_period_end', false, true],
  ['cancel_at_period_end', 0, false],
  ['plan_id', 'pro', true],
  ['plan_id', 42, false],
  ['provider', 'manual', true],
  ['previous_plan', 'basic', true],
  ['seats', 3, true],
  ['note', null, true],
  ['nested', { a: 1 }, false],
  ['fn', () => 1, false],
  ['card', '4242 4242 4242 4242', false],
  ['provider_customer_id', 'cus_4242424242424242', false],
  ['memo', 'order 4000-0566-5566-5556', false],
];

describe('validate(properties)', () => {
  it.each(FIXTURES)('%s = %j → kept: %s', (key, value, kept) => {
    const [dropped, valid] = validate({ [key]: value });
    expect(dropped).toEqual(kept ? [] : [key]);
    expect(Object.hasOwn(valid!, key)).toBe(kept);
    if (kept) expect(valid![key]).toBe(value);
  });

  it('keeps the valid properties of an object with invalid ones', () => {
    const [dropped, valid] = validate({
      status: 'active',
      mrr: 12.5,
      currency: 'usd',
      payment_method_last4: '4111111111111111',
      plan_name: 'Pro',
    });
    expect(dropped).toEqual(['mrr', 'payment_method_last4']);
    expect(valid).toEqual({ status: 'active', currency: 'usd', plan_name: 'Pro' });
  });

  it('treats undefined as absent, not invalid', () => {
    expect(validate({ status: 'active', mrr: undefined })).toEqual([[], { status: 'active', mrr: undefined }]);
  });

  it('answers undefined for something that is not an object, and skips __proto__', () => {
    expect(validate(undefined)).toEqual([[], undefined]);
    expect(validate('active')).toEqual([[], undefined]);
    const [, valid] = validate(JSON.parse('{"__proto__": {"polluted": 1}, "status": "paused"}'));
    expect(valid).toEqual({ status: 'paused' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('containsCardNumber(text)', () => {
  it.each([
    ['4242424242424242', true],
    ['4111 1111 1111 1111', true],
    ['5555-5555-5555-4444', true],
    ['378282246310005', true], // 15-digit Amex
    ['4242424242424241', false], // fails Luhn
    ['4242', false],
    ['1234567890', false],
    ['order 42, invoice 2026-05-01', false],
  ])('%s → %s', (text, expected) => {
    expect(containsCardNumber(text)).toBe(expected);
  });
});

describe('isIsoDate(value)', () => {
  it('accepts leap days only in leap years', () => {
    expect(isIsoDate('2028-02-29')).toBe(true);
    expect(isIsoDate('2026-02-29')).toBe(false);
  });
});
