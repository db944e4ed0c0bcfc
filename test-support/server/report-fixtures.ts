import { createDimensionExtractor } from '../../server/reports/dimensions.js';
import type { StoredEvent } from '../../server/store/event-store.js';

/*
 * A deterministic generator of a realistic project for the report tests and the panel benchmark:
 * visitors with a browser, a screen and a country, sessions that land from a search engine, a social network,
 * a newsletter, a paid campaign or directly, browse a few pages, send custom events, errors, web
 * vitals and experiment exposures, and a few bots. The same seed gives the same events. Events are
 * made one at a time (a generator), so any number of them costs constant memory.
 */

/** Options of {@link generateProject}. */
export interface ProjectFixtureOptions {
  projectId: string;
  /** Start of the period, ms. */
  start: number;
  days: number;
  sessions: number;
  /** @default 1 */
  seed?: number;
  /** Prefix of the event ids, so that two generations into one project do not collide. @default 'g' */
  idPrefix?: string;
}

const DAY_MS = 86_400_000;
const HOST = 'shop.example';
const PATHS = ['/', '/pricing', '/docs', '/blog/launch', '/signup', '/checkout'];

const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36',
];
const SCREENS = [[1920, 1080], [390, 844], [1366, 768], [2560, 1440], [820, 1180], [412, 915]] as const;
const SCREEN_JSON = SCREENS.map(([width, height]) => JSON.stringify({ width, height }));
/** Visitors' countries, as the batch route finds them from the client address; null: a private or unknown address. */
const COUNTRIES = ['GB', 'GB', 'US', 'US', 'DE', 'FR', 'IN', 'BR', null] as const;
const BOT_AGENT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

const SOURCES = [
  { referrer: '', query: '' },
  { referrer: 'https://www.google.com/', query: '' },
  { referrer: 'https://t.co/x1', query: '' },
  { referrer: 'https://news.example.org/post/1', query: '' },
  { referrer: '', query: '?utm_source=newsletter&utm_medium=email&utm_campaign=spring' },
  { referrer: 'https://www.facebook.com/', query: '?utm_source=facebook&utm_medium=cpc&utm_campaign=launch' },
  { referrer: 'https://mail.google.com/', query: '' },
];

const ERRORS = [
  { message: "TypeError: Cannot read properties of undefined (reading 'id')", file: 'app.js' },
  { message: 'ReferenceError: checkout is not defined', file: 'checkout.js' },
  { message: 'NetworkError: Failed to fetch', file: 'api.js' },
];

/** mulberry32: a small, fast, seeded generator of numbers in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Visitor {
  index: number;
  agent: string;
  screen: string;
  /** Cookieless (memory persistence): a new anonymous id per session. */
  memory: boolean;
  userId: string | null;
  country: string | null;
}

