import { afterEach, describe, expect, it, vi } from 'vitest';
import { globalTimers } from '../delivery/delivery-options.js';
import { SILENT } from '../logger.js';
import { createSessionManager } from './session.js';
import { createSessionState } from './session-state.js';
import { createSafeStorage } from './storage.js';

const TIMEOUT = 30 * 60 * 1000;
const START = 1_000_000;

/** A session manager wired to a store as the facade wires them, on a clock the test moves. */
function setup(options: { timers?: boolean; log?: typeof SILENT } = {}) {
  let clock = START;
  let n = 0;
  // With timers, the clock is the fake timers' own Date, so both move together.
  const now = options.timers === true ? () => Date.now() : (): number => clock;
  const state = createSessionState((at) => session.data(at), now, TIMEOUT, options.timers === true ? globalTimers : undefined, options.log ?? SILENT);
  const session = createSessionManager({
    store: createSafeStorage(() => undefined),
    key: 's',
    timeout: TIMEOUT,
    newId: () => `s${++n}`,
    landing: () => ({ url: 'https://a.example/', referrer: '' }),
    now: START,
    onChange: state.changed,
  });
  return { session, state, store: state.store, advance: (ms: number) => (clock += ms), now };
}

/** Lets queued microtasks run. */
const microtasks = (): Promise<void> => Promise.resolve().then(() => undefined);

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('the session store', () => {
  it('tells a listener once per burst of changes, after the task, not per change', async () => {
    const { session, store, now } = setup();
    const listener = vi.fn();
    store.subscribe(listener);
    session.touch(now());
    session.recordEvent('page_view', 'page');
    session.recordClick(now());
    session.recordScroll(40, now());
    expect(listener).not.toHaveBeenCalled();
    await microtasks();
    expect(listener).toHaveBeenCalledTimes(1);
    expect(store.getSnapshot()).toMatchObject({ pageViews: 1, clicks: 1, scrollDepth: 40, maxScrollDepth: 40, events: ['page_view'] });
  });

  it('tells of a page view, a click, a scroll, a navigation, a new session and the channel, each', async () => {
    const { session, store, now } = setup();
    const listener = vi.fn();
    store.subscribe(listener);
    const changes: Array<() => void> = [
      () => session.recordEvent('page_view', 'page'),
      () => session.recordClick(now()),
      () => session.recordScroll(80, now()),
      () => session.recordPageChange(now()),
      () => session.restart(now()),
      () => session.setChannelDetector(() => 'direct'),
    ];
    for (const [i, change] of changes.entries()) {
      change();
      await microtasks();
      expect(listener).toHaveBeenCalledTimes(i + 1);
    }
  });

  it('tells of a new session after a timeout (getSessionId() rolls it over)', async () => {
    const { session, store, advance, now } = setup();
    const listener = vi.fn();
    store.subscribe(listener);
    const before = store.getSnapshot();
    advance(TIMEOUT + 1);
    expect(session.currentId(now())).toBe('s2');
    await microtasks();
    expect(listener).toHaveBeenCalledTimes(1);
    expect(store.getSnapshot().sessionId).toBe('s2');
    expect(store.getSnapshot()).not.toBe(before);
  });

  it('keeps the snapshot object until the session changes, and freezes it', () => {
    const { session, store, now } = setup();
    const first = store.getSnapshot();
    expect(store.getSnapshot()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.events)).toBe(true);
    session.recordClick(now());
    const second = store.getSnapshot();
    expect(second).not.toBe(first);
    expect(second.clicks).toBe(1);
    expect(store.getSnapshot()).toBe(second);
  });

  it('stops telling a listener once it unsubscribed', async () => {
    const { session, store, now } = setup();
    const kept = vi.fn();
    const dropped = vi.fn();
    store.subscribe(kept);
    const unsubscribe = store.subscribe(dropped);
    unsubscribe();
    session.recordClick(now());
    await microtasks();
    expect(kept).toHaveBeenCalledTimes(1);
    expect(dropped).not.toHaveBeenCalled();
  });

  it('tells the other listeners when one throws, and logs it', async () => {
    const log = { ...SILENT, error: vi.fn() };
    const { session, store, now } = setup({ log });
    const before = vi.fn();
    const after = vi.fn();
    store.subscribe(before);
    store.subscribe(() => {
      throw new Error('broken view');
    });
    store.subscribe(after);
    session.recordClick(now());
    await microtasks();
    expect(before).toHaveBeenCalledTimes(1);
    expect(after).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalledWith('a session listener threw', expect.any(Error));
  });

  it('queues nothing on a change while nobody listens', () => {
    const { session, store, now } = setup();
    const queued = vi.spyOn(globalThis, 'queueMicrotask');
    session.recordClick(now());
    session.recordEvent('a', 'other');
    expect(queued).not.toHaveBeenCalled();
    // A later reader still gets the current session.
    expect(store.getSnapshot()).toMatchObject({ clicks: 1, events: ['a'] });
  });

  it('tells of the session ending after sessionTimeout without activity, with one timer while listened to', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: START });
    const { session, store, now } = setup({ timers: true });
    const listener = vi.fn();
    const unsubscribe = store.subscribe(listener);
    expect(vi.getTimerCount()).toBe(1);
    // Activity halfway moves the end: the first timer finds the session active and waits again.
    vi.advanceTimersByTime(TIMEOUT / 2);
    session.recordClick(now());
    await microtasks();
    expect(listener).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(TIMEOUT / 2 + 1);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(store.getSnapshot().isActive).toBe(true);
    vi.advanceTimersByTime(TIMEOUT / 2);
    expect(listener).toHaveBeenCalledTimes(2);
    expect(store.getSnapshot()).toMatchObject({ isActive: false, endTime: START + TIMEOUT / 2 });
    // Ended: nothing to wait for until activity.
    expect(vi.getTimerCount()).toBe(0);
    session.recordClick(now());
    await microtasks();
    expect(vi.getTimerCount()).toBe(1);
    unsubscribe();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('starts no timer without timers (outside a browser), nor after close()', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: START });
    setup().store.subscribe(() => {});
    expect(vi.getTimerCount()).toBe(0);
    const { state, store } = setup({ timers: true });
    const unsubscribe = store.subscribe(() => {});
    expect(vi.getTimerCount()).toBe(1);
    state.close();
    expect(vi.getTimerCount()).toBe(0);
    unsubscribe();
    store.subscribe(() => {});
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers the last snapshot (else the empty session) when the session cannot be read', () => {
    const log = { ...SILENT, error: vi.fn() };
    let fail = true;
    const state = createSessionState(
      () => {
        if (fail) throw new Error('unreadable');
        return { startTime: 1, pageViews: 2, clicks: 0, scrollDepth: 0, maxScrollDepth: 0, isActive: true, events: [] };
      },
      () => 1,
      TIMEOUT,
      undefined,
      log,
    );
    expect(state.store.getSnapshot()).toMatchObject({ pageViews: 0, isActive: false });
    expect(log.error).toHaveBeenCalledTimes(1);
    fail = false;
    state.changed();
    const read = state.store.getSnapshot();
    expect(read.pageViews).toBe(2);
    fail = true;
    state.changed();
    expect(state.store.getSnapshot()).toBe(read);
  });
});
