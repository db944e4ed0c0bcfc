import fc from 'fast-check';
import { is } from 'superstruct';
import { describe, expect, it } from 'vitest';
import { BackendEventLean, BackendEventStruct, explainInvalidEvent, isBackendEvent } from './backend-event.js';
import { isIsoTimestamp } from './iso-timestamp.js';
import { LIMITS } from './limits.js';

const valid = {
  event_id: '0190f5c2-7b1a-7000-8000-000000000001',
  event_type: 'page_view',
  user_id: 'u1',
  session_id: 's1',
  timestamp: '2026-11-22T10:00:00.000Z',
  properties: { page: '{"path":"/"}', n: 1.5, ok: true, nothing: null },
  user_agent: 'Mozilla/5.0',
};

describe('isBackendEvent(value)', () => {
  it('accepts a full event and the minimal one', () => {
    expect(isBackendEvent(valid)).toBe(true);
    expect(isBackendEvent({ event_type: 'x' })).toBe(true);
  });

  it.each([
    ['no event_type', { ...valid, event_type: undefined }, 'event_type'],
    ['an empty event_type', { ...valid, event_type: '' }, 'event_type'],
    ['a numeric user_id', { ...valid, user_id: 7 }, 'user_id'],
    ['a bad timestamp', { ...valid, timestamp: '22/11/2026' }, 'timestamp'],
    ['an impossible date', { ...valid, timestamp: '2026-02-31T99:00:00Z' }, 'timestamp'],
    ['nested properties', { ...valid, properties: { a: { b: 1 } } }, 'properties.a'],
    ['array properties', { ...valid, properties: [1] }, 'properties'],
    ['a __proto__ property', { ...valid, properties: JSON.parse('{"__proto__":1}') as object }, 'properties'],
    ['too many properties', { ...valid, properties: Object.fromEntries(Array.from({ length: LIMITS.maxPropertyCount + 1 }, (_, i) => [`k${i}`, i])) }, 'properties'],
    ['a long id', { ...valid, event_id: 'x'.repeat(LIMITS.maxIdLength + 1) }, 'event_id'],
    ['an array', [valid], ''],
  ])('refuses %s and explains it by field', (_name, value, field) => {
    expect(isBackendEvent(value)).toBe(false);
    expect(is(value, BackendEventStruct)).toBe(false);
    const message = explainInvalidEvent(value);
    if (field) expect(message.startsWith(`${field}:`) || message.startsWith(field)).toBe(true);
    expect(message.length).toBeGreaterThan(5);
  });

  it('explains an event whose later failure holds a value that cannot become text (an own toString that is no function)', () => {
    // Found by the bad-input suite: superstruct prints each failing value into its message, and
    // `${value}` throws for such an object; the first failure is a key too long, the second this value.
    const properties = JSON.parse(`{"${'x'.repeat(LIMITS.maxPropertyKeyLength + 1)}":1,"b":{"toString":"~"}}`) as object;
    const message = explainInvalidEvent({ ...valid, properties });
    expect(message.startsWith('properties')).toBe(true);
  });

  // Inputs come from JSON.parse, which never makes null-prototype objects: generate none.
  it('agrees with the detailed struct on generated input', () => {
    const scalar = fc.oneof(fc.string({ maxLength: 20 }), fc.double(), fc.boolean(), fc.constant(null), fc.integer());
    const anyValue = fc.oneof(scalar, fc.dictionary(fc.string({ maxLength: 5 }), scalar, { maxKeys: 3, noNullPrototype: true }), fc.array(scalar, { maxLength: 2 }));
    const event = fc.record(
      {
        event_id: fc.oneof(fc.string({ maxLength: 10 }), fc.constant(null), fc.integer()),
        event_type: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()),
        user_id: fc.oneof(fc.string({ maxLength: 5 }), fc.constant(null)),
        timestamp: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string({ maxLength: 8 })),
        properties: fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), anyValue, { maxKeys: 4, noNullPrototype: true }), anyValue),
        user_agent: fc.oneof(fc.string({ maxLength: 5 }), fc.integer()),
      },
      { requiredKeys: [], noNullPrototype: true },
    );
    fc.assert(
      fc.property(event, (e) => isBackendEvent(e) === is(e, BackendEventStruct) && is(e, BackendEventLean) === isBackendEvent(e)),
      { numRuns: 2000 },
    );
  });
});

describe('isIsoTimestamp(value)', () => {
  it.each(['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00.123+02:00'])('accepts %s', (t) => {
    expect(isIsoTimestamp(t)).toBe(true);
  });
  it.each(['2026-11-22', '1700000000000', 'now', '2026-11-22 10:00:00Z'])('refuses %s', (t) => {
    expect(isIsoTimestamp(t)).toBe(false);
  });
});
