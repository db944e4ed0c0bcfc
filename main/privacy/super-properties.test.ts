import { describe, expect, it } from 'vitest';
import { inProcessClientsPerTest, receivedEvents } from '../../test-support/client/facade-fakes.js';
import { createSafeStorage } from '../session/storage.js';
import { createSuperProperties } from './super-properties.js';

const client = inProcessClientsPerTest();

describe('createSuperProperties(store, prefix).withContext(context)', () => {
  it('answers the context itself while there are none, and one shared object per context while they do not change', () => {
    const supers = createSuperProperties(createSafeStorage(() => undefined), 'p:');
    const context = { locale: 'en' };
    expect(supers.withContext(context)).toBe(context);
    supers.register({ plan: 'pro' });
    const first = supers.withContext(context);
    expect(first).toEqual({ locale: 'en', properties: { plan: 'pro' } });
    expect(supers.withContext(context)).toBe(first);
    supers.register({ seats: 3 });
    expect(supers.withContext(context)).not.toBe(first);
    expect(supers.withContext(context).properties).toEqual({ plan: 'pro', seats: 3 });
  });

  it('starts without them when what is stored cannot be read', () => {
    const store = createSafeStorage(() => localStorage);
    localStorage.setItem('p:properties', '{not json');
    expect(createSuperProperties(store, 'p:').registered()).toEqual({});
  });
});

describe('register(), unregister(), getRegistered()', () => {
  it('adds the properties to every later event, the call’s own winning, and on page views too', async () => {
    const { analytics, server } = client();
    analytics.track('before');
    analytics.register({ plan: 'pro', app_version: '2.1' });
    analytics.track('after', { plan: 'enterprise' });
    analytics.page();
    analytics.unregister('app_version');
    analytics.track('last');
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events[0]!.properties).not.toHaveProperty('plan');
    expect(events[1]!.properties).toMatchObject({ plan: 'enterprise', app_version: '2.1' });
    expect(events[2]!.properties).toMatchObject({ plan: 'pro', app_version: '2.1' });
    expect(events[3]!.properties).toMatchObject({ plan: 'pro' });
    expect(events[3]!.properties).not.toHaveProperty('app_version');
    expect(analytics.getRegistered()).toEqual({ plan: 'pro' });
  });

  it('are stored like the user id, kept by the next load, cleared by reset()', () => {
    const first = client();
    first.analytics.register({ plan: 'pro' });
    const second = client();
    expect(second.analytics.getRegistered()).toEqual({ plan: 'pro' });
    second.analytics.reset();
    expect(second.analytics.getRegistered()).toEqual({});
    expect(client().analytics.getRegistered()).toEqual({});
  });

  it('getRegistered() answers a copy', () => {
    const { analytics } = client();
    analytics.register({ a: 1 });
    analytics.getRegistered().a = 2;
    expect(analytics.getRegistered()).toEqual({ a: 1 });
  });
});

describe('group(type, key, traits)', () => {
  it('sends group_identify and tags later events with the groups, kept by the next load', async () => {
    const { analytics, server } = client();
    analytics.group('company', 'acme', { name: 'Acme Inc', seats: 40 });
    analytics.group('team', 'design');
    analytics.track('x');
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events[0]).toMatchObject({
      event_type: 'group_identify',
      properties: { group_type: 'company', group_key: 'acme', name: 'Acme Inc', seats: 40 },
    });
    expect(JSON.parse((events[2]!.properties as { groups: string }).groups)).toEqual({ company: 'acme', team: 'design' });

    const next = client();
    next.analytics.track('y');
    await next.analytics.flush();
    expect(JSON.parse((receivedEvents(next.server)[0]!.properties as { groups: string }).groups)).toEqual({ company: 'acme', team: 'design' });
  });

  it('warns and sends nothing without a type and a key', async () => {
    const { analytics, server } = client();
    analytics.group('', 'acme');
    analytics.group('company', '' as string);
    analytics.track('x');
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['x']);
    expect(receivedEvents(server)[0]!.properties).not.toHaveProperty('groups');
  });
});
