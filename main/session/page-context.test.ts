/** The shared event context: cached per page, so an event reads no DOM, and refreshed on navigation. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Analytics } from '../analytics.js';
import { RECHECK_MS, createPageContext } from './page-context.js';
import { watchNavigation } from '../auto/page-tracking.js';
import { inProcessClient, receivedEvents } from '../../test-support/client/facade-fakes.js';

/** A window whose `location.href` reads are counted. */
function fakeWindow(start = 'https://shop.test/') {
  const target = new EventTarget();
  let url = new URL(start);
  const reads = { href: 0 };
  const location = {
    get href() {
      reads.href++;
      return url.href;
    },
    get pathname() {
      return url.pathname;
    },
    get search() {
      return url.search;
    },
  };
  const win = Object.assign(target, {
    navigator: { language: 'en', userAgent: 'test-agent' },
    document: { title: 'Shop', referrer: 'https://search.test/' },
    location,
    screen: { width: 800, height: 600 },
  }) as unknown as Window;
  return { win, reads, go: (next: string) => (url = new URL(next, url)) };
}

const stops: Array<() => void> = [];
const clients: Analytics[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
  history.replaceState({}, '', '/');
});

describe('createPageContext', () => {
  it('returns the same object and reads no URL per event while nothing changed', () => {
    let time = 0;
    const { win, reads } = fakeWindow();
    const context = createPageContext(win, () => time);
    const first = context.get();
    const readsAfterFirst = reads.href;
    for (let i = 0; i < 1_000; i++) expect(context.get()).toBe(first);
    expect(reads.href).toBe(readsAfterFirst);
    time += RECHECK_MS;
    // The periodic recheck reads the URL once; unchanged, the object stays the same.
    expect(context.get()).toBe(first);
    expect(reads.href).toBe(readsAfterFirst + 1);
  });

  it('carries webdriver: true on an automated page and no webdriver member otherwise', () => {
    const { win } = fakeWindow();
    expect(createPageContext(win, () => 0).get().webdriver).toBeUndefined();
    (win.navigator as { webdriver?: boolean }).webdriver = true;
    expect(createPageContext(win, () => 0).get().webdriver).toBe(true);
  });

  it("get(time) rechecks on the caller's clock reading and does not read its own", () => {
    let clockReads = 0;
    const { win, go, reads } = fakeWindow();
    const context = createPageContext(win, () => {
      clockReads++;
      return 0;
    });
    const first = context.get(0);
    const readsAfterFirst = reads.href;
    go('/later');
    clockReads = 0;
    for (let i = 0; i < 100; i++) expect(context.get(RECHECK_MS - 1)).toBe(first);
    expect([clockReads, reads.href]).toEqual([0, readsAfterFirst]);
    expect(context.get(RECHECK_MS).page).toMatchObject({ path: '/later' });
  });

  it('href() (the navigation hook) refreshes the context: the next get() carries the new page', () => {
    const { win, go } = fakeWindow();
    const context = createPageContext(win, () => 0);
    const first = context.get();
    expect(first.page).toMatchObject({ url: 'https://shop.test/', referrer: 'https://search.test/' });
    go('/next');
    expect(context.href()).toBe('https://shop.test/next');
    const next = context.get();
    expect(next).not.toBe(first);
    expect(next.page).toMatchObject({ path: '/next', referrer: 'https://shop.test/' });
    expect(context.get()).toBe(next);
  });

  it('without a navigation event, sees a changed URL within RECHECK_MS', () => {
    let time = 0;
    const { win, go } = fakeWindow();
    const context = createPageContext(win, () => time);
    const first = context.get();
    go('/unwatched');
    time += RECHECK_MS - 1;
    expect(context.get()).toBe(first);
    time += 1;
    expect(context.get().page).toMatchObject({ path: '/unwatched' });
  });

  it('after history.pushState() the next get() carries the new page (real window, hook as in the facade)', () => {
    const context = createPageContext(window, () => 0);
    stops.push(watchNavigation(window, () => context.href()));
    const first = context.get();
    history.pushState({}, '', '/pushed?x=1');
    const next = context.get();
    expect(next).not.toBe(first);
    expect(next.page).toMatchObject({ path: '/pushed', search: '?x=1', url: window.location.href, referrer: first.page?.url });
    history.replaceState({}, '', '/replaced');
    expect(context.get().page).toMatchObject({ path: '/replaced' });
  });

  it('page() reads the page as it is now even without a navigation event', () => {
    const { win, go } = fakeWindow();
    const context = createPageContext(win, () => 0);
    context.get();
    go('/now');
    expect(context.page()).toMatchObject({ path: '/now', referrer: 'https://shop.test/' });
    expect(context.get().page).toMatchObject({ path: '/now' });
  });

  it("facade: the unwatched-URL recheck runs on the client's clock (transport.now), not on Date.now()", async () => {
    let time = 5;
    const made = inProcessClient({}, { now: () => time });
    clients.push(made.analytics);
    made.analytics.track('first');
    // A URL change none of the navigation hooks sees: the prototype's method, not the patched one.
    History.prototype.pushState.call(history, {}, '', '/unwatched-by-hooks');
    time += RECHECK_MS - 1;
    made.analytics.track('too soon');
    time += 1;
    made.analytics.track('rechecked');
    await made.analytics.flush();
    const paths = receivedEvents(made.server).map((e) => (JSON.parse((e.properties as Record<string, string>).page!) as { path: string }).path);
    expect(paths).toEqual(['/', '/', '/unwatched-by-hooks']);
  });

  for (const enableAutoPageTracking of [true, false]) {
    it(`facade: track() right after pushState() carries the new page (enableAutoPageTracking ${enableAutoPageTracking})`, async () => {
      const made = inProcessClient({ enableAutoPageTracking });
      clients.push(made.analytics);
      made.analytics.track('before');
      history.pushState({}, '', '/pushed-page?q=1');
      made.analytics.track('after');
      await made.analytics.flush();
      const events = receivedEvents(made.server).filter((e) => e.event_type !== 'page_view');
      const pages = events.map((e) => JSON.parse((e.properties as Record<string, string>).page!) as Record<string, string>);
      expect(pages[0]).toMatchObject({ path: '/' });
      expect(pages[1]).toMatchObject({ path: '/pushed-page', search: '?q=1', url: window.location.href });
    });
  }
});
