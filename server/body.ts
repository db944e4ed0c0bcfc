import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import bodyParser from 'koa-bodyparser';
import { HttpError } from './http-error.js';

/** The media types the ingestion endpoints take: JSON, and text/plain for the beacon form. */
const ACCEPTED_TYPES = ['application/json', 'text/plain'];

/**
 * Reads a request body as text, inflating gzip/deflate/br, refusing more than `limit` bytes
 * (decompressed). `beacon` says the request is the beacon form, whose body encoding is named by
 * the `encoding` query parameter because a beacon can set no header.
 */
export type BodyReader = (ctx: Context, beacon: boolean) => Promise<string>;

interface BodyParserError {
  status?: number;
  type?: string;
}

/**
 * Creates a body reader over koa-bodyparser. The limit applies to the decompressed bytes while
 * they stream (co-body inflates before raw-body counts), so a gzip bomb stops at the limit instead
 * of being inflated first. JSON is parsed by the caller, so bad JSON gets our own error code.
 */
export function createBodyReader(limitBytes: number): BodyReader {
  const parse = bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: ['application/json'] },
    // raw-body reads a unit-less string as bytes.
    textLimit: String(limitBytes),
  });
  const noop = async (): Promise<void> => {};
  return async (ctx, beacon) => {
    try {
      const encoding = normalizeEncoding(beacon ? beaconEncoding(ctx) : ctx.get('content-encoding'));
      if (encoding === 'identity') delete ctx.req.headers['content-encoding'];
      else {
        ctx.req.headers['content-encoding'] = encoding;
        keepInflateErrorsHeard(ctx.req);
      }
      await parse(ctx, noop);
    } catch (error) {
      // The rest of a refused body (over the limit, corrupt gzip) is still coming. Read it into
      // nothing, as Node does for a body nobody reads; left unread, it would wedge this keep-alive
      // connection until the headers timeout, and the client's next request with it.
      if (!ctx.req.complete) {
        ctx.req.unpipe();
        ctx.req.resume();
      }
      throw error instanceof HttpError ? error : mapParserError(error as BodyParserError, limitBytes);
    }
    const body = ctx.request.body;
    // The caller holds the text as long as it needs it; left on the context, a batch's text would
    // live until the answer is sent, after the commit, long enough to be moved to the old heap.
    ctx.request.body = undefined;
    ctx.request.rawBody = '';
    return typeof body === 'string' ? body : '';
  };
}

const ignore = (): void => {};

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

/** The body encodings the server inflates, as named in the 415 answer. */
const ENCODINGS_ACCEPTED = 'gzip (or x-gzip), deflate, br or identity';

/**
 * The one encoding a request names, lower-cased (RFC 9110 makes codings case-insensitive, and
 * `x-gzip` an alias of gzip), so the inflater below, which compares exactly, understands it.
 * A list of several codings, or an unknown one, is refused with 415 before anything is read.
 */
function normalizeEncoding(header: string): 'gzip' | 'deflate' | 'br' | 'identity' {
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
 * co-body pipes the request into a zlib stream (inflation) and reads that with raw-body. Once
 * raw-body refuses the body (over the limit) it stops listening to the zlib stream, but the rest of
 * the request still flows in, and when that rest is truncated or corrupt, zlib emits an 'error'
 * that nobody hears: an uncaught exception that ends the process. So whatever the request is piped
 * into keeps a listener; the request itself was already answered (413).
 */
function keepInflateErrorsHeard(req: IncomingMessage): void {
  const pipe = req.pipe;
  req.pipe = function pipeHeard<T extends NodeJS.WritableStream>(this: IncomingMessage, destination: T, options?: { end?: boolean }): T {
    destination.on('error', ignore);
    return pipe.call(this, destination, options) as T;
  };
}

function mapParserError(error: BodyParserError, limitBytes: number): HttpError {
  switch (error.type) {
    case 'entity.too.large':
      return new HttpError('PAYLOAD_TOO_LARGE', `The body is larger than ${limitBytes} bytes (after decompression).`);
    case 'encoding.unsupported':
      return new HttpError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding must be ${ENCODINGS_ACCEPTED}.`);
    default:
      if (error.status === 415) return new HttpError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported body encoding.');
      // Truncated or corrupt gzip, a length that does not match the body, an aborted upload.
      return new HttpError('INVALID_JSON', 'The body could not be read (truncated, corrupt or mis-encoded).');
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
