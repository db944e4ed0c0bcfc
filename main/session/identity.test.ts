import { describe, expect, it } from 'vitest';
import { createIdentity } from './identity.js';
import { createSafeStorage } from './storage.js';

function setup(initialUserId?: string) {
  const store = createSafeStorage(() => undefined);
  let n = 0;
  const make = () => createIdentity({ store, keyPrefix: 'p:', newId: () => `id-${++n}`, initialUserId });
  return { store, make };
}

describe('createIdentity()', () => {
  it('creates an anonymous id once and reuses the stored one', () => {
    const { make } = setup();
    const a = make();
    expect(a.anonymousId()).toBe('id-1');
    expect(make().anonymousId()).toBe('id-1');
  });

  it('has no user id until one is set, and persists it', () => {
    const { make } = setup();
    const a = make();
    expect(a.userId()).toBeNull();
    a.setUserId('u1');
    expect(make().userId()).toBe('u1');
    a.setUserId(null);
    expect(make().userId()).toBeNull();
  });

  it('takes the configured user id over a stored one', () => {
    const { store } = setup();
    store.set('p:user_id', 'stored');
    const identity = createIdentity({ store, keyPrefix: 'p:', newId: () => 'x', initialUserId: 'configured' });
    expect(identity.userId()).toBe('configured');
  });

  it('reset() clears the user and issues a new anonymous id', () => {
    const { make } = setup();
    const a = make();
    a.setUserId('u1');
    a.reset();
    expect(a.userId()).toBeNull();
    expect(a.anonymousId()).toBe('id-2');
    expect(make().anonymousId()).toBe('id-2');
  });
});