/** The events of a generated project, in session order (times increase within a session only). */
export function* generateProject(options: ProjectFixtureOptions): Generator<StoredEvent> {
  const rand = random(options.seed ?? 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const extractor = createDimensionExtractor();
  const prefix = options.idPrefix ?? 'g';
  const visitorCount = Math.max(1, Math.floor(options.sessions / 3));
  // A visitor is a function of its index (no table of them), so memory stays constant at any size.
  const visitorAt = (index: number): Visitor => {
    const r = random(((options.seed ?? 1) * 2_654_435_761) ^ (index * 40_503));
    const device = Math.floor(r() * AGENTS.length);
    const memory = r() < 0.15;
    const userId = r() < 0.2 ? `user-${index}` : null;
    // Drawn last, so that the other fields are those of the generations before countries.
    const country = COUNTRIES[Math.floor(r() * COUNTRIES.length)] ?? null;
    return { index, agent: AGENTS[device] as string, screen: SCREEN_JSON[device] as string, memory, userId, country };
  };
  let n = 0;
  for (let s = 0; s < options.sessions; s++) {
    const visitor = visitorAt(Math.floor(rand() * visitorCount));
    const bot = rand() < 0.02;
    const agent = bot ? BOT_AGENT : visitor.agent;
    const sessionId = `${prefix}-s${s}`;
    const anonymousId = visitor.memory ? `${prefix}-a${visitor.index}-${s}` : `${prefix}-a${visitor.index}`;
    // 5% of sessions come from a client that sends no anonymous id.
    const sendsAnonymousId = rand() >= 0.05;
    let t = options.start + Math.floor(rand() * (options.days * DAY_MS - 3_600_000));
    const day = Math.floor(t / DAY_MS);
    const visitorId = bot ? `${prefix}-bot-${day}` : `${prefix}-v${visitor.index}-${day}`;
    const source = pick(SOURCES);
    const pages = rand() < 0.4 ? 1 : 2 + Math.floor(rand() * 5);
    const variant = visitor.index % 2 === 0 ? 'control' : 'green';
    let previousUrl = '';
    let path = rand() < 0.5 ? '/' : pick(PATHS);

    const event = (eventType: string, at: number, extra: Record<string, string | number | boolean | null>, page: string): StoredEvent => {
      const properties: StoredEvent['properties'] = { ...extra, page, screen: visitor.screen, locale: 'en-GB' };
      if (sendsAnonymousId) properties.anonymous_id = anonymousId;
      return {
        projectId: options.projectId,
        eventId: `${prefix}-${String(n++).padStart(9, '0')}`,
        eventType,
        userId: visitor.userId,
        sessionId,
        timestamp: at,
        clientTimestamp: at,
        receivedAt: at + 40,
        properties,
        userAgent: agent,
        ipAddress: '203.0.113.0',
        isBot: bot,
        visitorId,
        dimensions: extractor.extract(properties, agent, visitor.country),
      };
    };

    for (let k = 0; k < pages; k++) {
      const url = `https://${HOST}${path}${k === 0 ? source.query : ''}`;
      const referrer = k === 0 ? source.referrer : previousUrl;
      const page = JSON.stringify({ title: `Shop ${path}`, url, path, referrer, search: k === 0 ? source.query : '' });
      yield event('page_view', t, {}, page);
      if (rand() < 0.7) {
        const vitals: Record<string, number> = {
          largestContentfulPaint: Math.round(800 + rand() * 3000),
          firstContentfulPaint: Math.round(300 + rand() * 1500),
          cumulativeLayoutShift: Math.round(rand() * 300) / 1000,
          loadTime: Math.round(900 + rand() * 4000),
        };
        if (rand() < 0.6) vitals.interactionToNextPaint = Math.round(40 + rand() * 500);
        yield event('performance', t + 300 + Math.floor(rand() * 2000), vitals, page);
      }
      if (path === '/signup') {
        yield event('signup_started', t + 2000, { plan: rand() < 0.5 ? 'pro' : 'free' }, page);
        if (rand() < 0.5) yield event('signup_completed', t + 9000, {}, page);
      }
      if (path === '/pricing' && rand() < 0.6) yield event('plan_selected', t + 1500, { plan: 'pro' }, page);
      if (path === '/checkout') {
        yield event('experiment_exposure', t + 100, { experiment: 'checkout-button', variant, is_control: variant === 'control' }, page);
        if (rand() < (variant === 'green' ? 0.45 : 0.3)) yield event('purchase', t + 20_000, { amount: 49 }, page);
      }
      if (rand() < 0.3) yield event('click', t + 700, { x: 10, y: 20, element: 'button', selector: 'main > button', action: 'click' }, page);
      if (rand() < 0.06) {
        const error = pick(ERRORS);
        const line = 1 + Math.floor(rand() * 400);
        yield event('error', t + 1200, { message: error.message, stack: `${error.message}\n    at ${error.file}:${line}:7`, type: 'javascript' }, page);
      }
      previousUrl = url;
      t += 3000 + Math.floor(rand() * 90_000);
      path = pick(PATHS);
    }
  }
}

/** Writes a generated project through the store's own `write`, `batch` events per group commit. */
export async function writeProject(
  store: { write(batch: { events: StoredEvent[]; chunks: [] }): Promise<unknown> },
  options: ProjectFixtureOptions,
  batch = 1000,
): Promise<number> {
  let events: StoredEvent[] = [];
  let count = 0;
  for (const e of generateProject(options)) {
    events.push(e);
    if (events.length === batch) {
      await store.write({ events, chunks: [] });
      count += events.length;
      events = [];
    }
  }
  if (events.length > 0) await store.write({ events, chunks: [] });
  return count + events.length;
}
