import { isbot } from 'isbot';
import type { PropertyValue } from '../protocol/index.js';

/**
 * Which events come from bots (docs/decisions.md, "Bot filtering"): a user agent that the `isbot`
 * package knows as a crawler, a headless browser, a monitor or an HTTP library, or an event whose
 * properties say `webdriver: true` (the client reports `navigator.webdriver`, which automated
 * browsers set).
 */
export interface BotDetector {
  /** True for a bot's user agent; null or empty is not one. */
  isBotAgent(userAgent: string | null): boolean;
  /** True for an event from a bot: its user agent, or `properties.webdriver === true`. */
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
    isBotEvent: (userAgent, properties) => properties?.webdriver === true || isBotAgent(userAgent),
  };
}
