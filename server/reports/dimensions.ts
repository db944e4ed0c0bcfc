import type { PropertyValue } from '../../protocol/index.js';
import { detectChannel } from '../../protocol/traffic-channel.js';
import type { EventDimensions } from '../store/event-store.js';
import { type UserAgentParser, createUserAgentParser } from './user-agent.js';

/*
 * The report columns of an event (docs/protocol.md, "Reports"), from what the wire already carries:
 * `page` and `screen` as JSON text in the properties (the client's context), `anonymous_id`, and
 * the user agent; and the country of the request's client address, which the caller finds. The
 * wire format does not change for them.
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
  /**
   * The report columns of one event. `country` is the request's, found once per request from the
   * client's address (`country.ts`) and copied into each of its events.
   * @param country @default null
   */
  extract(properties: Readonly<Record<string, PropertyValue>>, userAgent: string | null, country?: string | null): EventDimensions;
}

/** Options of {@link createDimensionExtractor}. */
export interface DimensionExtractorOptions {
  /** Parses user agents. @default createUserAgentParser() */
  agents?: UserAgentParser;
  /**
   * Distinct `page` and `screen` texts whose facts are remembered; past it the memory starts over,
   * so made-up pages cannot grow it. @default 5000
   */
  maxPages?: number;
}

/**
 * Creates an extractor. Parsing is what costs: a page's facts take a JSON parse and three URL
 * parses (tens of µs), a user agent dozens of regular expressions. Both repeat across events (a
 * site has few pages, referrers and browsers), so each distinct `page` text, `screen` text and
 * user agent is parsed once and remembered, in bounded maps.
 */
export function createDimensionExtractor(options: DimensionExtractorOptions = {}): DimensionExtractor {
  const agents = options.agents ?? createUserAgentParser();
  const maxPages = options.maxPages ?? 5000;
  const pages = new Map<string, PageFacts>();
  const screens = new Map<string, string | null>();
  const remember = <T>(map: Map<string, T>, key: string, value: T): T => {
    if (map.size >= maxPages) map.clear();
    map.set(key, value);
    return value;
  };
  const pageOf = (json: PropertyValue | undefined): PageFacts => {
    if (typeof json !== 'string') return NO_PAGE;
    return pages.get(json) ?? remember(pages, json, Object.freeze(pageFactsOf(json)));
  };
  const screenOf = (json: PropertyValue | undefined): string | null => {
    if (typeof json !== 'string') return null;
    const known = screens.get(json);
    return known !== undefined ? known : remember(screens, json, screenClassOfProperty(json));
  };
  return {
    extract(properties, userAgent, country = null) {
      const page = pageOf(properties.page);
      const agent = agents.parse(userAgent);
      const anonymousId = properties.anonymous_id;
      return {
        path: page.path,
        host: page.host,
        referrerHost: page.referrerHost,
        channel: page.channel,
        utmSource: page.utmSource,
        utmMedium: page.utmMedium,
        utmCampaign: page.utmCampaign,
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
        screenClass: screenOf(properties.screen),
        anonymousId: typeof anonymousId === 'string' ? cut(anonymousId) : null,
        country,
      };
    },
  };
}
