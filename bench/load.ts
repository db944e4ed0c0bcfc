// The load generator of the server benchmark: realistic 20-event batches with fresh UUIDv7 ids,
// sent over keep-alive connections with a fixed number of requests in flight.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { type Socket, createConnection } from 'node:net';

/** Where to send and as whom. */
export interface LoadTarget {
  url: string;
  projectId: string;
  key: string;
}

/** How hard and how long to push. */
export interface LoadSettings {
  /** Requests in flight at any time. */
  concurrency: number;
  /** Events per request. */
  batchSize: number;
  /** Seconds of load before the measurement window opens. */
  warmupSeconds: number;
  /** Seconds in the measurement window. */
  durationSeconds: number;
  /** How far in the past the events' times lie, ms (their ids and `X-Sent-At` stay now). @default 0 */
  eventAgeMs?: number;
  /** HTTP client: hand-written keep-alive HTTP/1.1 (`raw`, default) or node:http with an Agent. */
  client?: ClientKind;
  /** Called when the measurement window opens and closes (to sample CPU counters there). */
  onWindow?: (edge: 'open' | 'close') => void;
}

/** What one load run saw. */
export interface LoadResult {
  /** Length of the measurement window as it happened, seconds. */
  windowSeconds: number;
  /** Requests completed with 2xx inside the window. */
  windowOk: number;
  /** Requests completed with a non-2xx status or a transport error inside the window. */
  windowFailed: number;
  /** Latency of every request completed inside the window, ms, sorted ascending. */
  latenciesMs: Float64Array;
  /** Over the whole run (warm-up, window, drain): 2xx answers and the events they acknowledged. */
  totalOk: number;
  acknowledgedEvents: number;
  /** Over the whole run: answers by status (`500`, …) or transport error (`ECONNRESET`, …). */
  failures: Map<string, number>;
  /** 2xx answers whose `processed` was not the batch size. */
  shortAnswers: number;
  /** Bytes of one request body, on average. */
  meanBodyBytes: number;
}

// ---------------------------------------------------------------------------------------------
// Event ids: UUIDv7 (RFC 9562) = 48-bit ms timestamp, version 7, then a 40-bit counter (method 1,
// "fixed-length dedicated counter") and a 32-bit per-run random part. Strictly increasing within
// a run, unique across runs, and one toString(16) per event: no random bytes per id.

const RUN_RANDOM = randomBytes(4).toString('hex');
let idCounter = 0;

/** Time between the events of a template's first batch, ms. */
const EVENT_SPACING_MS = 150;

/**
 * A fresh body of `template`: a copy of its bytes with new event ids and ISO timestamps written in
 * place. Each template stands for one user's client, whose events are time-ordered across its
 * batches: a batch's events are spread between the template's previous batch and now. (Replayed or
 * overlapping timestamps would make every (user, timestamp) index insert land inside the index
 * instead of at its end, which no real client causes.)
 */
function freshBody(template: BodyTemplate, ageMs = 0): Buffer {
  const body = Buffer.allocUnsafe(template.bytes.length);
  template.bytes.copy(body);
  const n = template.idAt.length;
  const now = Date.now();
  const ts = now.toString(16).padStart(12, '0');
  const head = `${ts.slice(0, 8)}-${ts.slice(8)}-7`;
  const stamp = now - ageMs;
  const from = template.lastTimestamp ?? stamp - n * EVENT_SPACING_MS;
  const step = Math.max(0, stamp - from) / n;
  for (let i = 0; i < n; i++) {
    const c = (idCounter++).toString(16).padStart(10, '0');
    body.write(`${head}${c.slice(0, 3)}-8${c.slice(3, 6)}-${c.slice(6)}${RUN_RANDOM}`, template.idAt[i] as number, 'latin1');
    body.write(isoTimestamp(Math.round(from + step * (i + 1))), template.tsAt[i] as number, 'latin1');
  }
  template.lastTimestamp = Math.max(from, stamp);
  return body;
}

