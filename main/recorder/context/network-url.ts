/**
 * A request's URL as a recording keeps it: absolute, without credentials (`user:pass@`) and
 * fragment (where OAuth puts tokens), every query value `[redacted]` unless its name is allowed.
 * Also which URLs are the client's own uploads, which are never recorded, and which are
 * allow-listed for headers and bodies.
 */

/** What a redacted query value reads. */
export const REDACTED = '[redacted]';

/** `raw` resolved against `base`, or null when it is not a URL. */
export function absoluteUrl(raw: string, base: string): URL | null {
  try {
    return new URL(raw, base);
  } catch {
    return null;
  }
}

/** The URL as recorded. A value that is not a URL is kept up to its first `?` or `#`. */
export function redactUrl(raw: string, base: string, allowQueryParams: ReadonlySet<string>): string {
  return redactParsedUrl(absoluteUrl(raw, base), raw, allowQueryParams);
}

/**
 * {@link redactUrl} of a URL already resolved (`absoluteUrl(raw, base)`), which it changes: for a
 * caller that needs the parse for something else too, so that a request's URL is parsed once.
 */
export function redactParsedUrl(url: URL | null, raw: string, allowQueryParams: ReadonlySet<string>): string {
  if (url === null) return raw.split(/[?#]/, 1)[0] ?? '';
  url.username = '';
  url.password = '';
  url.hash = '';
  if (url.search !== '') {
    // Rebuilt by hand: URLSearchParams would re-encode the names and `[redacted]` alike.
    const pairs = url.search.slice(1).split('&').filter((pair) => pair !== '');
    url.search = pairs
      .map((pair) => {
        const eq = pair.indexOf('=');
        const name = eq < 0 ? pair : pair.slice(0, eq);
        if (eq < 0) return name;
        return allowQueryParams.has(safeDecode(name)) ? pair : `${name}=${REDACTED}`;
      })
      .join('&');
  }
  return url.href;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * A test for the client's own uploads under `endpoint` (absolute, no trailing slash): the batch
 * endpoint (also its beacon form) and the recording chunks. A prefix compare on the URL as given:
 * the client always sends to the absolute endpoint.
 */
export function ownUploadTest(endpoint: string): (url: string) => boolean {
  const batch = `${endpoint}/api/v1/events/batch`;
  const sessions = `${endpoint}/api/v1/sessions/`;
  return (url) => url.startsWith(batch) || (url.startsWith(sessions) && url.includes('/recordings'));
}

/** A test for the URLs whose headers and bodies may be recorded. */
export function allowListTest(allowUrls: ReadonlyArray<string | RegExp>): (absolute: string) => boolean {
  return (absolute) =>
    allowUrls.some((allowed) => {
      if (typeof allowed === 'string') return absolute.startsWith(allowed);
      allowed.lastIndex = 0;
      return allowed.test(absolute);
    });
}
