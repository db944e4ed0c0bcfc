/**
 * What the recorder's tests read back a recording from, besides the store: the request bodies on
 * the wire (a forwarding proxy in front of the server that keeps every body, gunzipped), the read
 * API (`GET /api/v1/sessions/:id/recording` with the read key, README "A tour of the server"), and
 * the bytes of the SQLite database file and its write-ahead log.
 */
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { type IncomingHttpHeaders, type OutgoingHttpHeaders, createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';

/** One request the proxy passed on. */
export interface WireRequest {
  method: string;
  path: string;
  /** The body as the server got it, decompressed when its `content-encoding` says gzip or deflate. */
  body: string;
}

/** A proxy that forwards every request to its target and keeps each body. */
export interface WireLog {
  /** Origin to use as the client's `endpoint`. */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly WireRequest[];
  close(): Promise<void>;
}

/** Headers a proxy must not pass on (hop-by-hop), plus `host`, which names the proxy. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'host']);

function forwarded(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !NOT_FORWARDED.has(name)) out[name] = value;
  return out;
}

function decode(raw: Buffer, encoding: string | undefined): string {
  if (encoding === 'gzip') return gunzipSync(raw).toString('utf8');
  if (encoding === 'deflate') return inflateSync(raw).toString('utf8');
  return raw.toString('utf8');
}

/** Starts a {@link WireLog} in front of `target` (an `http://host:port` origin). */
export async function startWireLog(target: string): Promise<WireLog> {
  const { hostname, port } = new URL(target);
  const requests: WireRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const encoding = req.headers['content-encoding'];
      requests.push({ method: req.method ?? '', path: req.url ?? '', body: decode(raw, typeof encoding === 'string' ? encoding.toLowerCase() : undefined) });
      const upstream = request({ hostname, port, method: req.method, path: req.url, headers: { ...forwarded(req.headers), 'content-length': raw.length } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwarded(answer.headers));
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      upstream.end(raw);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The body of the read API's answer for one session's recording (throws unless it is 200). */
export async function readRecordingApi(serverUrl: string, project: { id: string; readKey: string }, sessionId: string): Promise<string> {
  const response = await fetch(`${serverUrl}/api/v1/sessions/${encodeURIComponent(sessionId)}/recording`, {
    headers: { authorization: `ApiKey ${project.readKey}`, 'x-project-id': project.id },
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`the read API answered ${response.status}: ${text}`);
  return text;
}

/**
 * The database as bytes: the SQLite file and its write-ahead log (recent commits live there until
 * a checkpoint), concatenated.
 */
export function databaseBytes(path: string): Buffer {
  return Buffer.concat([path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file)));
}

/**
 * Every stored recording chunk's `events` text, read with SQL on a read-only connection of its own:
 * a string the file holds across two pages (an overflow chain) is split in {@link databaseBytes},
 * whole here.
 */
export function storedChunkTexts(path: string): string {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT events FROM recording_chunks').all() as Array<{ events: string }>;
    return rows.map((row) => row.events).join('\n');
  } finally {
    db.close();
  }
}