let isoSecond = Number.NaN;
let isoPrefix = '';
const MS_DIGITS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);

/** `new Date(ms).toISOString()` for recent times, without a Date per call: the second's prefix is cached. */
function isoTimestamp(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  return isoPrefix + (MS_DIGITS[ms - second * 1000] as string);
}

// ---------------------------------------------------------------------------------------------
// Bodies: a few dozen realistic batches serialised once, with the byte offsets of their ids and
// timestamps; a request copies one and writes fresh values in place (no JSON work per request).

const ID_MARK = '@@EVENT_ID@@';
const TS_MARK = '@@TIMESTAMP@@';
const MARKS = new RegExp(`"${ID_MARK}"|"${TS_MARK}"`);
const TEMPLATE_COUNT = 32;

interface BodyTemplate {
  /** The body with placeholder ids and timestamps (both ASCII of fixed length). */
  bytes: Buffer;
  /** Byte offsets of each event's id and timestamp, inside their quotes. */
  idAt: number[];
  tsAt: number[];
  /** Timestamp of the last event sent from this template, ms. */
  lastTimestamp?: number;
}

const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
];
const PATHS = ['/', '/pricing', '/docs/getting-started', '/dashboard', '/settings/billing', '/blog/2026/release-notes', '/checkout'];
const TITLES = ['Home', 'Pricing', 'Getting started', 'Dashboard', 'Billing settings', 'Release notes', 'Checkout'];
const SCREENS = [
  { width: 1920, height: 1080, viewport_width: 1903, viewport_height: 961 },
  { width: 1440, height: 900, viewport_width: 1440, viewport_height: 789 },
  { width: 390, height: 844, viewport_width: 390, viewport_height: 664 },
];

/** A small deterministic PRNG, so every run sends the same bodies. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Props = Record<string, string | number | boolean | null>;

function pick<T>(rnd: () => number, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)] as T;
}

/**
 * One event as the browser client sends it (docs/decisions.md, "Wire mapping of every client
 * call"): 8–12 scalar properties.
 */
function makeEvent(rnd: () => number, user: number, session: string): Record<string, unknown> {
  const p = Math.floor(rnd() * PATHS.length);
  const path = PATHS[p] as string;
  const screen = pick(rnd, SCREENS);
  const context: Props = {
    anonymous_id: `anon_${((user * 2654435761) >>> 0).toString(36)}`,
    page: JSON.stringify({ url: `https://app.example.com${path}`, path, title: TITLES[p], referrer: rnd() < 0.5 ? 'https://www.google.com/' : '' }),
    screen: JSON.stringify({ width: screen.width, height: screen.height }),
    locale: pick(rnd, ['en-US', 'de-DE', 'fr-FR', 'ja-JP']),
    lib_version: '0.1.0',
  };
  const kind = Math.floor(rnd() * 5);
  let eventType: string;
  let extra: Props;
  switch (kind) {
    case 0:
      eventType = 'page_view';
      extra = { load_time_ms: Math.round(200 + rnd() * 1800), ttfb_ms: Math.round(20 + rnd() * 300), is_first_visit: rnd() < 0.2 };
      break;
    case 1:
      eventType = 'click';
      extra = {
        element: 'button',
        selector: `#plans > div:nth-child(${1 + Math.floor(rnd() * 4)}) > button`,
        x: Math.round(rnd() * screen.viewport_width),
        y: Math.round(rnd() * screen.viewport_height),
      };
      break;
    case 2:
      eventType = 'feature_used';
      extra = { feature: pick(rnd, ['export_csv', 'dark_mode', 'share_link', 'bulk_edit']), plan: pick(rnd, ['free', 'pro', 'team']), source: 'toolbar' };
      break;
    case 3:
      eventType = 'funnel_step';
      extra = { funnel: 'onboarding', step: pick(rnd, ['signup', 'verify_email', 'create_project', 'invite']), step_index: Math.floor(rnd() * 4) };
      break;
    default:
      eventType = 'performance';
      extra = { metric: pick(rnd, ['LCP', 'INP', 'CLS']), value: Math.round(rnd() * 250000) / 100, rating: pick(rnd, ['good', 'needs-improvement']) };
  }
  return {
    event_id: ID_MARK,
    event_type: eventType,
    user_id: rnd() < 0.7 ? `user_${user}` : null,
    session_id: session,
    timestamp: TS_MARK,
    properties: { ...context, ...extra },
    user_agent: USER_AGENTS[user % USER_AGENTS.length],
  };
}

