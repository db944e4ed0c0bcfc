/**
 * Which headers a recording may hold. Credentials never: the fixed names below and any name that
 * speaks of a token, key, secret, session, password, signature or CSRF are recorded with the value
 * `[denied]`, whatever the options say (they can add names, not lift these).
 */
import type { CapturedHeaders } from '../../../protocol/replay-entries.js';

/** What a denied header's value reads. */
export const DENIED = '[denied]';

/** Header names denied by name. */
export const DENIED_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'set-cookie2',
  'www-authenticate',
  'proxy-authenticate',
  'x-api-key',
  'x-project-id',
]);

/** Header names denied by what they speak of. */
const DENIED_PATTERN = /auth|cookie|token|secret|session|passw|api[-_]?key|csrf|xsrf|signature|credential/i;

/** True when `name` (any case) is never recorded with its value. */
export function isDeniedHeader(name: string, extra: ReadonlySet<string>): boolean {
  const lower = name.toLowerCase();
  return DENIED_HEADERS.has(lower) || extra.has(lower) || DENIED_PATTERN.test(lower);
}

/** `pairs` as recorded: lower-case names, denied values replaced, the rest masked by `mask`. */
export function captureHeaders(pairs: Iterable<[string, string]>, extra: ReadonlySet<string>, mask: (text: string) => string): CapturedHeaders {
  const out: CapturedHeaders = {};
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    out[lower] = isDeniedHeader(lower, extra) ? DENIED : mask(String(value));
  }
  return out;
}

/** The header pairs of what `fetch` or a `Request` takes as headers (a Headers, an array of pairs, a record). */
export function headerPairs(init: unknown): Array<[string, string]> {
  if (init === null || init === undefined) return [];
  if (typeof (init as Headers).forEach === 'function' && typeof (init as Headers).get === 'function') {
    const pairs: Array<[string, string]> = [];
    (init as Headers).forEach((value, name) => pairs.push([name, value]));
    return pairs;
  }
  if (Array.isArray(init)) return init.filter((p): p is [string, string] => Array.isArray(p) && p.length === 2).map(([n, v]) => [String(n), String(v)]);
  if (typeof init === 'object') return Object.entries(init as Record<string, unknown>).map(([n, v]) => [n, String(v)]);
  return [];
}

/** The pairs of `XMLHttpRequest.getAllResponseHeaders()` text. */
export function parseRawHeaders(text: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) pairs.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return pairs;
}
