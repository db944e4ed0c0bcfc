import type { PropertyValue } from '../../protocol/index.js';
import { detectChannel } from '../../protocol/traffic-channel.js';
import type { EventDimensions } from '../store/event-store.js';
import { type UserAgentParser, createUserAgentParser } from './user-agent.js';

/*
 * The report columns of an event (docs/protocol.md, "Reports"), from what the wire already carries:
 * `page` and `screen` as JSON text in the properties (the client's context), `anonymous_id`, and
 * the user agent. The wire format does not change for them.
 */

/** Longest text kept in a report column; a longer value is cut. */
export const MAX_DIMENSION_LENGTH = 512;

/** Screen classes by the screen's width in CSS pixels: below 576, 992, 1440, and the rest. */
export function screenClassOf(width: number): string {
  return width < 576 ? 'mobile' : width < 992 ? 'tablet' : width < 1440 ? 'laptop' : 'desktop';
}

/** What the page part of an event gives; shared by the events of one page. */
interface PageFacts {
  path: string | null;
  host: string | null;
  referrerHost: string | null;
  channel: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
}

const NO_PAGE: PageFacts = Object.freeze({
  path: null,
  host: null,
  referrerHost: null,
  channel: null,
  utmSource: null,
  utmMedium: null,
  utmCampaign: null,
});

const cut = (value: string | null | undefined): string | null => {
  if (value === null || value === undefined) return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed.slice(0, MAX_DIMENSION_LENGTH);
};

function parseUrl(text: string): URL | null {
  if (text === '') return null;
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function parseObject(json: PropertyValue | undefined): Record<string, unknown> | null {
  if (typeof json !== 'string' || json === '') return null;
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const textOf = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The page facts of a `page` property (JSON text of `url`, `path`, `referrer`, `search`, …). The
 * referrer counts only from outside the site: a navigation inside it has the previous page as its
 * referrer (the client's page context), which is neither a source nor a channel, so both are null
 * unless the address itself carries campaign tags.
 */
export function pageFactsOf(pageJson: PropertyValue | undefined): PageFacts {
  const page = parseObject(pageJson);
  if (page === null) return NO_PAGE;
  const urlText = textOf(page.url);
  const referrerText = textOf(page.referrer);
  const url = parseUrl(urlText);
  const host = url ? url.hostname.toLowerCase() : null;
  const params = url ? url.searchParams : new URLSearchParams(textOf(page.search));
  const path = cut(textOf(page.path)) ?? (url ? cut(url.pathname) : null);
  const referrerUrl = parseUrl(referrerText);
  const referrerHost = referrerUrl ? referrerUrl.hostname.toLowerCase() : null;
  const inside = referrerHost !== null && referrerHost === host;
  let channel: string | null = url ? detectChannel(urlText, referrerText) : null;
  // `direct` for an own-host referrer means "inside the site", not an entry: no channel.
  if (inside && channel === 'direct') channel = null;
  return {
    path,
    host: cut(host),
    referrerHost: inside ? null : cut(referrerHost),
    channel,
    utmSource: cut(params.get('utm_source')),
    utmMedium: cut(params.get('utm_medium')),
    utmCampaign: cut(params.get('utm_campaign')),
  };
}

/** The screen class of a `screen` property (JSON text of `width`, `height`). */
export function screenClassOfProperty(screenJson: PropertyValue | undefined): string | null {
  const screen = parseObject(screenJson);
  const width = screen?.width;
  return typeof width === 'number' && Number.isFinite(width) && width > 0 ? screenClassOf(width) : null;
}

/** Extracts the report columns of events. */
export interface DimensionExtractor {
  extract(properties: Readonly<Record<string, PropertyValue>>, userAgent: string | null): EventDimensions;
}

/**
 * Creates an extractor. The user agent is parsed once per distinct agent (`user-agent.ts`), and
 * the page and screen texts of the last event are remembered: the events of one batch usually
 * share them, so a batch costs one JSON parse and one URL parse, not one per event.
 */
export function createDimensionExtractor(agents: UserAgentParser = createUserAgentParser()): DimensionExtractor {
  let lastPage: PropertyValue | undefined;
  let lastPageFacts: PageFacts = NO_PAGE;
  let lastScreen: PropertyValue | undefined;
  let lastScreenClass: string | null = null;
  return {
    extract(properties, userAgent) {
      const pageJson = properties.page;
      if (pageJson !== lastPage) {
        lastPageFacts = pageFactsOf(pageJson);
        lastPage = pageJson;
      }
      const screenJson = properties.screen;
      if (screenJson !== lastScreen) {
        lastScreenClass = screenClassOfProperty(screenJson);
        lastScreen = screenJson;
      }
      const agent = agents.parse(userAgent);
      const anonymousId = properties.anonymous_id;
      return {
        ...lastPageFacts,
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
        screenClass: lastScreenClass,
        anonymousId: typeof anonymousId === 'string' ? cut(anonymousId) : null,
      };
    },
  };
}