function makeTemplates(batchSize: number): BodyTemplate[] {
  const rnd = prng(20_261_122);
  const templates: BodyTemplate[] = [];
  for (let t = 0; t < TEMPLATE_COUNT; t++) {
    const user = 1000 + Math.floor(rnd() * 9000);
    const session = `sess_${user.toString(36)}_${t.toString(36)}_${Math.floor(rnd() * 1e9).toString(36)}`;
    const events = [];
    for (let i = 0; i < batchSize; i++) events.push(makeEvent(rnd, user, session));
    // In each event the id comes before the timestamp (key order of makeEvent): id, ts, id, ts, …
    const parts = JSON.stringify(events).split(MARKS);
    if (parts.length !== 2 * batchSize + 1) throw new Error('a mark appears in a property');
    let text = parts[0] as string;
    const idAt: number[] = [];
    const tsAt: number[] = [];
    for (let i = 0; i < batchSize; i++) {
      idAt.push(Buffer.byteLength(text) + 1);
      text += `"00000000-0000-7000-8000-000000000000"${parts[2 * i + 1]}`;
      tsAt.push(Buffer.byteLength(text) + 1);
      text += `"2026-01-01T00:00:00.000Z"${parts[2 * i + 2]}`;
    }
    templates.push({ bytes: Buffer.from(text), idAt, tsAt });
  }
  return templates;
}

/**
 * Realistic bodies with fresh ids, as they go over the wire (for size reporting and store-only
 * measurements): `count` of them, cycling through the templates like the load does.
 */
export function sampleBodies(batchSize: number, count = 1): string[] {
  const templates = makeTemplates(batchSize);
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) bodies.push(freshBody(templates[i % templates.length] as BodyTemplate).toString('utf8'));
  return bodies;
}

// ---------------------------------------------------------------------------------------------

type Answer = { status: number; text: string } | { error: string };

/** Sends one request on a slot (one slot = one request in flight at a time) and reports the answer. */
interface Transport {
  send(slot: number, body: Buffer, cb: (answer: Answer) => void): void;
  close(): void;
}

/**
 * node:http with a keep-alive Agent: what most Node clients use. Measured here, it costs about as
 * much CPU per request as the bare server, so it cannot show the bare limit on two cores.
 */
function httpTransport(url: URL, fixedHeaders: Record<string, string>, concurrency: number): Transport {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency, scheduling: 'fifo' });
  return {
    send(_slot, body, cb) {
      let answered = false;
      const answer = (a: Answer): void => {
        if (answered) return;
        answered = true;
        cb(a);
      };
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/api/v1/events/batch',
          method: 'POST',
          agent,
          headers: { ...fixedHeaders, 'Content-Length': body.length, 'X-Sent-At': new Date().toISOString() },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => answer({ status: res.statusCode ?? 0, text }));
          res.on('error', (error: NodeJS.ErrnoException) => answer({ error: error.code ?? error.message }));
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => answer({ error: error.code ?? error.message }));
      req.end(body);
    },
    close: () => agent.destroy(),
  };
}

/**
 * HTTP/1.1 by hand over one keep-alive socket per slot: the request head is a string template, the
 * answer is read by Content-Length (or chunked). A fraction of node:http's CPU per request, so that
 * the load generator does not set the bare server's limit.
 */
