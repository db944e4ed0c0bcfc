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

  it('drops a headless-Chromium agent and a webdriver-flagged event by default: 200, counted as processed and in /metrics', async () => {
    const project = await server.createProject({ bots: 'drop' });
    const dropped = await counter(server, 'sa_events_bot_dropped_total');
    const batch = mixedBatch();
    const res = await server.postBatch(batch.all, { project });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, processed: 22 });
    expect((await read(project.id, project.readKey)).map((e) => e.event_id)).toEqual([batch.human.event_id]);
    expect(await counter(server, 'sa_events_bot_dropped_total')).toBe(dropped + 21);

    // An event without its own agent is judged by the request's User-Agent; a batch of bots only is still 200.
    const byHeader = await server.postBatch([makeEvent({ user_agent: null })], { project, headers: { 'user-agent': HEADLESS_CHROME } });
    expect([byHeader.status, await byHeader.json()]).toEqual([200, { success: true, processed: 1 }]);
    expect(await read(project.id, project.readKey)).toHaveLength(1);
  });

  it('a project made without a policy drops bots (the default)', async () => {
    const { generateKey } = await import('../api-keys.js');
    const { DEFAULT_BOT_POLICY } = await import('../store/event-store.js');
    expect(DEFAULT_BOT_POLICY).toBe('drop');
    const id = `proj_default${Date.now()}`;
    await server.store.createProject({ id, name: id, createdAt: Date.now(), fullIp: false, corsOrigins: [], bots: DEFAULT_BOT_POLICY });
    const write = generateKey(id, 'write', Date.now());
    await server.store.createKey(write.record);
    const res = await server.postBatch([makeEvent({ user_agent: HEADLESS_CHROME })], { project: { id, writeKey: write.key, readKey: '' } });
    expect(await res.json()).toEqual({ success: true, processed: 1 });
    expect((await server.store.queryEvents({ projectId: id, limit: 10 })).events).toEqual([]);
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
