import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Analytics } from '../analytics.js';
import { EMPTY_SESSION } from '../session/empty-session.js';
import { inProcessClient } from '../../test-support/client/facade-fakes.js';
import { createDeferredAnalytics } from './deferred-analytics.js';

const clients: Analytics[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
  localStorage.clear();
});

function made() {
  const { analytics } = inProcessClient();
  clients.push(analytics);
  return { client: analytics, deferred: createDeferredAnalytics(analytics.config) };
}

const microtask = (): Promise<void> => Promise.resolve();

describe('the stand-in’s session store', () => {
  it('answers the empty session before the client exists, then the client’s', () => {
    const { client, deferred } = made();
    expect(deferred.analytics.session.getSnapshot()).toBe(EMPTY_SESSION);
    expect(deferred.analytics.getSessionData()).toEqual(EMPTY_SESSION);
    deferred.attach(client);
    expect(deferred.analytics.session.getSnapshot()).toBe(client.session.getSnapshot());
  });

  it('moves a listener subscribed early to the client’s store, telling it once at attach', async () => {
    const { client, deferred } = made();
    const early = vi.fn();
    const gone = vi.fn();
    deferred.analytics.session.subscribe(early);
    deferred.analytics.session.subscribe(gone)();
    deferred.attach(client);
    expect(early).toHaveBeenCalledTimes(1);
    client.track('after');
    await microtask();
    expect(early).toHaveBeenCalledTimes(2);
    expect(gone).not.toHaveBeenCalled();
  });

  it('unsubscribes a moved listener, and subscribes a later one to the client directly', async () => {
    const { client, deferred } = made();
    const early = vi.fn();
    const unsubscribe = deferred.analytics.session.subscribe(early);
    deferred.attach(client);
    unsubscribe();
    const late = vi.fn();
    deferred.analytics.session.subscribe(late);
    client.track('x');
    await microtask();
    expect(early).toHaveBeenCalledTimes(1);
    expect(late).toHaveBeenCalledTimes(1);
  });
});