function rawTransport(url: URL, fixedHeaders: Record<string, string>): Transport {
  const fixed = Object.entries(fixedHeaders)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const headStart = `POST /api/v1/events/batch HTTP/1.1\r\nHost: ${url.host}\r\nConnection: keep-alive\r\n${fixed}`;
  interface Connection {
    socket: Socket;
    /** The request waiting for its answer on this connection. */
    cb: ((answer: Answer) => void) | null;
    buf: Buffer | null;
  }
  const connections: Array<Connection | undefined> = [];
  let closed = false;

  const connect = (slot: number): Connection => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port) });
    socket.setNoDelay(true);
    const conn: Connection = { socket, cb: null, buf: null };
    const settle = (answer: Answer): void => {
      const cb = conn.cb;
      conn.cb = null;
      conn.buf = null;
      cb?.(answer);
    };
    const drop = (reason: string): void => {
      if (connections[slot] === conn) connections[slot] = undefined;
      socket.destroy();
      settle({ error: reason });
    };
    socket.on('data', (chunk: Buffer) => {
      if (!conn.cb) return drop('unexpected data');
      const buf = conn.buf ? Buffer.concat([conn.buf, chunk]) : chunk;
      const parsed = parseResponse(buf);
      if (parsed === null) {
        conn.buf = buf;
        return;
      }
      if (parsed === 'bad') return drop('bad response');
      if (parsed.close) {
        // The server ends this connection: the next request of the slot opens a new one.
        connections[slot] = undefined;
        socket.end();
      }
      settle({ status: parsed.status, text: parsed.text });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => drop(error.code ?? error.message));
    socket.on('close', () => drop('ECONNRESET'));
    connections[slot] = conn;
    return conn;
  };

  return {
    send(slot, body, cb) {
      if (closed) return cb({ error: 'closed' });
      const conn = connections[slot] ?? connect(slot);
      conn.cb = cb;
      // Head and body leave in one writev.
      conn.socket.cork();
      conn.socket.write(`${headStart}X-Sent-At: ${new Date().toISOString()}\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1');
      conn.socket.write(body);
      conn.socket.uncork();
    },
    close() {
      closed = true;
      for (const conn of connections) conn?.socket.destroy();
    },
  };
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One HTTP/1.1 response from the start of `buf`: null when incomplete, 'bad' when unreadable. */
function parseResponse(buf: Buffer): { status: number; text: string; close: boolean } | null | 'bad' {
  const end = buf.indexOf(HEADER_END);
  if (end < 0) return buf.length > 64 * 1024 ? 'bad' : null;
  const head = buf.toString('latin1', 0, end);
  const status = Number(head.slice(9, 12));
  if (!head.startsWith('HTTP/1.') || !Number.isInteger(status)) return 'bad';
  const lower = head.toLowerCase();
  const close = lower.includes('\r\nconnection: close');
  const bodyStart = end + 4;
  const length = /\r\ncontent-length: *(\d+)/.exec(lower);
  if (length) {
    const n = Number(length[1]);
    if (buf.length < bodyStart + n) return null;
    if (buf.length > bodyStart + n) return 'bad';
    return { status, text: buf.toString('utf8', bodyStart, bodyStart + n), close };
  }
  if (!lower.includes('\r\ntransfer-encoding: chunked')) return 'bad';
  // Chunked: size line, data, CRLF … until the 0-size chunk and the blank line after it.
  let at = bodyStart;
  let text = '';
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = Number.parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (!Number.isInteger(size)) return 'bad';
    if (size === 0) return buf.length >= lineEnd + 4 ? { status, text, close } : null;
    if (buf.length < lineEnd + 2 + size + 2) return null;
    text += buf.toString('utf8', lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** Which HTTP client the load generator uses. */
export type ClientKind = 'raw' | 'http';

/**
 * Pushes load at a server, or at several (processes behind one address in production), and
 * measures it as one; resolves after the last in-flight request ends. With several targets the
 * requests in flight are shared out evenly, slot by slot.
 */
export function runLoad(target: LoadTarget | readonly LoadTarget[], settings: LoadSettings): Promise<LoadResult> {
  const { concurrency, batchSize } = settings;
  const targets: readonly LoadTarget[] = Array.isArray(target) ? target : [target as LoadTarget];
  if (targets.length === 0) throw new Error('runLoad needs a target');
  const templates = makeTemplates(batchSize);
  const transports = targets.map((t) => {
    const url = new URL(t.url);
    if (url.hostname !== '127.0.0.1') throw new Error(`the benchmark only targets 127.0.0.1, not ${url.hostname}`);
    const fixedHeaders = {
      'Content-Type': 'application/json',
      Authorization: `ApiKey ${t.key}`,
      'X-Project-ID': t.projectId,
    };
    return settings.client === 'http' ? httpTransport(url, fixedHeaders, concurrency) : rawTransport(url, fixedHeaders);
  });
  const transport: Transport = {
    send: (slot, body, cb) => (transports[slot % transports.length] as Transport).send(slot, body, cb),
    close: () => {
      for (const t of transports) t.close();
    },
  };
  const expected = `"processed":${batchSize}`;

  let phase: 'warmup' | 'window' | 'drain' = 'warmup';
  let windowStart = 0;
  let windowEnd = 0;
  let windowOk = 0;
  let windowFailed = 0;
  let latencies = new Float64Array(1 << 16);
  let latencyCount = 0;
  let totalOk = 0;
  let acknowledged = 0;
  let shortAnswers = 0;
  let sent = 0;
  let sentBytes = 0;
  let inFlight = 0;
  let next = 0;
  const failures = new Map<string, number>();

  return new Promise<LoadResult>((resolve) => {
    function fire(slot: number): void {
      const template = templates[next++ % templates.length] as BodyTemplate;
      const body = freshBody(template, settings.eventAgeMs);
      sent++;
      sentBytes += body.length;
      inFlight++;
      const started = performance.now();
      transport.send(slot, body, (answer) => {
        const ended = performance.now();
        let ok = false;
        if ('error' in answer) failures.set(answer.error, (failures.get(answer.error) ?? 0) + 1);
        else if (answer.status >= 200 && answer.status < 300) {
          ok = true;
          totalOk++;
          // Count what the server says it processed; a substring test before a parse.
          if (answer.text.includes(expected)) acknowledged += batchSize;
          else {
            shortAnswers++;
            try {
              const processed = (JSON.parse(answer.text) as { processed?: unknown }).processed;
              acknowledged += typeof processed === 'number' ? processed : 0;
            } catch {
              // counted as a short answer
            }
          }
        } else {
          const key = String(answer.status);
          failures.set(key, (failures.get(key) ?? 0) + 1);
        }
        inFlight--;
        if (phase === 'window') {
          if (ok) windowOk++;
          else windowFailed++;
          if (latencyCount === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[latencyCount++] = ended - started;
        }
        if (phase !== 'drain') fire(slot);
        else if (inFlight === 0) done();
      });
    }

    function done(): void {
      transport.close();
      const sorted = latencies.slice(0, latencyCount).sort();
      resolve({
        windowSeconds: (windowEnd - windowStart) / 1000,
        windowOk,
        windowFailed,
        latenciesMs: sorted,
        totalOk,
        acknowledgedEvents: acknowledged,
        failures,
        shortAnswers,
        meanBodyBytes: sent > 0 ? sentBytes / sent : 0,
      });
    }

    for (let slot = 0; slot < concurrency; slot++) fire(slot);
    setTimeout(() => {
      phase = 'window';
      windowStart = performance.now();
      settings.onWindow?.('open');
      setTimeout(() => {
        phase = 'drain';
        windowEnd = performance.now();
        settings.onWindow?.('close');
        if (inFlight === 0) done();
      }, settings.durationSeconds * 1000);
    }, settings.warmupSeconds * 1000);
  });
}

/** The `q`-quantile (0–1) of sorted values, by nearest rank. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}
