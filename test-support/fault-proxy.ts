/**
 * A fault-injecting HTTP proxy for tests: it listens on 127.0.0.1 and an ephemeral port in front
 * of a target server and, request by request, along a seeded random schedule, either forwards the
 * request faithfully or plays one fault, so tests can show that with a server that fails a share of
 * requests (5xx, dropped connections, 429), every event arrives exactly once (docs/decisions.md,
 * "Idempotency and deduplication").
 *
 * CORS preflights (`OPTIONS`) are always forwarded, and the proxy's own error answers carry the
 * CORS headers a browser needs to read them (status and `Retry-After`), so the proxy works for
 * cross-origin browser tests as well as for Node clients.
 */
import { type IncomingMessage, type OutgoingHttpHeaders, Agent, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the proxy can do to one request. */
export type FaultKind =
  /** Answer 500 `INTERNAL_ERROR` without forwarding. */
  | 'status-500'
  /** Answer 502 with an HTML body, as a load balancer does, without forwarding. */
  | 'status-502'
  /** Answer 503 `STORAGE_UNAVAILABLE` (no `Retry-After`) without forwarding. */
  | 'status-503'
  /** Answer 429 `RATE_LIMITED` with `Retry-After` without forwarding. */
  | 'rate-limit'
  /** Read the request, then drop the connection: the server never sees it. */
  | 'drop-before'
  /**
   * Forward the request, wait for the server's whole answer, then drop the client's connection:
   * the server committed, the client never heard (the case that needs server-side dedupe).
   */
  | 'drop-after'
  /** Wait `delayMs`, then forward faithfully. */
  | 'delay';

/** Every fault kind, in a fixed order (the order weights are drawn in). */
export const FAULT_KINDS: readonly FaultKind[] = [
  'status-500',
  'status-502',
  'status-503',
  'rate-limit',
  'drop-before',
  'drop-after',
  'delay',
];

/** Options of {@link startFaultProxy}. */
export interface FaultProxyOptions {
  /** Base URL of the server behind the proxy, e.g. `http://127.0.0.1:8787`. */
  target: string;
  /** Seed of the schedule: the same seed gives the same faults for the n-th request. @default 1 */
  seed?: number;
  /** Share of eligible requests that get a fault, 0 to 1. @default 0.3 */
  faultRate?: number;
  /**
   * Relative weights of the fault kinds; kinds left out are never played.
   * @default every kind with weight 1
   */
  mix?: Partial<Record<FaultKind, number>>;
  /** Wait of a `delay` fault, ms; a pair draws uniformly from `[min, max]`. @default 200 */
  delayMs?: number | readonly [number, number];
  /** `Retry-After` of a `rate-limit` answer, seconds. @default 1 */
  retryAfterSeconds?: number;
  /**
   * Which requests may get a fault (preflights never do). @default every request that is not
   * `OPTIONS`
   */
  eligible?: (request: { method: string; path: string }) => boolean;
}

/** What the proxy did, by kind; `forwarded` counts requests passed through without a fault. */
export type FaultCounts = Record<FaultKind | 'forwarded' | 'preflight', number>;

/** One request the proxy handled, in arrival order. */
export interface FaultRecord {
  /** 1-based number of the request. */
  n: number;
  method: string;
  path: string;
  /** The fault played, or `'none'` when the request was forwarded faithfully. */
  fault: FaultKind | 'none';
}

/** A running proxy. */
export interface FaultProxy {
  /** Base URL to send requests to, e.g. `http://127.0.0.1:54321`. */
  readonly url: string;
  /** What was done so far, by kind. */
  counts(): FaultCounts;
  /** Every request handled so far, in arrival order. */
  readonly log: readonly FaultRecord[];
  /** Changes the share of requests that get a fault from now on (0 stops faults). */
  setFaultRate(rate: number): void;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

/** mulberry32: a tiny, fast, seedable PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) that a proxy must not pass on. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

function endToEnd(headers: IncomingMessage['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/**
 * Starts a proxy in front of `options.target`. The n-th request's fault is drawn from a PRNG seeded
 * with `seed`, two draws per request (whether, then which), so a run with the same seed and the same
 * request order plays the same faults.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const seed = options.seed ?? 1;
  const random = mulberry32(seed);
  // Delays draw from their own stream, so the fault schedule does not depend on the delay setting.
  const delayRandom = mulberry32(seed ^ 0x5bd1e995);
  let faultRate = options.faultRate ?? 0.3;
  const weights = FAULT_KINDS.map((kind) => Math.max(0, options.mix ? (options.mix[kind] ?? 0) : 1));
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const delay = options.delayMs ?? 200;
  const retryAfter = String(options.retryAfterSeconds ?? 1);
  const eligible = options.eligible ?? (({ method }) => method !== 'OPTIONS');
  const counts: FaultCounts = { forwarded: 0, preflight: 0, ...(Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>) };
  const log: FaultRecord[] = [];
  const agent = new Agent({ keepAlive: true });
  const sockets = new Set<Socket>();
  let n = 0;

  function draw(): FaultKind | 'none' {
    const whether = random();
    const which = random() * totalWeight;
    if (totalWeight === 0 || whether >= faultRate) return 'none';
    let sum = 0;
    for (let i = 0; i < FAULT_KINDS.length; i++) {
      sum += weights[i] ?? 0;
      if (which < sum) return FAULT_KINDS[i] as FaultKind;
    }
    return FAULT_KINDS[FAULT_KINDS.length - 1] as FaultKind;
  }

  function delayOf(): number {
    if (typeof delay === 'number') return delay;
    const [min, max] = delay;
    return min + Math.floor(delayRandom() * (max - min + 1));
  }

  /** CORS headers for an answer the proxy makes itself, mirroring what the real server allows. */
  function corsHeaders(req: IncomingMessage): Record<string, string> {
    const origin = req.headers.origin;
    return origin ? { 'access-control-allow-origin': origin, 'access-control-expose-headers': 'Retry-After', vary: 'Origin' } : {};
  }

  function answer(req: IncomingMessage, res: ServerResponse, status: number, body: string, headers: Record<string, string>): void {
    res.writeHead(status, { ...headers, ...corsHeaders(req), 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  function jsonError(req: IncomingMessage, res: ServerResponse, status: number, code: string, extra: Record<string, string> = {}): void {
    answer(req, res, status, JSON.stringify({ error: `Injected fault: ${status}.`, code }), { 'content-type': 'application/json', ...extra });
  }

  /**
   * Forwards the request and relays the server's complete answer, or, with `dropAfter`, waits for
   * that answer and then drops the client's connection instead.
   */
  function forward(req: IncomingMessage, body: Buffer, res: ServerResponse, dropAfter: boolean): void {
    const upstream = request(
      {
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), host: target.host, 'content-length': String(body.length) },
        agent,
      },
      (up) => {
        const chunks: Buffer[] = [];
        up.on('data', (chunk: Buffer) => chunks.push(chunk));
        up.on('error', () => res.socket?.destroy());
        up.on('end', () => {
          if (dropAfter) {
            res.socket?.destroy();
            return;
          }
          const answerBody = Buffer.concat(chunks);
          const headers = endToEnd(up.headers);
          headers['content-length'] = String(answerBody.length);
          res.writeHead(up.statusCode ?? 502, up.statusMessage, headers);
          res.end(answerBody);
        });
      },
    );
    // The server is down or cut the connection: the client sees a dropped connection too.
    upstream.on('error', () => res.socket?.destroy());
    upstream.end(body);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.socket?.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      n += 1;
      const preflight = method === 'OPTIONS';
      const fault = preflight || !eligible({ method, path }) ? 'none' : draw();
      log.push({ n, method, path, fault });
      if (fault === 'none') counts[preflight ? 'preflight' : 'forwarded'] += 1;
      else counts[fault] += 1;
      switch (fault) {
        case 'none':
          return forward(req, body, res, false);
        case 'status-500':
          return jsonError(req, res, 500, 'INTERNAL_ERROR');
        case 'status-502':
          return answer(req, res, 502, '<html><body><h1>502 Bad Gateway</h1></body></html>', { 'content-type': 'text/html' });
        case 'status-503':
          return jsonError(req, res, 503, 'STORAGE_UNAVAILABLE');
        case 'rate-limit':
          return jsonError(req, res, 429, 'RATE_LIMITED', { 'retry-after': retryAfter });
        case 'drop-before':
          res.socket?.destroy();
          return;
        case 'drop-after':
          return forward(req, body, res, true);
        case 'delay': {
          const timer = setTimeout(() => forward(req, body, res, false), delayOf());
          res.on('close', () => clearTimeout(timer));
          return;
        }
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  // A client that disconnects mid-request is not the proxy's problem.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    log,
    setFaultRate(rate) {
      faultRate = rate;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
