import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBotDetector } from '../bot-filter.js';
import { STORE_KINDS, type TestServer, makeEvent, startTestServer } from '../../test-support/server/test-server.js';

/** What playwright's headless Chromium says it is: every browser test and the client benchmark run it. */
const HEADLESS_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36';
const DESKTOP_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A counter of the Prometheus text. */
async function counter(server: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  if (!match) throw new Error(`no ${name} in /metrics`);
  return Number(match[1]);
}

describe('createBotDetector()', () => {
  it('knows crawlers and headless browsers, not desktop browsers or a missing agent', () => {
    const bots = createBotDetector();
    expect(bots.isBotAgent(HEADLESS_CHROME)).toBe(true);
    expect(bots.isBotAgent('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)')).toBe(true);
    expect(bots.isBotAgent('curl/8.5.0')).toBe(true);
    expect(bots.isBotAgent(DESKTOP_CHROME)).toBe(false);
    expect(bots.isBotAgent(null)).toBe(false);
    expect(bots.isBotAgent('')).toBe(false);
  });

  it('treats properties.webdriver === true as a bot whatever the agent, and only the boolean', () => {
    const bots = createBotDetector();
    expect(bots.isBotEvent(DESKTOP_CHROME, { webdriver: true })).toBe(true);
    expect(bots.isBotEvent(DESKTOP_CHROME, { webdriver: 'true' })).toBe(false);
    expect(bots.isBotEvent(DESKTOP_CHROME, { webdriver: false })).toBe(false);
    expect(bots.isBotEvent(DESKTOP_CHROME, undefined)).toBe(false);
  });

  it('checks each distinct agent once, and forgets everything past its bound', () => {
    const checked: string[] = [];
    const bots = createBotDetector({ maxEntries: 2, check: (ua) => (checked.push(ua), ua.startsWith('bot')) });
    for (let i = 0; i < 20; i++) expect(bots.isBotEvent('bot/1', {})).toBe(true);
    expect(bots.isBotAgent('human')).toBe(false);
    expect(checked).toEqual(['bot/1', 'human']);
    bots.isBotAgent('third');
    bots.isBotAgent('bot/1');
    expect(checked).toEqual(['bot/1', 'human', 'third', 'bot/1']);
  });
});

