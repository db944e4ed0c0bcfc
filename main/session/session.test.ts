import { describe, expect, it, vi } from 'vitest';
import { createSessionManager } from './session.js';
import { createSafeStorage, type KeyValueStore } from './storage.js';

const TIMEOUT = 30 * 60 * 1000;

function setup(store: KeyValueStore = createSafeStorage(() => undefined), now = 1_000_000) {
  let n = 0;
  return createSessionManager({
    store,
    key: 's',
    timeout: TIMEOUT,
    newId: () => `s${++n}`,
    landing: () => ({ url: 'https://a.example/?utm_medium=email', referrer: '' }),
    now,
  });
}

describe('createSessionManager()', () => {
  it('keeps the session while activity continues and starts a new one after the timeout', () => {
    const session = setup();
    expect(session.touch(1_000_000)).toBe('s1');
    expect(session.touch(1_000_000 + TIMEOUT)).toBe('s1');
    expect(session.touch(1_000_000 + 2 * TIMEOUT)).toBe('s1');
    expect(session.touch(1_000_000 + 3 * TIMEOUT + 1)).toBe('s2');
  });

  it('continues a stored session on the next page load, unless it timed out', () => {
    const store = createSafeStorage(() => undefined);
    const first = setup(store);
    first.setChannelDetector(() => 'direct');
    first.touch(1_000_000);
    first.recordEvent('page_view', 'page');
    first.persist();
    const again = createSessionManager({ store, key: 's', timeout: TIMEOUT, newId: () => 'other', landing: () => ({ url: 'https://b.example/', referrer: '' }), now: 1_000_500 });
    expect(again.currentId(1_000_500)).toBe('s1');
    expect(again.data(1_000_500)).toMatchObject({ pageViews: 1, channel: 'direct' });
    const late = createSessionManager({ store, key: 's', timeout: TIMEOUT, newId: () => 'late', landing: () => ({ url: 'https://b.example/', referrer: '' }), now: 1_000_000 + TIMEOUT + 1 });
    expect(late.currentId(1_000_000 + TIMEOUT + 1)).toBe('late');
  });

  it('writes storage at most once a second from the per-event path', () => {
    const base = createSafeStorage(() => undefined);
    const set = vi.fn(base.set);
    const session = setup({ ...base, set });
    set.mockClear();
    for (let t = 0; t < 5000; t++) session.touch(2_000_000 + t / 10); // 500 ms of events
    expect(set.mock.calls.length).toBeLessThanOrEqual(1);
    for (let t = 0; t < 3; t++) session.touch(2_001_000 + t * 1000);
    expect(set.mock.calls.length).toBeLessThanOrEqual(4);
  });

  it('survives a corrupt stored entry', () => {
    const store = createSafeStorage(() => undefined);
    store.set('s', '{not json');
    expect(setup(store).currentId(1_000_000)).toBe('s1');
  });

  it('has no channel until the rules are set, then the landing page\'s', () => {
    const session = setup();
    expect(session.data(1_000_000).channel).toBeUndefined();
    session.setChannelDetector((url) => (url.includes('utm_medium=email') ? 'email' : 'direct'));
    expect(session.data(1_000_000).channel).toBe('email');
  });

  it('reports SessionData with counters, scores and isActive', () => {
    const session = setup();
    session.setChannelDetector(() => 'direct');
    session.touch(1_000_000);
    session.recordEvent('page_view', 'page');
    session.recordEvent('click', 'click');
    session.recordClick(1_000_100);
    session.recordScroll(40, 1_000_200);
    session.recordScroll(20, 1_000_300);
    session.recordPageChange(1_000_400);
    const data = session.data(1_000_400);
    expect(data).toMatchObject({
      sessionId: 's1',
      startTime: 1_000_000,
      duration: 400,
      pageViews: 1,
      clicks: 1,
      clickEvents: 1,
      scrollEvents: 2,
      scrollDepth: 20,
      maxScrollDepth: 40,
      pageChanges: 1,
      events: ['page_view', 'click'],
      isActive: true,
      channel: 'direct',
    });
    // time 30 × 400/300000 + clicks 20 × 1/10 + scroll 20 × 40/100 + events 10 × 2/20 = 11.04
    expect(data.engagementScore).toBe(11);
    expect(data.bounceLikelihood).toBe(89);
    const later = session.data(1_000_400 + TIMEOUT + 1);
    expect(later.isActive).toBe(false);
    expect(later.endTime).toBe(1_000_400);
  });

  it('keeps only the latest 500 event names', () => {
    const session = setup();
    for (let i = 0; i < 1234; i++) session.recordEvent(`e${i}`, 'other');
    const { events } = session.data(1_000_000);
    expect(events).toHaveLength(500);
    expect(events.at(-1)).toBe('e1233');
  });

  it('restart() starts a new session at once', () => {
    const session = setup();
    session.recordEvent('x', 'other');
    session.restart(1_000_001);
    expect(session.currentId(1_000_001)).toBe('s2');
    expect(session.data(1_000_001).events).toEqual([]);
  });
});
