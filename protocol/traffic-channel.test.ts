import { describe, expect, it } from 'vitest';
import { detectChannel } from './traffic-channel.js';

const page = 'https://shop.example/landing';

describe('detectChannel(url, referrer)', () => {
  it.each([
    [page, '', 'direct'],
    [page, 'https://shop.example/other', 'direct'],
    [page, 'https://www.google.com/', 'organic_search'],
    [page, 'https://duckduckgo.com/', 'organic_search'],
    [page, 'https://t.co/abc', 'social'],
    [page, 'https://www.linkedin.com/feed', 'social'],
    [page, 'https://mail.google.com/mail/u/0', 'email'],
    [page, 'https://blog.other.example/post', 'referral'],
    [`${page}?gclid=abc`, 'https://www.google.com/', 'paid_search'],
    [`${page}?utm_medium=cpc&utm_source=google`, '', 'paid_search'],
    [`${page}?utm_medium=cpc&utm_source=facebook`, '', 'paid_social'],
    [`${page}?utm_medium=Email&utm_source=newsletter`, '', 'email'],
    [`${page}?utm_medium=social`, '', 'social'],
    [`${page}?utm_medium=banner`, '', 'display'],
    [`${page}?utm_medium=affiliate`, '', 'affiliate'],
    [`${page}?utm_source=bing`, '', 'organic_search'],
    [`${page}?utm_source=twitter`, '', 'social'],
    [`${page}?utm_source=partner-site`, '', 'referral'],
    [`${page}?fbclid=x`, '', 'social'],
    ['not a url', 'also not', 'direct'],
  ])('%s from %s is %s', (url, referrer, channel) => {
    expect(detectChannel(url, referrer)).toBe(channel);
  });
});
