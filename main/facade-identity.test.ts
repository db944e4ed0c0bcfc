/**
 * Identity and session rules as the facade applies them (docs/decisions.md, "Session rules
 * (`sessionTimeout`)" and "`reset()`").
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Analytics } from './analytics.js';
import { inProcessClient, pageObserversReady, receivedEvents } from '../test-support/client/facade-fakes.js';

const clients: Analytics[] = [];
let clock = 1_700_000_000_000;

function client(config: Parameters<typeof inProcessClient>[0] = {}) {
  const made = inProcessClient(config, { now: () => clock });
  clients.push(made.analytics);
  return made;
}

beforeEach(() => {
  localStorage.clear();
  clock = 1_700_000_000_000;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('identity', () => {
  it('keeps the anonymous id across clients (page loads) through localStorage', () => {
    const first = client().analytics.getAnonymousId();
    expect(first).not.toBe('');
    expect(client().analytics.getAnonymousId()).toBe(first);
  });

  it('getUserId() is null until set; setUserId() sets it without sending anything', async () => {
    const { analytics, server } = client();
    expect(analytics.getUserId()).toBeNull();
    analytics.setUserId('u1');
    expect(analytics.getUserId()).toBe('u1');
    await analytics.flush();
    expect(server.requests).toHaveLength(0);
    expect(client().analytics.getUserId()).toBe('u1');
  });

  it('config.userId is the initial user', () => {
    expect(client({ userId: 'configured' }).analytics.getUserId()).toBe('configured');
  });

  it('reset() clears the user, issues a new anonymous id and a new session, and sends nothing', async () => {
    const { analytics, server } = client();
    analytics.identify('u1');
    await analytics.flush();
    const anonymous = analytics.getAnonymousId();
    const session = analytics.getSessionId();
    analytics.reset();
    expect(analytics.getUserId()).toBeNull();
    expect(analytics.getAnonymousId()).not.toBe(anonymous);
    expect(analytics.getSessionId()).not.toBe(session);
    expect(analytics.getQueueSize()).toBe(0);
    analytics.track('after_reset');
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events).toHaveLength(2);
    expect(events[1]!.user_id).toBeUndefined();
    expect(events[1]!.session_id).toBe(analytics.getSessionId());
    expect((events[1]!.properties as Record<string, unknown>).anonymous_id).toBe(analytics.getAnonymousId());
  });
});

describe('sessions', () => {
  it('starts a new session after sessionTimeout of inactivity, not before', async () => {
    const { analytics, server } = client({ sessionTimeout: 60_000 });
    analytics.track('one');
    const first = analytics.getSessionId();
    clock += 59_000;
    analytics.track('two');
    expect(analytics.getSessionId()).toBe(first);
    clock += 60_001;
    analytics.track('three');
    const second = analytics.getSessionId();
    expect(second).not.toBe(first);
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.session_id)).toEqual([first, first, second]);
  });

  it('continues a stored session on the next page load within the timeout', () => {
    const a = client().analytics;
    a.track('x');
    a.getSessionData();
    const id = a.getSessionId();
    clock += 1000;
    expect(client().analytics.getSessionId()).toBe(id);
  });

  it('getSessionData() reports the ended session; getActiveSession() starts the next one', () => {
    const { analytics } = client({ sessionTimeout: 1000 });
    analytics.track('x');
    const first = analytics.getSessionData();
    expect(first).toMatchObject({ isActive: true, events: ['x'], pageViews: 0 });
    clock += 5000;
    const ended = analytics.getSessionData();
    expect(ended).toMatchObject({ sessionId: first.sessionId, isActive: false, endTime: first.startTime });
    const active = analytics.getActiveSession();
    expect(active.sessionId).not.toBe(first.sessionId);
    expect(active).toMatchObject({ isActive: true, events: [], startTime: clock });
  });

  it('SessionData counts pages, clicks, events and carries scores and the channel', async () => {
    const { analytics } = client();
    await pageObserversReady();
    analytics.page();
    analytics.track('a');
    document.body.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    clock += 60_000;
    analytics.track('b');
    const data = analytics.getSessionData();
    expect(data).toMatchObject({ pageViews: 1, clicks: 1, events: ['page_view', 'a', 'b'], channel: 'direct', duration: 60_000 });
    // happy-dom lays nothing out: a document of height 0 counts as seen to the bottom (100 %).
    // time 30 × 60000/300000 + clicks 20 × 1/10 + scroll 20 × 100/100 + events 10 × 3/20 = 29.5
    expect(data).toMatchObject({ scrollDepth: 100, maxScrollDepth: 100, engagementScore: 30, bounceLikelihood: 70 });
    expect(analytics.calculateEngagementScore()).toBe(30);
  });
});
