import type { Context } from 'koa';
import { HttpError } from './http-error.js';
import { type BodyCoding, ENCODINGS_ACCEPTED, readBody } from './read-body.js';

/** The media types the ingestion endpoints take: JSON, and text/plain for the beacon form. */
const ACCEPTED_TYPES = ['application/json', 'text/plain'];

/**
 * Reads a request body as text, inflating gzip/deflate/br, refusing more than `limit` bytes
 * (decompressed). `beacon` says the request is the beacon form, whose body encoding is named by
 * the `encoding` query parameter because a beacon can set no header.
 */
export type BodyReader = (ctx: Context, beacon: boolean) => Promise<string>;

/**
 * Creates a body reader over `readBody` (`read-body.ts`). The limit applies to the decompressed
 * bytes while they stream, so a gzip bomb stops at the limit instead of being inflated first. JSON
 * is parsed by the caller, so bad JSON gets our own error code. The text is returned, never left
 * on the context: there a batch's text would live until the answer is sent, after the commit, long
 * enough to be moved to the old heap.
 */
export function createBodyReader(limitBytes: number): BodyReader {
  return (ctx, beacon) => {
    let coding: BodyCoding;
    try {
      coding = normalizeEncoding(beacon ? beaconEncoding(ctx) : (ctx.req.headers['content-encoding'] ?? ''));
    } catch (error) {
      // Nothing was read: Node reads the unread body into nothing once the answer is sent.
      return Promise.reject(error);
    }
    return readBody(ctx.req, limitBytes, coding);
  };
}

/**
 * The encoding of a beacon's body: the `encoding` query parameter (`?encoding=gzip`), since
 * `navigator.sendBeacon` sets no `Content-Encoding`; a header, should a client send one, is used
 * when the parameter is absent. Given twice, the parameter is refused like an unknown coding.
 */
function beaconEncoding(ctx: Context): string {
  const value = ctx.query.encoding;
  if (value === undefined) return ctx.get('content-encoding');
  return typeof value === 'string' ? value : 'two encodings';
}

/**
 * The one encoding a request names, lower-cased (RFC 9110 makes codings case-insensitive, and
 * `x-gzip` an alias of gzip). A list of several codings, or an unknown one, is refused with 415
 * before anything is read.
 */
function normalizeEncoding(header: string): BodyCoding {
  const coding = header.trim().toLowerCase();
  switch (coding) {
    case '':
    case 'identity':
      return 'identity';
    case 'gzip':
    case 'x-gzip':
      return 'gzip';
    case 'deflate':
    case 'br':
      return coding;
    default:
      throw new HttpError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding must be ${ENCODINGS_ACCEPTED}.`);
  }
}

/**
 * Refuses a request whose Content-Type is not JSON or text/plain, before anything is read.
 * @returns true for the beacon form (text/plain).
 */
export function requireIngestType(ctx: Context): { beacon: boolean } {
  const type = ctx.request.is(ACCEPTED_TYPES);
  if (!type) {
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json (or text/plain for a beacon).');
  }
  return { beacon: type === 'text/plain' };
}

/**
 * The client's clock at sending, for clock-skew correction: the `X-Sent-At` header, or on the
 * beacon form (which can carry no headers) the `sent_at` query parameter.
 */
export function sentAtOf(ctx: Context, beacon: boolean): string | undefined {
  if (!beacon) return ctx.get('x-sent-at') || undefined;
  const value = ctx.query.sent_at;
  return typeof value === 'string' ? value : undefined;
}

/** Parses JSON text, refusing it with `INVALID_JSON` rather than a 500. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError('INVALID_JSON', 'The body is not valid JSON.');
  }
}