describe.each(STORE_KINDS)('bot filtering at POST /api/v1/events/batch on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(kind);
  });
  afterAll(() => server.close());

  const read = async (projectId: string, readKey: string) => {
    const res = await fetch(`${server.url}/api/v1/events?limit=1000`, { headers: { authorization: `ApiKey ${readKey}`, 'x-project-id': projectId } });
    return ((await res.json()) as { events: Array<{ event_id: string; is_bot: boolean }> }).events;
  };

  /** 20 events of headless Chromium, one of a desktop browser that reports webdriver, one human. */
  const mixedBatch = () => {
    const headless = Array.from({ length: 20 }, () => makeEvent({ user_agent: HEADLESS_CHROME }));
    const webdriver = makeEvent({ user_agent: DESKTOP_CHROME, properties: { webdriver: true } });
    const human = makeEvent({ user_agent: DESKTOP_CHROME });
    return { headless, webdriver, human, all: [...headless, webdriver, human] };
  };

  it('under `drop`, a headless-Chromium agent and a webdriver-flagged event: 200, counted as processed, in bots_dropped and in /metrics', async () => {
    const project = await server.createProject({ bots: 'drop' });
    const dropped = await counter(server, 'sa_events_bot_dropped_total');
    const batch = mixedBatch();
    const res = await server.postBatch(batch.all, { project });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, processed: 22, bots_dropped: 21 });
    expect((await read(project.id, project.readKey)).map((e) => e.event_id)).toEqual([batch.human.event_id]);
    expect(await counter(server, 'sa_events_bot_dropped_total')).toBe(dropped + 21);

    // An event without its own agent is judged by the request's User-Agent; a batch of bots only is still 200.
    const byHeader = await server.postBatch([makeEvent({ user_agent: null })], { project, headers: { 'user-agent': HEADLESS_CHROME } });
    expect([byHeader.status, await byHeader.json()]).toEqual([200, { success: true, processed: 1, bots_dropped: 1 }]);
    expect(await read(project.id, project.readKey)).toHaveLength(1);
  });

  it('a project made without a policy stores bots flagged (the default): acknowledged means stored', async () => {
    const { generateKey } = await import('../api-keys.js');
    const { DEFAULT_BOT_POLICY } = await import('../store/event-store.js');
    expect(DEFAULT_BOT_POLICY).toBe('flag');
    const id = `proj_default${Date.now()}`;
    await server.store.createProject({ id, name: id, createdAt: Date.now(), fullIp: false, corsOrigins: [], bots: DEFAULT_BOT_POLICY });
    const write = generateKey(id, 'write', Date.now());
    await server.store.createKey(write.record);
    const res = await server.postBatch([makeEvent({ user_agent: HEADLESS_CHROME })], { project: { id, writeKey: write.key, readKey: '', adminKey: '' } });
    expect(await res.json()).toEqual({ success: true, processed: 1 });
    expect((await server.store.queryEvents({ projectId: id, limit: 10 })).events.map((e) => e.isBot)).toEqual([true]);
  });

  /**
   * One batch of 50 events from each agent: server-side HTTP clients with no page context are no
   * bots at all; headless browsers, crawlers, and any agent that sends page context from a script are.
   */
  const SERVER_SIDE_AGENTS = [
    'node',
    'undici',
    'axios/1.7.2',
    'python-requests/2.31.0',
    'python-httpx/0.27.0',
    'curl/8.5.0',
    'Go-http-client/1.1',
    'okhttp/4.12.0',
    'Java/17.0.2',
    'Ruby',
    'posthog-python/3.5.0',
  ];
  const BOT_AGENTS = [
    HEADLESS_CHROME,
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'Googlebot/2.1 (+http://www.google.com/bot.html)',
    'Scrapy/2.11 (+https://scrapy.org)',
  ];
  const HUMAN_AGENTS = [DESKTOP_CHROME, 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'];
  const PAGE = { page: JSON.stringify({ path: '/pricing', url: 'https://example.com/pricing' }), screen: JSON.stringify({ width: 1280, height: 800 }) };
  const fifty = (userAgent: string, properties: Record<string, string> = {}) => Array.from({ length: 50 }, () => makeEvent({ user_agent: userAgent, properties }));

  it.each(['flag', 'drop'] as const)('under `%s`, classes every agent: server-side clients stored unflagged, bots by the policy, with the answer counting what was dropped', async (policy) => {
    const project = await server.createProject({ bots: policy });
    const expected = new Map<string, boolean>();
    for (const agent of SERVER_SIDE_AGENTS) {
      const batch = fifty(agent, { plan: 'pro' });
      expect(await (await server.postBatch(batch, { project })).json()).toEqual({ success: true, processed: 50 });
      for (const e of batch) expected.set(e.event_id as string, false);
    }
    for (const agent of HUMAN_AGENTS) {
      const batch = fifty(agent, PAGE);
      expect(await (await server.postBatch(batch, { project })).json()).toEqual({ success: true, processed: 50 });
      for (const e of batch) expected.set(e.event_id as string, false);
    }
    // A bot's agent, or an HTTP library that sends a page's context (a script posing as a page).
    for (const [agent, properties] of [...BOT_AGENTS.map((a) => [a, PAGE] as const), ['curl/8.5.0', PAGE] as const, ['Googlebot/2.1 (+http://www.google.com/bot.html)', {}] as const]) {
      const batch = fifty(agent, properties);
      const answer = await (await server.postBatch(batch, { project })).json();
      expect(answer).toEqual(policy === 'drop' ? { success: true, processed: 50, bots_dropped: 50 } : { success: true, processed: 50 });
      if (policy === 'flag') for (const e of batch) expected.set(e.event_id as string, true);
    }
    const stored = new Map((await read(project.id, project.readKey)).map((e) => [e.event_id, e.is_bot]));
    expect(stored).toEqual(expected);
  });

  it('flags bots: stored with is_bot, returned by the read API, counted in /metrics', async () => {
    const project = await server.createProject({ bots: 'flag' });
    const flagged = await counter(server, 'sa_events_bot_flagged_total');
    const batch = mixedBatch();
    expect(await (await server.postBatch(batch.all, { project })).json()).toEqual({ success: true, processed: 22 });
    const events = await read(project.id, project.readKey);
    expect(events).toHaveLength(22);
    expect(events.filter((e) => e.is_bot).map((e) => e.event_id).sort()).toEqual([...batch.headless, batch.webdriver].map((e) => e.event_id).sort());
    expect(await counter(server, 'sa_events_bot_flagged_total')).toBe(flagged + 21);
    // A resend is a duplicate, not a second flagged event.
    await server.postBatch(batch.all, { project });
    expect(await counter(server, 'sa_events_bot_flagged_total')).toBe(flagged + 21);
  });

  it('keeps bots as they are, and changing the policy takes effect on the next request', async () => {
    const project = await server.createProject({ bots: 'keep' });
    const batch = mixedBatch();
    await server.postBatch(batch.all, { project });
    const events = await read(project.id, project.readKey);
    expect([events.length, events.some((e) => e.is_bot)]).toEqual([22, false]);
    expect(await server.store.updateProject(project.id, { bots: 'drop' })).toBe(true);
    await server.postBatch([makeEvent({ user_agent: HEADLESS_CHROME })], { project });
    expect(await read(project.id, project.readKey)).toHaveLength(22);
  });
});
