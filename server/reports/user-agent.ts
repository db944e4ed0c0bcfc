import UAParser from 'ua-parser-js';

/** What the reports keep of a user agent: families, not versions. */
export interface UserAgentFacts {
  /** Browser family (`Chrome`, `Mobile Safari`, `Firefox`, …), or null when unknown. */
  browser: string | null;
  /** Operating system family (`Windows`, `Mac OS`, `iOS`, `Android`, …), or null when unknown. */
  os: string | null;
  /** `desktop`, `mobile`, `tablet`, `console`, `smarttv`, `wearable`, `embedded` or `xr`; null without an agent. */
  device: string | null;
}

/** Parses user agents, remembering the answer per distinct agent. */
export interface UserAgentParser {
  parse(userAgent: string | null): UserAgentFacts;
}

/** Options of {@link createUserAgentParser}. */
export interface UserAgentParserOptions {
  /**
   * Distinct agents remembered; past it the memory starts over, so a flood of made-up agents
   * cannot grow it. @default 5000
   */
  maxEntries?: number;
  /** The parse itself. @default ua-parser-js */
  parse?: (userAgent: string) => UserAgentFacts;
}

const NONE: UserAgentFacts = Object.freeze({ browser: null, os: null, device: null });

/** Longest family name kept: the parser's names are short, a hostile agent's need not be. */
const MAX_NAME = 64;

const short = (value: string | undefined): string | null => (value ? value.slice(0, MAX_NAME) : null);

/**
 * ua-parser-js's families. Its device type is undefined for desktop agents (it names only the
 * others), so an agent without one counts as `desktop`.
 */
export function parseWithUaParser(userAgent: string): UserAgentFacts {
  const result = new UAParser(userAgent).getResult();
  return { browser: short(result.browser.name), os: short(result.os.name), device: short(result.device.type) ?? 'desktop' };
}

/**
 * Creates a parser that parses each distinct agent once: a parse runs dozens of regular
 * expressions (tens of µs), while a batch of events almost always shares one agent, and a site's
 * visitors share a few hundred. The answers are frozen and shared.
 */
export function createUserAgentParser(options: UserAgentParserOptions = {}): UserAgentParser {
  const maxEntries = options.maxEntries ?? 5000;
  const parse = options.parse ?? parseWithUaParser;
  const known = new Map<string, UserAgentFacts>();
  return {
    parse(userAgent) {
      if (userAgent === null || userAgent === '') return NONE;
      const cached = known.get(userAgent);
      if (cached !== undefined) return cached;
      const facts = Object.freeze(parse(userAgent));
      if (known.size >= maxEntries) known.clear();
      known.set(userAgent, facts);
      return facts;
    },
  };
}
