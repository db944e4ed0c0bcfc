import { describe, expect, it } from 'vitest';
import { isBackendEvent } from '../backend-event.js';
import { toBackendEvent } from './event-mapping.js';
import { makeEvent } from '../../test-support/worker/delivery-fakes.js';
import type { AnalyticsEvent } from './analytics-event.js';

const context = {
  page: { title: 'Home', url: 'https://shop.test/?q=1', path: '/', referrer: '', search: '?q=1' },
  userAgent: 'Mozilla/5.0 (test)',
  screen: { width: 1280, height: 800 },
  library: { name: 'service-analytics', version: '0.1.0' },
  locale: 'en-GB',
};

function event(overrides: Partial<AnalyticsEvent>): AnalyticsEvent {
  return makeEvent(1, { context, ...overrides });
}

describe('toBackendEvent(event)', () => {
  it('maps track(name, properties) to event_type = the name, properties = the properties', () => {
    const out = toBackendEvent(event({ type: 'track', event: 'Checkout Started', properties: { plan: 'pro', seats: 3, trial: false, coupon: null } }));
    expect(out.event_type).toBe('Checkout Started');
    expect(out.properties).toMatchObject({ plan: 'pro', seats: 3, trial: false, coupon: null });
    expect(isBackendEvent(out)).toBe(true);
  });

  it('maps page(properties) to page_view with page and screen as JSON strings', () => {
    const out = toBackendEvent(event({ type: 'page', properties: { title: 'Pricing', path: '/pricing' } }));
    expect(out.event_type).toBe('page_view');
    expect(JSON.parse(out.properties?.page as string)).toEqual({ ...context.page, title: 'Pricing', path: '/pricing' });
    expect(JSON.parse(out.properties?.screen as string)).toEqual({ width: 1280, height: 800 });
    // The page properties travel inside properties.page, not flat beside it.
    expect(out.properties).not.toHaveProperty('title');
    expect(isBackendEvent(out)).toBe(true);
  });

  it('maps identify(userId, traits) to user_identify with user_id and the traits, objects JSON-encoded', () => {
    const subscription = { status: 'active', plan_id: 'pro', mrr: 4900 };
    const traits = { email: 'ada@example.com', subscription } as unknown as AnalyticsEvent['properties'];
    const out = toBackendEvent(event({ type: 'identify', userId: 'user-42', properties: traits }));
    expect(out.event_type).toBe('user_identify');
    expect(out.user_id).toBe('user-42');
    expect(out.properties?.email).toBe('ada@example.com');
    expect(JSON.parse(out.properties?.subscription as string)).toEqual(subscription);
    expect(isBackendEvent(out)).toBe(true);
  });

  it('maps alias(newId, previousId) to user_alias with user_id = newId and properties.previous_id', () => {
    const out = toBackendEvent(event({ type: 'alias', userId: 'user-new', previousId: 'anon-old' }));
    expect(out.event_type).toBe('user_alias');
    expect(out.user_id).toBe('user-new');
    expect(out.properties?.previous_id).toBe('anon-old');
  });

  it('carries event_id, ISO ms UTC timestamp, session_id, user_agent and the context on every event', () => {
    const out = toBackendEvent(event({ id: '0190c3b2-aaaa-7bbb-8ccc-000000000001', timestamp: Date.UTC(2026, 10, 22, 10, 0, 0, 7) }));
    expect(out).toMatchObject({
      event_id: '0190c3b2-aaaa-7bbb-8ccc-000000000001',
      timestamp: '2026-11-22T10:00:00.007Z',
      session_id: 'sess-1',
      user_agent: 'Mozilla/5.0 (test)',
    });
    expect(out.user_id).toBeUndefined();
    expect(out.properties).toMatchObject({ anonymous_id: 'anon-1', locale: 'en-GB' });
    expect(JSON.parse(out.properties?.library as string)).toEqual(context.library);
    expect(JSON.parse(out.properties?.page as string)).toEqual(context.page);
  });

  it('adds the time zone it is given to an event whose context has none; a context time zone wins', () => {
    expect(toBackendEvent(event({}), 'Europe/Paris').properties?.timezone).toBe('Europe/Paris');
    expect(toBackendEvent(event({})).properties).not.toHaveProperty('timezone');
    expect(toBackendEvent(event({ context: { ...context, timezone: 'Asia/Tokyo' } }), 'Europe/Paris').properties?.timezone).toBe('Asia/Tokyo');
  });

  it('lets a property of the call win over a context member of the same name', () => {
    const out = toBackendEvent(event({ properties: { locale: 'fr-FR' } }));
    expect(out.properties?.locale).toBe('fr-FR');
  });

  it('flattens the super properties of the context, the call winning, on page views too', () => {
    const withSupers = { ...context, properties: { plan: 'pro', groups: '{"company":"acme"}' } };
    const track = toBackendEvent(event({ type: 'track', event: 'x', properties: { plan: 'team' }, context: withSupers }));
    expect(track.properties).toMatchObject({ plan: 'team', groups: '{"company":"acme"}' });
    const page = toBackendEvent(event({ type: 'page', context: withSupers }));
    expect(page.properties).toMatchObject({ plan: 'pro', groups: '{"company":"acme"}' });
    expect(JSON.parse(page.properties?.page as string)).toMatchObject(context.page);
    expect(page.properties).not.toHaveProperty('properties');
  });

  it('says webdriver: true only for an automated page', () => {
    expect(toBackendEvent(event({ context: { ...context, webdriver: true } })).properties).toMatchObject({ webdriver: true });
    expect(toBackendEvent(event({})).properties).not.toHaveProperty('webdriver');
  });

  it('keeps only wire scalars: drops undefined and functions, NaN becomes null, __proto__ is dropped', () => {
    const properties = JSON.parse('{"__proto__": "x", "ok": 1}') as Record<string, unknown>;
    Object.assign(properties, { gone: undefined, fn: () => 1, nan: Number.NaN, list: [1, 2] });
    const out = toBackendEvent(event({ properties: properties as AnalyticsEvent['properties'] }));
    const props = out.properties as Record<string, unknown>;
    expect(Object.hasOwn(props, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(props)).toBe(Object.prototype);
    expect(props).not.toHaveProperty('gone');
    expect(props).not.toHaveProperty('fn');
    expect(props.nan).toBeNull();
    expect(props.list).toBe('[1,2]');
    expect(props.ok).toBe(1);
    expect(isBackendEvent(out)).toBe(true);
  });

  it('survives a cyclic property value by dropping it', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const out = toBackendEvent(event({ properties: { cyclic, kept: 'yes' } as unknown as AnalyticsEvent['properties'] }));
    expect(out.properties).not.toHaveProperty('cyclic');
    expect(out.properties?.kept).toBe('yes');
  });
});
