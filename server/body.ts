import type { Context } from 'koa';
import bodyParser from 'koa-bodyparser';
import { HttpError } from './http-error.js';

/** The media types the ingestion endpoints take: JSON, and text/plain for the beacon form. */
const ACCEPTED_TYPES = ['application/json', 'text/plain'];

/** Reads a request body as text, inflating gzip/deflate, refusing more than `limit` bytes. */
export type BodyReader = (ctx: Context) => Promise<string>;

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
  return async (ctx) => {
    try {
      await parse(ctx, noop);
    } catch (error) {
      throw mapParserError(error as BodyParserError, limitBytes);
    }
    const body = ctx.request.body;
    return typeof body === 'string' ? body : '';
  };
}

function mapParserError(error: BodyParserError, limitBytes: number): HttpError {
  switch (error.type) {
    case 'entity.too.large':
      return new HttpError('PAYLOAD_TOO_LARGE', `The body is larger than ${limitBytes} bytes (after decompression).`);
    case 'encoding.unsupported':
      return new HttpError('UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding must be gzip, deflate or identity.');
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

/** Parses JSON text, refusing it with `INVALID_JSON` rather than a 500. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError('INVALID_JSON', 'The body is not valid JSON.');
  }
}
