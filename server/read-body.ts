import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { HttpError } from './http-error.js';

/** A body coding the server inflates, already normalised (`body.ts`, `normalizeEncoding`). */
export type BodyCoding = 'gzip' | 'deflate' | 'br' | 'identity';

/** The body encodings the server inflates, as named in the 415 answer. */
export const ENCODINGS_ACCEPTED = 'gzip (or x-gzip), deflate, br or identity';

const BOM = 0xfeff;

/**
 * Reads a request body as UTF-8 text (a leading byte order mark dropped), inflating `coding`, and
 * refusing more than `limitBytes` decompressed bytes with 413 `PAYLOAD_TOO_LARGE` while they
 * stream, so a gzip bomb stops at the limit instead of being inflated first. A body that breaks
 * off, does not match its `Content-Length`, or is corrupt for its coding is 400 `INVALID_JSON`.
 *
 * Written for the ingest routes in place of a general body parser: one listener per event on the
 * request (and on the inflater), the chunks joined once (docs/decisions.md, "Write path: each
 * event parsed and encoded once"). Whatever is left of a refused body is read into nothing, as
 * Node does for a body nobody reads: left unread, it would wedge the keep-alive connection.
 */
export function readBody(req: IncomingMessage, limitBytes: number, coding: BodyCoding): Promise<string> {
  const tooLarge = (): HttpError => new HttpError('PAYLOAD_TOO_LARGE', `The body is larger than ${limitBytes} bytes (after decompression).`);
  const unreadable = (): HttpError => new HttpError('INVALID_JSON', 'The body could not be read (truncated, corrupt or mis-encoded).');
  const declared = coding === 'identity' ? declaredLength(req) : null;
  if (declared !== null && declared > limitBytes) {
    discard(req);
    return Promise.reject(tooLarge());
  }
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const inflate: Transform | null = coding === 'identity' ? null : inflater(coding);
    const source: IncomingMessage | Transform = inflate ?? req;
    const finish = (error: HttpError | null): void => {
      if (settled) return;
      settled = true;
      source.removeListener('data', onData);
      source.removeListener('end', onEnd);
      req.removeListener('close', onClose);
      if (error === null) {
        resolve(decode(chunks, received));
        return;
      }
      if (inflate !== null) {
        req.unpipe(inflate);
        // A refused inflater may still be written to by data already in flight; it must not throw.
        inflate.on('error', ignore);
        inflate.destroy();
      }
      discard(req);
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limitBytes) finish(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish(declared !== null && received !== declared ? unreadable() : null);
    // The request closed before its body ended: the client broke off.
    const onClose = (): void => {
      if (!req.complete) finish(unreadable());
    };
    source.on('data', onData);
    source.once('end', onEnd);
    req.once('close', onClose);
    if (inflate !== null) {
      inflate.once('error', () => finish(unreadable()));
      req.pipe(inflate);
    }
  });
}

const ignore = (): void => {};

/** `Content-Length` as a number, or null when absent or not a plain count (the body then decides). */
function declaredLength(req: IncomingMessage): number | null {
  const header = req.headers['content-length'];
  if (header === undefined) return null;
  const n = Number(header);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** gzip and deflate by one inflater that tells them apart by their header, as Node's HTTP stacks do. */
function inflater(coding: Exclude<BodyCoding, 'identity'>): Transform {
  return coding === 'br' ? createBrotliDecompress() : createUnzip();
}

/** Reads the rest of a request into nothing, so the connection can carry the next one. */
function discard(req: IncomingMessage): void {
  if (req.complete) return;
  req.unpipe();
  req.resume();
}

function decode(chunks: readonly Buffer[], length: number): string {
  if (chunks.length === 0) return '';
  const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length)).toString('utf8');
  return text.charCodeAt(0) === BOM ? text.slice(1) : text;
}
