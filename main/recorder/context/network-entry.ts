/**
 * A noted request as the entry a recording carries (`protocol/replay-entries.ts`): the URL
 * redacted, sizes and duration (from the browser's resource timing where it has the request, which
 * knows the body's end and its encoded size), and headers and bodies only where allowed, with
 * denied headers never and every text masked. Runs when the capture's queue is drained.
 */
import type { NetworkEntry } from '../../../protocol/replay-entries.js';
import type { ResolvedNetworkOptions } from './context-options.js';
import { bodySize, requestBodyText } from './network-body.js';
import { captureHeaders, headerPairs, parseRawHeaders } from './network-headers.js';
import type { RawRequest } from './network-request.js';
import { redactParsedUrl, redactUrl } from './network-url.js';

/** What making an entry needs besides the request. */
export interface NetworkEntryContext {
  /** The page address relative URLs resolve against. */
  base: string;
  options: ResolvedNetworkOptions;
  /** Masks a text with the values the recording's masking hid. */
  mask(text: string): string;
  /** The browser's timing of this request, when it has it. */
  timing?: PerformanceResourceTiming | undefined;
  /**
   * The request's URL resolved against `base` (`absoluteUrl`), when the caller has parsed it
   * already (null: not a URL); the entry's redaction changes it.
   */
  parsed?: URL | null;
}

/** The entry of `request`. */
export function networkEntry(request: RawRequest, context: NetworkEntryContext): NetworkEntry {
  const { options, mask, timing } = context;
  const measured = timing !== undefined && timing.responseEnd > 0 ? timing.responseEnd - timing.startTime : request.t1 - request.t0;
  const entry: NetworkEntry = {
    initiator: request.initiator,
    method: request.method.toUpperCase(),
    url: mask(
      context.parsed === undefined
        ? redactUrl(request.url, context.base, options.allowQueryParams)
        : redactParsedUrl(context.parsed, request.url, options.allowQueryParams),
    ),
    status: request.status,
    duration: Math.max(0, Math.round(measured)),
  };
  if (request.error !== undefined) entry.error = request.error;
  const requestSize = bodySize(request.body);
  if (requestSize !== undefined) entry.requestSize = requestSize;
  const responseSize = timing !== undefined && timing.encodedBodySize > 0 ? timing.encodedBodySize : contentLength(request);
  if (responseSize !== undefined) entry.responseSize = responseSize;
  if (!request.allowed) return entry;
  if (options.recordHeaders) {
    entry.requestHeaders = captureHeaders(request.requestHeaders ?? [], options.denyHeaders, mask);
    const answer = responseHeaderPairs(request);
    if (answer !== undefined) entry.responseHeaders = captureHeaders(answer, options.denyHeaders, mask);
  }
  if (options.recordBodies) {
    const sent = requestBodyText(request.body, options.maxBodyLength);
    if (sent !== undefined) entry.requestBody = mask(sent);
    if (request.responseBody !== undefined) entry.responseBody = mask(request.responseBody);
  }
  return entry;
}

function contentLength(request: RawRequest): number | undefined {
  let value: string | null = null;
  try {
    value = request.response?.headers.get('content-length') ?? request.xhr?.getResponseHeader('content-length') ?? null;
  } catch {
    return undefined;
  }
  const n = value === null ? Number.NaN : Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function responseHeaderPairs(request: RawRequest): Array<[string, string]> | undefined {
  try {
    if (request.response !== undefined) return headerPairs(request.response.headers);
    if (request.xhr !== undefined && request.status !== 0) return parseRawHeaders(request.xhr.getAllResponseHeaders());
  } catch {
    // An object the page reused or closed: no headers.
  }
  return undefined;
}
