/**
 * The traffic channel of a visit, from the landing page's URL and the referrer. The rules, first
 * match wins:
 *
 * 1. Click ids: `gclid`, `gbraid`, `wbraid`, `msclkid` → `paid_search`.
 * 2. `utm_medium` (lower-cased): `cpc`, `ppc`, `paid`, `paidsearch`, `paid_search`, `sem` →
 *    `paid_social` when `utm_source` is a social network, else `paid_search`; `paid_social`,
 *    `paidsocial` → `paid_social`; `email`, `e-mail`, `newsletter` → `email`; `social`,
 *    `social-network`, `social_media`, `sm` → `social`; `display`, `banner`, `cpm`, `video` →
 *    `display`; `affiliate`, `partner` → `affiliate`; `organic` → `organic_search`; `referral` →
 *    `referral`.
 * 3. `utm_source` alone: a search engine → `organic_search`, a social network → `social`, any other
 *    value → `referral`.
 * 4. `fbclid`, `ttclid`, `li_fat_id` → `social`.
 * 5. The referrer: none, or the page's own host → `direct`; a web-mail host (`mail.…`,
 *    `outlook.…`) → `email`; a search engine → `organic_search`; a social network → `social`; any
 *    other host → `referral`. Hosts are matched by their name label (`google` in
 *    `www.google.co.uk`, `t` in `t.co`).
 */
/**
 * Where a session's traffic came from, derived from the landing URL's UTM tags and the referrer.
 * The client gives it to a session (`analytics.session`); the server stores it per event as a report
 * dimension (docs/protocol.md, "Reports").
 */
export type TrafficChannel =
  | 'direct'
  | 'organic_search'
  | 'paid_search'
  | 'social'
  | 'paid_social'
  | 'email'
  | 'display'
  | 'affiliate'
  | 'referral';

/** Every {@link TrafficChannel}. */
export const TRAFFIC_CHANNELS: readonly TrafficChannel[] = [
  'direct',
  'organic_search',
  'paid_search',
  'social',
  'paid_social',
  'email',
  'display',
  'affiliate',
  'referral',
];

/** Search engines, by the name part of their host (google in www.google.co.uk) or as utm_source. */
const SEARCH = /^(google|bing|yahoo|duckduckgo|baidu|yandex|ecosia|ask|naver|seznam|startpage|qwant|brave)$/;
/** Social networks, likewise (t is t.co and t.me, lnkd is lnkd.in, ycombinator is Hacker News). */
const SOCIAL =
  /^(facebook|fb|instagram|ig|t|twitter|x|linkedin|lnkd|reddit|pinterest|youtube|tiktok|threads|bsky|bluesky|mastodon|ycombinator|hackernews|quora|snapchat|whatsapp|telegram|vk|weibo)$/;
/** Second-level labels under which the name is one label further left (google.co.uk). */
const GENERIC_SLD = /^(co|com|org|net|ac|gov|edu)$/;

const MEDIUMS: Readonly<Record<string, TrafficChannel>> = {
  paid_social: 'paid_social',
  paidsocial: 'paid_social',
  email: 'email',
  'e-mail': 'email',
  newsletter: 'email',
  social: 'social',
  'social-network': 'social',
  social_media: 'social',
  sm: 'social',
  display: 'display',
  banner: 'display',
  cpm: 'display',
  video: 'display',
  affiliate: 'affiliate',
  partner: 'affiliate',
  organic: 'organic_search',
  referral: 'referral',
};
const PAID_MEDIUMS = /^(cpc|ppc|paid|paidsearch|paid_search|sem)$/;

/**
 * Classifies a visit (rules above).
 * @param url the landing page's address.
 * @param referrer `document.referrer`; empty for none.
 */
export function detectChannel(url: string, referrer: string): TrafficChannel {
  const page = parse(url);
  const params = page?.searchParams ?? new URLSearchParams();
  const has = (name: string): boolean => params.has(name);
  if (has('gclid') || has('gbraid') || has('wbraid') || has('msclkid')) return 'paid_search';

  const medium = (params.get('utm_medium') ?? '').trim().toLowerCase();
  const source = (params.get('utm_source') ?? '').trim().toLowerCase();
  if (PAID_MEDIUMS.test(medium)) return SOCIAL.test(source) ? 'paid_social' : 'paid_search';
  const channel = MEDIUMS[medium];
  if (channel !== undefined && Object.hasOwn(MEDIUMS, medium)) return channel;
  if (source !== '') return SEARCH.test(source) ? 'organic_search' : SOCIAL.test(source) ? 'social' : 'referral';
  if (has('fbclid') || has('ttclid') || has('li_fat_id')) return 'social';

  const host = parse(referrer)?.hostname.toLowerCase() ?? '';
  if (host === '' || host === page?.hostname) return 'direct';
  if (host.startsWith('mail.') || host.startsWith('outlook.')) return 'email';
  const labels = host.split('.');
  let name = labels.length > 1 ? labels[labels.length - 2]! : host;
  if (labels.length > 2 && GENERIC_SLD.test(name)) name = labels[labels.length - 3]!;
  return SEARCH.test(name) ? 'organic_search' : SOCIAL.test(name) ? 'social' : 'referral';
}

function parse(url: string): URL | undefined {
  try {
    return url === '' ? undefined : new URL(url);
  } catch {
    return undefined;
  }
}
