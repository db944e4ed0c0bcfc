import { describe, expect, it } from 'vitest';
import { createDimensionExtractor, pageFactsOf, screenClassOf } from './dimensions.js';
import { createUserAgentParser } from './user-agent.js';

const page = (url: string, referrer = '', path?: string) => JSON.stringify({ title: 't', url, referrer, search: '', ...(path ? { path } : {}) });

describe('pageFactsOf(page)', () => {
  it('takes path, host, UTM and the channel of an entry from a search engine', () => {
    expect(pageFactsOf(page('https://Shop.Example/pricing?utm_source=google&utm_medium=cpc&utm_campaign=x', 'https://www.google.com/'))).toEqual({
      path: '/pricing',
      host: 'shop.example',
      referrerHost: 'www.google.com',
      channel: 'paid_search',
      utmSource: 'google',
      utmMedium: 'cpc',
      utmCampaign: 'x',
    });
  });

  it('gives a navigation inside the site neither referrer nor channel, and an entry without referrer direct', () => {
    expect(pageFactsOf(page('https://shop.example/b', 'https://shop.example/a'))).toMatchObject({ referrerHost: null, channel: null });
    expect(pageFactsOf(page('https://shop.example/b'))).toMatchObject({ referrerHost: null, channel: 'direct' });
    // Campaign tags still name the channel, even from inside the site.
    expect(pageFactsOf(page('https://shop.example/b?utm_medium=email', 'https://shop.example/a'))).toMatchObject({ channel: 'email' });
  });

  it('prefers page.path, and leaves everything null for a missing or broken page', () => {
    expect(pageFactsOf(page('https://shop.example/x', '', '/custom')).path).toBe('/custom');
    for (const broken of [undefined, '', 'not json', '[1]', '{"url":"::"}', 42]) {
      expect(pageFactsOf(broken)).toMatchObject({ path: null, host: null, channel: null });
    }
  });
});

describe('screenClassOf(width)', () => {
  it.each([
    [375, 'mobile'],
    [575, 'mobile'],
    [576, 'tablet'],
    [991, 'tablet'],
    [992, 'laptop'],
    [1439, 'laptop'],
    [1440, 'desktop'],
  ])('%i px is %s', (width, expected) => expect(screenClassOf(width)).toBe(expected));
});

describe('createDimensionExtractor()', () => {
  it('reads browser, OS and device from the agent and the screen class and anonymous id from the properties', () => {
    const extract = createDimensionExtractor();
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
    expect(extract.extract({ screen: '{"width":390,"height":844}', anonymous_id: 'a1' }, iphone)).toMatchObject({
      browser: 'Mobile Safari',
      os: 'iOS',
      device: 'mobile',
      screenClass: 'mobile',
      anonymousId: 'a1',
    });
    const windows = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
    expect(extract.extract({}, windows)).toMatchObject({ browser: 'Chrome', os: 'Windows', device: 'desktop', screenClass: null, anonymousId: null });
    expect(extract.extract({}, null)).toMatchObject({ browser: null, os: null, device: null });
  });

  it("copies the request's country into the event's columns, none when not given", () => {
    const extract = createDimensionExtractor();
    expect(extract.extract({}, null, 'GB').country).toBe('GB');
    expect(extract.extract({}, null, null).country).toBeNull();
    expect(extract.extract({}, null).country).toBeNull();
  });

  it('parses each distinct user agent once, however many events carry it', () => {
    let parses = 0;
    const agents = createUserAgentParser({
      parse: () => {
        parses++;
        return { browser: 'B', os: 'O', device: 'desktop' };
      },
      maxEntries: 2,
    });
    const extract = createDimensionExtractor({ agents });
    for (let i = 0; i < 1000; i++) extract.extract({}, i % 2 === 0 ? 'a' : 'b');
    expect(parses).toBe(2);
    // Past maxEntries the memory starts over: bounded, whatever the agents.
    extract.extract({}, 'c');
    extract.extract({}, 'a');
    expect(parses).toBe(4);
  });
});
