/**
 * The automatic features through the facade: each behind its flag, nothing (not even a listener)
 * when off, every listener removed on shutdown. The features' details are tested beside their
 * modules in `auto/`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Analytics } from '../analytics.js';
import type { AnalyticsConfig } from '../config.js';
import { endOfTask, inProcessClient, pageObserversReady, receivedEvents } from '../../test-support/client/facade-fakes.js';

const clients: Analytics[] = [];

/** Every listener added to window and document and not removed yet. */
function countListeners() {
  const live = new Map<string, number>();
  const key = (target: string, type: string, listener: unknown, options: unknown) =>
    `${target}|${type}|${String(listenerIds.get(listener) ?? listenerIds.set(listener, listenerIds.size).get(listener))}|${
      typeof options === 'boolean' ? options : (options as { capture?: boolean } | undefined)?.capture === true
    }`;
  const listenerIds = new Map<unknown, number>();
  for (const [name, target] of [['window', window], ['document', document]] as const) {
    const add = target.addEventListener.bind(target);
    const remove = target.removeEventListener.bind(target);
    vi.spyOn(target, 'addEventListener').mockImplementation((type: string, listener: unknown, options?: unknown) => {
      const k = key(name, type, listener, options);
      live.set(k, (live.get(k) ?? 0) + 1);
      add(type, listener as EventListener, options as AddEventListenerOptions);
    });
    vi.spyOn(target, 'removeEventListener').mockImplementation((type: string, listener: unknown, options?: unknown) => {
      const k = key(name, type, listener, options);
      if (live.has(k)) live.set(k, live.get(k)! - 1);
      if (live.get(k) === 0) live.delete(k);
      remove(type, listener as EventListener, options as EventListenerOptions);
    });
  }
  return {
    /** Types of the listeners still registered, e.g. `window|error`. */
    types: () => [...live.keys()].map((k) => k.split('|').slice(0, 2).join('|')).sort(),
  };
}

/** A client whose lazy chunks (page observers, then automatic tracking) have loaded. */
async function client(config: Partial<AnalyticsConfig>) {
  // A beacon stand-in: the unload path must not reach the network when a test fires pagehide.
  const made = inProcessClient(config, { sendBeacon: () => true });
  clients.push(made.analytics);
  // The observers start once the core has started and the page is idle: wait for each step, not
  // for a number of turns (a loaded machine takes longer to import the core's chunks).
  await made.analytics.getDeliveryStats();
  await pageObserversReady();
  await import('./auto-tracking.js');
  await vi.dynamicImportSettled();
  await endOfTask();
  return made;
}

const ALL_ON = { enableErrorTracking: true, enableHeatmapTracking: true, enablePerformanceTracking: true, enableAutoPageTracking: true };

function props(event: Record<string, unknown> | undefined): Record<string, unknown> {
  return event!.properties as Record<string, unknown>;
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
  vi.restoreAllMocks();
  Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
  document.body.innerHTML = '';
});

describe('enableErrorTracking', () => {
  it('sends uncaught errors and unhandled rejections as error events', async () => {
    const { analytics, server } = await client({ enableErrorTracking: true });
    window.dispatchEvent(new ErrorEvent('error', { message: 'Uncaught Error: exploded', filename: 'https://app.test/x.js', lineno: 3, colno: 7, error: new Error('exploded') }));
    const rejection = new Event('unhandledrejection');
    Object.assign(rejection, { reason: new TypeError('no such thing') });
    window.dispatchEvent(rejection);
    await analytics.flush();
    const [uncaught, unhandled] = receivedEvents(server);
    expect(uncaught!.event_type).toBe('error');
    expect(props(uncaught)).toMatchObject({ message: 'Uncaught Error: exploded', filename: 'https://app.test/x.js', lineno: 3, colno: 7, type: 'javascript' });
    expect(props(uncaught).stack).toContain('exploded');
    expect(unhandled!.event_type).toBe('error');
    expect(props(unhandled)).toMatchObject({ message: 'no such thing', type: 'unhandledrejection' });
  });

  it("does not report the rejection of the client's own flush() that the app left uncaught", async () => {
    const { analytics, server } = await client({ enableErrorTracking: true, retryDelay: 60_000 });
    server.reply('network-error');
    analytics.track('kept');
    const failure: unknown = await analytics.flush().catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'AnalyticsError' });
    const rejection = new Event('unhandledrejection');
    Object.assign(rejection, { reason: failure });
    window.dispatchEvent(rejection);
    await analytics.flush();
    expect(receivedEvents(server).map((e) => e.event_type)).toEqual(['kept', 'kept']);
  });
});

describe('enableHeatmapTracking', () => {
  it('sends click with element, selector, coordinates and viewport, counted once in the session', async () => {
    const { analytics, server } = await client({ enableHeatmapTracking: true });
    document.body.innerHTML = '<main><button data-testid="buy">Buy</button></main>';
    document.querySelector('button')!.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: 10, clientY: 20 }));
    await analytics.flush();
    const [click] = receivedEvents(server);
    expect(click!.event_type).toBe('click');
    expect(props(click)).toMatchObject({ element: 'button', selector: 'button[data-testid="buy"]', action: 'click', x: 10, y: 20 });
    expect(JSON.parse(props(click).viewport as string)).toEqual({ width: window.innerWidth, height: window.innerHeight });
    expect(analytics.getSessionData()).toMatchObject({ clicks: 1, clickEvents: 1 });
  });
});

describe('enablePerformanceTracking', () => {
  it('sends one performance event when the page is first hidden', async () => {
    const { analytics, server } = await client({ enablePerformanceTracking: true });
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
    await analytics.flush();
    const events = receivedEvents(server);
    expect(events.map((e) => e.event_type)).toEqual(['performance']);
    // happy-dom's navigator says it is automated (`webdriver`: the one boolean of the context).
    for (const [key, value] of Object.entries(props(events[0]))) if (typeof value !== 'string' && key !== 'webdriver') expect(typeof value).toBe('number');
  });
});

describe('the flags', () => {
  it('off: nothing is sent and no listener of the features is added', async () => {
    const listeners = countListeners();
    const { analytics, server } = await client({});
    window.dispatchEvent(new ErrorEvent('error', { message: 'ignored' }));
    document.body.innerHTML = '<button>x</button>';
    document.querySelector('button')!.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    window.dispatchEvent(new Event('pagehide'));
    await analytics.flush();
    expect(server.requests).toHaveLength(0);
    for (const type of ['window|error', 'window|unhandledrejection', 'document|mousemove', 'window|load']) expect(listeners.types()).not.toContain(type);
    expect(listeners.types().filter((t) => t === 'document|click')).toHaveLength(1); // the session's click counter only
  });

  it('all on: every listener of the client is removed on shutdown', async () => {
    const listeners = countListeners();
    const { analytics } = await client(ALL_ON);
    await vi.waitFor(() =>
      expect(listeners.types()).toEqual(
        expect.arrayContaining(['window|error', 'window|unhandledrejection', 'document|click', 'document|mousemove', 'window|visibilitychange', 'window|pagehide', 'window|popstate', 'window|hashchange']),
      ),
    );
    await analytics.shutdown(0);
    expect(listeners.types()).toEqual([]);
  });

  it('shut down before the chunks arrive: they start nothing', async () => {
    const listeners = countListeners();
    const made = inProcessClient(ALL_ON, { sendBeacon: () => true });
    await made.analytics.shutdown(0);
    await import('./page-observers.js');
    await import('./auto-tracking.js');
    await endOfTask();
    await endOfTask();
    expect(listeners.types()).toEqual([]);
  });
});
