import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHttpError } from './http-error.js';
import { type BodyCoding, readBody } from './read-body.js';

const LIMIT = 1000;

/** Outcomes of readBody on the server side, in request order: the text, or the error's status and code. */
type Outcome = { text: string } | { status: number; code: string };

let server: Server;
let port: number;
const outcomes: Outcome[] = [];
let outcomeWaiters: Array<() => void> = [];

/** A real server whose one route reads the body with the coding named in `x-coding` and answers what came of it. */
beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const coding = (req.headers['x-coding'] ?? 'identity') as BodyCoding;
    readBody(req, LIMIT, coding).then(
      (text) => {
        outcomes.push({ text });
        res.end(`ok ${text.length}`);
      },
      (error: unknown) => {
        if (!isHttpError(error)) throw error;
        outcomes.push({ status: error.status, code: error.code });
        if (!res.destroyed) {
          res.statusCode = error.status;
          res.end(error.code);
        }
      },
    );
    for (const w of outcomeWaiters) w();
    outcomeWaiters = [];
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** One keep-alive connection on which requests are written raw and answers read back in order. */
async function open(): Promise<{ socket: Socket; send(head: string, body?: Buffer): Promise<{ status: number; body: string }> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let buffered = '';
  let wake: (() => void) | null = null;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    wake?.();
  });
  const nextAnswer = async (): Promise<{ status: number; body: string }> => {
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const head = buffered.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length >= end + 4 + length) {
          const body = buffered.slice(end + 4, end + 4 + length);
          buffered = buffered.slice(end + 4 + length);
          return { status: Number(head.split(' ')[1]), body };
        }
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  };
  return {
    socket,
    send(head, body) {
      socket.write(head);
      if (body) socket.write(body);
      return nextAnswer();
    },
  };
}

const headOf = (length: number | null, coding: BodyCoding = 'identity'): string =>
  `POST / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nx-coding: ${coding}\r\n` +
  (length === null ? 'Transfer-Encoding: chunked\r\n' : `Content-Length: ${length}\r\n`) +
  '\r\n';

