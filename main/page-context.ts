/**
 * The event context (page, screen, user agent, library, locale, timezone). One object is shared by
 * every event while the page's URL does not change, so per event the cost is one string compare,
 * and a post of many events structured-clones it once (DESIGN.md "Measured facts"). The shared
 * object is never mutated; a change builds a new one.
 */
import type { EventContext, PageProperties } from '../worker/types.js';
import { LIBRARY } from './version.js';

/** Gives the context of an event made now. */
export interface PageContext {
  /** The shared context for the current URL. */
  get(): EventContext;
  /** SPEC.md PageProperties of the page as it is now (title read fresh). */
  page(): PageProperties;
  /** The current URL, or '' outside a browser. */
  href(): string;
}

/** Creates the context source for `win`; without a window the context holds the library only. */
export function createPageContext(win: Window | undefined): PageContext {
  if (win === undefined) {
    const context: EventContext = { library: LIBRARY };
    return { get: () => context, page: () => ({}), href: () => '' };
  }

  const nav = win.navigator;
  let locale: string | undefined;
  let timezone: string | undefined;
  try {
    locale = nav.language;
    timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    // Exotic environments without Intl: leave them out.
  }
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

  function get(): EventContext {
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
        timezone,
      };
    }
    return context;
  }

  return { get, page: () => (get(), page()), href: () => win.location.href };
}
