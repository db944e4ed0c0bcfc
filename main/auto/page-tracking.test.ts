/** Automatic page views on SPA navigation, and the shared history patch. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Analytics } from '../analytics.js';
import { LOCATION_CHANGE, watchNavigation } from './page-tracking.js';
import { inProcessClient, receivedEvents } from '../../test-support/client/facade-fakes.js';

const clients: Analytics[] = [];
const originals = { push: history.pushState, replace: history.replaceState };

function client(config: Parameters<typeof inProcessClient>[0] = {}) {
  const made = inProcessClient({ enableAutoPageTracking: true, ...config });
  clients.push(made.analytics);
  return made;
}

/** The page properties of each page_view received, as sent. */
function pageViews(server: Parameters<typeof receivedEvents>[0]): Array<Record<string, string>> {
  return receivedEvents(server)
    .filter((e) => e.event_type === 'page_view')
    .map((e) => JSON.parse((e.properties as Record<string, string>).page!) as Record<string, string>);
}

beforeEach(() => {
  localStorage.clear();
  history.replaceState({}, '', '/start');
  document.title = 'Start';
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
  history.pushState = originals.push;
  history.replaceState = originals.replace;
  delete (history as unknown as Record<symbol, unknown>)[Symbol.for('service-analytics.history-patch.v1')];
});

describe('automatic page views', () => {
  it('sends one per new URL from pushState, replaceState, popstate and hashchange, none for the same URL', async () => {
    const { analytics, server } = client();
    document.title = 'A';
    history.pushState({}, '', '/a');
    history.pushState({ same: true }, '', '/a');
    history.replaceState({ state: 'only' }, '', '/a');
    history.replaceState({}, '', '/a?tab=2');
    history.pushState({}, '', '/a?tab=2#details');
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    history.replaceState({}, '', '/b');
    window.dispatchEvent(new PopStateEvent('popstate'));
    window.dispatchEvent(new Event('popstate'));
    await analytics.flush();
    const origin = location.origin;
    expect(pageViews(server).map((p) => p.url)).toEqual([
      `${origin}/start`,
      `${origin}/a`,
      `${origin}/a?tab=2`,
      `${origin}/a?tab=2#details`,
      `${origin}/b`,
    ]);
    expect(pageViews(server)[2]).toEqual({ title: 'A', url: `${origin}/a?tab=2`, path: '/a', referrer: `${origin}/a`, search: '?tab=2' });
    expect(analytics.getSessionData()).toMatchObject({ pageViews: 5, pageChanges: 4 });
  });

  it('sees a pushState made right after createAnalytics(), before any lazy chunk loaded', async () => {
    const { analytics, server } = client();
    history.pushState({}, '', '/early-1');
    history.pushState({}, '', '/early-2');
    await analytics.flush();
    expect(pageViews(server).map((p) => p.path)).toEqual(['/start', '/early-1', '/early-2']);
  });

  it('sends none when enableAutoPageTracking is false, but still counts page changes', async () => {
    const { analytics, server } = client({ enableAutoPageTracking: false });
    history.pushState({}, '', '/quiet');
    await analytics.flush();
    expect(server.requests).toHaveLength(0);
    expect(analytics.getSessionData().pageChanges).toBe(1);
  });

  it('stops on shutdown: nothing sent, history given back', async () => {
    const { analytics, server } = client();
    await analytics.shutdown(0);
    history.pushState({}, '', '/after');
    expect(history.pushState).toBe(originals.push);
    expect(history.replaceState).toBe(originals.replace);
    expect(pageViews(server).map((p) => p.path)).not.toContain('/after');
  });
});

describe('watchNavigation(win, onNavigate): the shared history patch', () => {
  it('serves two clients on one page and is removed when the last one stops', () => {
    const calls = { a: 0, b: 0 };
    const stopA = watchNavigation(window, () => calls.a++);
    const patched = history.pushState;
    const stopB = watchNavigation(window, () => calls.b++);
    expect(history.pushState).toBe(patched); // one patch, not a wrapper per client
    history.pushState({}, '', '/one');
    stopA();
    history.replaceState({}, '', '/two');
    expect(calls).toEqual({ a: 1, b: 2 });
    stopB();
    expect(history.pushState).toBe(originals.push);
    expect(history.replaceState).toBe(originals.replace);
    history.pushState({}, '', '/three');
    expect(calls).toEqual({ a: 1, b: 2 });
  });

  it('stays in the chain of a script that wrapped it later, as a pass-through, and is reused', () => {
    const seen: string[] = [];
    let stop = watchNavigation(window, () => seen.push(location.pathname));
    const ours = history.pushState;
    // Another library (a router, another analytics tool) wraps pushState after us.
    const theirs: string[] = [];
    history.pushState = function (this: History, ...args: Parameters<History['pushState']>) {
      theirs.push(String(args[2]));
      ours.apply(this, args);
    };
    const wrappedByThem = history.pushState;
    stop();
    // Not restored (that would cut their wrapper out), but silent.
    expect(history.pushState).toBe(wrappedByThem);
    history.pushState({}, '', '/x');
    expect(location.pathname).toBe('/x');
    expect(seen).toEqual([]);
    // A later client reuses the patch instead of wrapping again.
    stop = watchNavigation(window, () => seen.push(location.pathname));
    expect(history.pushState).toBe(wrappedByThem);
    history.pushState({}, '', '/y');
    expect(seen).toEqual(['/y']);
    // They un-patch (put back what they found: ours); we still work, and then restore the original.
    history.pushState = ours;
    history.pushState({}, '', '/z');
    expect(seen).toEqual(['/y', '/z']);
    stop();
    expect(history.pushState).toBe(originals.push);
    expect(theirs).toEqual(['/x', '/y']);
  });

  it('keeps pushState working for the app when the callback throws', () => {
    const stop = watchNavigation(window, () => {
      throw new Error('ours');
    });
    const errors: unknown[] = [];
    const onError = (event: ErrorEvent) => errors.push(event.error);
    window.addEventListener('error', onError);
    try {
      expect(() => history.pushState({}, '', '/still-works')).not.toThrow();
      expect(location.pathname).toBe('/still-works');
      expect(errors).toEqual([]);
    } finally {
      window.removeEventListener('error', onError);
      stop();
    }
  });

  it(`fires ${LOCATION_CHANGE} on the window after the URL changed`, () => {
    const stop = watchNavigation(window, () => {});
    const paths: string[] = [];
    const listener = () => paths.push(location.pathname);
    window.addEventListener(LOCATION_CHANGE, listener);
    history.pushState({}, '', '/fired');
    window.removeEventListener(LOCATION_CHANGE, listener);
    stop();
    expect(paths).toEqual(['/fired']);
  });
});