/** A body sent in chunked transfer coding, in pieces of `size` bytes: it names no length. */
const chunked = (body: Buffer, size: number): Buffer => {
  const parts: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const piece = body.subarray(i, i + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
};

const waitForOutcome = (count: number): Promise<void> =>
  new Promise((resolve) => {
    const check = (): void => {
      if (outcomes.length >= count) resolve();
      else setImmediate(check);
    };
    check();
  });

describe('readBody(req, limitBytes, coding)', () => {
  it('returns the body as text, joined from many chunks, with a leading byte order mark dropped', async () => {
    const c = await open();
    const text = `[${'"é✓",'.repeat(40)}1]`;
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    expect(await c.send(headOf(null), chunked(body, 7))).toEqual({ status: 200, body: `ok ${text.length}` });
    expect(outcomes.at(-1)).toEqual({ text });
    expect(await c.send(headOf(0))).toEqual({ status: 200, body: 'ok 0' });
    c.socket.destroy();
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('inflates %s, a gzip header on deflate too', async (coding, compress) => {
    const c = await open();
    const text = JSON.stringify([{ event_type: 'x', properties: { a: 'b'.repeat(500) } }]);
    const body = compress(Buffer.from(text));
    expect(await c.send(headOf(body.length, coding), body)).toEqual({ status: 200, body: `ok ${text.length}` });
    if (coding === 'deflate') {
      const gz = gzipSync(Buffer.from(text));
      expect(await c.send(headOf(gz.length, coding), gz)).toEqual({ status: 200, body: `ok ${text.length}` });
    }
    c.socket.destroy();
  });

  it('takes a body of exactly the limit, and refuses one byte more with 413, by Content-Length or while it streams', async () => {
    const c = await open();
    expect(await c.send(headOf(LIMIT), Buffer.alloc(LIMIT, 'a'))).toEqual({ status: 200, body: `ok ${LIMIT}` });
    expect(await c.send(headOf(LIMIT + 1), Buffer.alloc(LIMIT + 1, 'a'))).toEqual({ status: 413, body: 'PAYLOAD_TOO_LARGE' });
    expect(await c.send(headOf(null), chunked(Buffer.alloc(LIMIT * 5, 'a'), 300))).toEqual({ status: 413, body: 'PAYLOAD_TOO_LARGE' });
    // The rest of each refused body was read into nothing: the connection carries the next request.
    expect(await c.send(headOf(2), Buffer.from('[]'))).toEqual({ status: 200, body: 'ok 2' });
    c.socket.destroy();
  });

  it('counts the limit on inflated bytes: a gzip bomb stops at the limit, and the connection stays usable', async () => {
    const c = await open();
    const bomb = gzipSync(Buffer.alloc(20 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(LIMIT * 100);
    expect(await c.send(headOf(bomb.length, 'gzip'), bomb)).toEqual({ status: 413, body: 'PAYLOAD_TOO_LARGE' });
    expect(await c.send(headOf(2), Buffer.from('[]'))).toEqual({ status: 200, body: 'ok 2' });
    c.socket.destroy();
  });

  it('refuses a corrupt or truncated compressed body with 400 INVALID_JSON, and the connection stays usable', async () => {
    const c = await open();
    const garbage = Buffer.from('this is not gzip at all');
    expect(await c.send(headOf(garbage.length, 'gzip'), garbage)).toEqual({ status: 400, body: 'INVALID_JSON' });
    const whole = gzipSync(Buffer.from(JSON.stringify({ a: 'b'.repeat(300) })));
    const cut = whole.subarray(0, whole.length - 12);
    expect(await c.send(headOf(cut.length, 'gzip'), cut)).toEqual({ status: 400, body: 'INVALID_JSON' });
    const brCut = brotliCompressSync(Buffer.from('x'.repeat(900))).subarray(0, 3);
    expect(await c.send(headOf(brCut.length, 'br'), brCut)).toEqual({ status: 400, body: 'INVALID_JSON' });
    expect(await c.send(headOf(2), Buffer.from('[]'))).toEqual({ status: 200, body: 'ok 2' });
    c.socket.destroy();
  });

  it('survives a gzip body that breaks off after inflating past the limit', async () => {
    const c = await open();
    const bomb = gzipSync(Buffer.alloc(5 * 1024 * 1024));
    const head = bomb.subarray(0, Math.floor(bomb.length / 2));
    // Announces the whole bomb, sends half, then corrupt bytes, then goes away.
    const before = outcomes.length;
    c.socket.write(headOf(bomb.length, 'gzip'));
    c.socket.write(Buffer.concat([head, Buffer.alloc(64, 0x55)]));
    await waitForOutcome(before + 1);
    c.socket.destroy();
    expect(outcomes[before]).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    const d = await open();
    expect(await d.send(headOf(2), Buffer.from('[]'))).toEqual({ status: 200, body: 'ok 2' });
    d.socket.destroy();
  });

  it.each(['identity', 'gzip'] as const)('rejects with 400 INVALID_JSON when the client breaks off in the middle of a %s body', async (coding) => {
    const c = await open();
    const body = coding === 'gzip' ? gzipSync(Buffer.from('y'.repeat(800))) : Buffer.alloc(800, 'y');
    const before = outcomes.length;
    c.socket.write(headOf(body.length, coding));
    c.socket.write(body.subarray(0, 10));
    // The server holds the head and the first bytes before the client goes away.
    await new Promise<void>((resolve) => {
      outcomeWaiters.push(resolve);
    });
    c.socket.destroy();
    await waitForOutcome(before + 1);
    expect(outcomes[before]).toEqual({ status: 400, code: 'INVALID_JSON' });
  });
});
