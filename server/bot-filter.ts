import { isbot } from 'isbot';
import type { PropertyValue } from '../protocol/index.js';

/**
 * Which events come from bots (docs/protocol.md, "Bot events"): a user agent that the `isbot`
 * package knows as a crawler, a headless browser or a monitor, or an event whose properties say
 * `webdriver: true` (the client reports `navigator.webdriver`, which automated browsers set).
 *
 * An event from a server-side HTTP client is not a bot's: a backend that reports a subscription
 * renewal with Node's fetch, axios, python-requests or an analytics SDK is a source like any other,
 * though `isbot` lists those agents. The rule, {@link isServerSideEvent}: the agent is not a
 * browser's, names no crawler, and the event carries no page context.
 */
export interface BotDetector {
  /** True for a bot's user agent; null or empty is not one. */
  isBotAgent(userAgent: string | null): boolean;
  /**
   * True for an event from a bot: `properties.webdriver === true`, or a bot's user agent on an
   * event that is not plainly server-side ({@link isServerSideEvent}).
   */
  isBotEvent(userAgent: string | null, properties: Readonly<Record<string, PropertyValue>> | null | undefined): boolean;
}

/** Options of {@link createBotDetector}. */
export interface BotDetectorOptions {
  /**
   * Distinct user agents whose verdict is remembered; past it the memory starts over, so a flood of
   * made-up user agents cannot grow it. @default 5000
   */
  maxEntries?: number;
  /** The check itself. @default isbot */
  check?: (userAgent: string) => boolean;
}

/**
 * Creates a detector that remembers its verdict per distinct user agent: a batch of events that
 * share one user agent (the usual case) costs one check, and so do the next batches of that
 * browser. `isbot` runs one large regular expression, measurably dearer than a map lookup.
 */
export function createBotDetector(options: BotDetectorOptions = {}): BotDetector {
  const maxEntries = options.maxEntries ?? 5000;
  const check = options.check ?? isbot;
  const verdicts = new Map<string, boolean>();

  const isBotAgent = (userAgent: string | null): boolean => {
    if (userAgent === null || userAgent === '') return false;
    const known = verdicts.get(userAgent);
    if (known !== undefined) return known;
    const verdict = check(userAgent);
    if (verdicts.size >= maxEntries) verdicts.clear();
    verdicts.set(userAgent, verdict);
    return verdict;
  };

  return {
    isBotAgent,
    isBotEvent: (userAgent, properties) =>
      properties?.webdriver === true || (isBotAgent(userAgent) && !isServerSideEvent(userAgent, properties)),
  };
}

/** Agents of browsers, and of the crawlers and headless browsers that pose as one. */
const BROWSER_AGENT = /^(?:Mozilla|Opera)\//;
/** Words that crawlers and scrapers put in their agents whatever library they are built on. */
const CRAWLER_WORD = /bot|crawl|spider|slurp|scrap|archiver|preview|monitor|uptime|lighthouse|headless/i;

/**
 * True for an event sent by a server-side HTTP client: an agent that does not begin like a
 * browser's (`Mozilla/`, `Opera/`) and names no crawler, on an event without page context (the
 * bundled client puts `page` and `screen` on every event it sends from a page). `curl/8.5.0`,
 * `axios/1.7.2`, `node`, `python-requests/2.31.0`, `Go-http-client/1.1` and SDK agents such as
 * `posthog-python/3.5.0` qualify; `Googlebot/2.1`, `HeadlessChrome` and any agent sending page
 * context do not.
 */
export function isServerSideEvent(userAgent: string | null, properties: Readonly<Record<string, PropertyValue>> | null | undefined): boolean {
  if (userAgent === null || userAgent === '') return true;
  if (BROWSER_AGENT.test(userAgent) || CRAWLER_WORD.test(userAgent)) return false;
  return properties == null || (properties.page === undefined && properties.screen === undefined);
}
