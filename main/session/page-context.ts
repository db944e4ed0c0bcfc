/**
 * The event context (page, screen, user agent, library, locale). One object is shared by
 * every event while the page's URL does not change, and a post of many events structured-clones it
 * once. The shared object is never mutated; a change builds a new one (the worker's mapping caches
 * by object identity).
 *
 * Per event, `get()` touches no DOM: reading `location.href` for every event was a large share of
 * what an event costs the main thread in a burst (per-call figures in bench/RESULTS.md, "Client
 * main thread"). The URL is read again only when the page may have changed: `href()` and `page()`
 * always read the page as it is now and refresh the context, and the facade calls `href()` from its
 * navigation hook (`watchNavigation` in `page-tracking.ts`: `pushState`, `replaceState`,
 * `popstate`, `hashchange`), so an event made right after a navigation carries the new page. As a
 * fallback for a change no hook saw, `get()` reads the URL at most once per {@link RECHECK_MS}.
 * This module adds no listener of its own (shutdown removes every listener).
 *
 * The time zone is not read here: the first `Intl` call of a page costs its main thread tens of
 * milliseconds (ICU's start-up), more than everything else the client does to start; the
 * delivery core reads it and adds it to each event (docs/decisions.md, "Start-up").
 */
import type { EventContext, PageProperties } from '../../protocol/event-model/analytics-event.js';
import { LIBRARY } from '../version.js';

/** Without a navigation hook call, `get()` reads the URL again at most this often (ms). */
export const RECHECK_MS = 1_000;

/** Gives the context of an event made now. */
export interface PageContext {
  /** The shared context for the current URL; `now`: the event's time, if the caller has read the clock. */
  get(now?: number): EventContext;
  /** The PageProperties of the page as it is now (title read fresh). */
  page(): PageProperties;
  /** The current URL, or '' outside a browser. */
  href(): string;
}

/**
 * Creates the context source for `win`; without a window the context holds the library only.
 *
 * @param now - the clock of the periodic recheck: the client's, which also times the events
 */
export function createPageContext(win: Window | undefined, now: () => number): PageContext {
  if (win === undefined) {
    const context: EventContext = { library: LIBRARY };
    return { get: () => context, page: () => ({}), href: () => '' };
  }

  const nav = win.navigator;
  const locale: string | undefined = typeof nav.language === 'string' ? nav.language : undefined;
  const userAgent = nav.userAgent;

  let href = '';
  let context: EventContext = {};
  // The referrer of an in-page navigation is the previous URL; of the first page, the document's.
  let referrer = win.document.referrer;

  function page(): PageProperties {
    const { location, document } = win!;
    return {
      title: document.title,
      url: location.href,
      path: location.pathname,
      referrer,
      search: location.search,
    };
  }

  /** When the URL was read last. */
  let checkedAt = -Infinity;

  /** Reads the URL now and builds a new context when it changed. */
  function refresh(): EventContext {
    checkedAt = now();
    const current = win!.location.href;
    if (current !== href) {
      if (href !== '') referrer = href;
      href = current;
      const screen = win!.screen;
      context = {
        page: page(),
        userAgent,
        screen: screen === undefined ? undefined : { width: screen.width, height: screen.height },
        library: LIBRARY,
        locale,
        // For the server's bot filter; absent (not false) on every ordinary page.
        webdriver: nav.webdriver === true || undefined,
      };
    }
    return context;
  }

  function get(time = now()): EventContext {
    return time - checkedAt >= RECHECK_MS ? refresh() : context;
  }

  // Both read the URL anyway, so both refresh the context: the facade's navigation hook calls
  // href() on every navigation, which makes the next get() carry the new page.
  return { get, page: () => (refresh(), page()), href: () => (refresh(), href) };
}
