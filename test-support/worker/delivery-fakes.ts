/**
 * Test helpers of the delivery core: event and config factories, a scriptable fake `fetch`, and a
 * real `node:http` server that records what it receives. Test-only: imported by `*.test.ts`
 * files, never by the core.
 */
import { type IncomingHttpHeaders, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { formatEventId } from '../../protocol/event-model/event-id.js';
import type { FetchFn } from '../../protocol/worker/core-deps.js';
import type { DeliveryConfig, ToWorkerMessage } from '../../protocol/worker/worker-contract.js';
import { resolveConfig, toDeliveryConfig } from '../../main/config.js';
import type { AnalyticsEvent } from '../../protocol/event-model/analytics-event.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';

/**
 * A config with the client's defaults (taken from the client's own `resolveConfig`, so a test that
 * names a default tests the real one), compression and journal off.
 */
export function testConfig(overrides: Partial<DeliveryConfig> = {}): DeliveryConfig {
  const defaults = toDeliveryConfig(resolveConfig({ apiKey: 'test-key', projectId: 'proj_1', endpoint: 'http://analytics.test' }));
  return { ...defaults, compress: false, persistQueue: false, ...overrides };
}

/** The ms, counter and tail of UUIDv7 text as the facade makes it (`event-id.ts`); throws on other text. */
export function parseEventId(id: string): { ms: number; counter: number; tail: string } {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-7([0-9a-f]{3})-([89ab][0-9a-f]{3})-([0-9a-f]{4})([0-9a-f]{8})$/.exec(id);
  if (m === null) throw new Error(`not a UUIDv7 of ours: ${id}`);
  const [, msHigh, msLow, upper, mid, low, tail] = m as unknown as string[];
  const counter = parseInt(upper!, 16) * 2 ** 30 + (parseInt(mid!, 16) - 0x8000) * 2 ** 16 + parseInt(low!, 16);
  return { ms: parseInt(msHigh! + msLow!, 16), counter, tail: tail! };
}

/** The random end of the ids of {@link uuidEvents}. */
export const TEST_ID_TAIL = '0e0e0e0e';

/** {@link makeEvents} with UUIDv7 ids (counter = the event's number), as {@link columnsOf} needs. */
export function uuidEvents(count: number, from = 0): AnalyticsEvent[] {
  return makeEvents(count, from).map((event, i) => ({ ...event, id: formatEventId(event.timestamp, from + i, TEST_ID_TAIL) }));
}

/** `events` (UUIDv7 ids of one tail) as columns, one run per event (valid, if not as compact as the facade's). */
export function columnsOf(events: readonly AnalyticsEvent[]): EventColumns {
  const columns: EventColumns = { idMs: [], idCounters: [], idTail: TEST_ID_TAIL, timestamps: [], names: [], properties: [], runs: [] };
  for (const { id, timestamp, event, properties, ...shared } of events) {
    const { ms, counter, tail } = parseEventId(id);
    columns.idTail = tail;
    columns.runs.push({ ...shared, start: columns.timestamps.length });
    columns.idMs.push(ms);
    columns.idCounters.push(counter);
    columns.timestamps.push(timestamp);
    columns.names.push(event);
    columns.properties.push(properties);
  }
  return columns;
}

/** The post of `events` (UUIDv7 ids of one tail, as {@link uuidEvents} makes) as the facade posts them. */
export function postOf(events: readonly AnalyticsEvent[]): Extract<ToWorkerMessage, { t: 'event-columns' }> {
  return { t: 'event-columns', columns: columnsOf(events) };
}

/** How many numbers flat `[from, to, …]` ranges cover. */
export function rangeCount(ranges: readonly number[]): number {
  let count = 0;
  for (let k = 0; k < ranges.length; k += 2) count += ranges[k + 1]! - ranges[k]!;
  return count;
}

/** A `track` event numbered `n`. */
export function makeEvent(n: number, overrides: Partial<AnalyticsEvent> = {}): AnalyticsEvent {
  return {
    id: `evt-${String(n).padStart(6, '0')}`,
    timestamp: Date.UTC(2026, 10, 22, 10, 0, 0) + n,
    type: 'track',
    event: 'clicked',
    properties: { n },
    anonymousId: 'anon-1',
    sessionId: 'sess-1',
    context: {},
    ...overrides,
  };
}

/** `count` events numbered from `from`. */
export function makeEvents(count: number, from = 0): AnalyticsEvent[] {
  return Array.from({ length: count }, (_, i) => makeEvent(from + i));
}

/** One request as a fake fetch or the test server saw it. */
export interface SeenRequest {
  url: string;
  headers: Record<string, string>;
  /** Parsed JSON body (gunzipped first when it was gzipped). */
  body: unknown;
  gzipped: boolean;
}

/**
 * What to answer: a status with a JSON body and headers, a network failure, or an error that is
 * no network failure (`'internal-error'`: a RangeError, as fetch throws for bad arguments).
 */
export type Reply = { status: number; body?: unknown; headers?: Record<string, string> } | 'network-error' | 'internal-error';

/** Answers a batch with 200 `{ success, processed }` and a recording chunk with `{ success, stored }`. */
export function defaultReply(request: SeenRequest): Reply {
  if (Array.isArray(request.body)) return { status: 200, body: { success: true, processed: request.body.length } };
  const events = (request.body as { events?: unknown[] } | undefined)?.events;
  return { status: 200, body: { success: true, stored: events?.length ?? 0 } };
}

/** Ids of the events in a batch request. */
export function idsOf(request: SeenRequest): string[] {
  return (request.body as Array<{ event_id: string }>).map((e) => e.event_id);
}

/**
 * A fake `fetch` that answers from `script` (one reply per call, then {@link defaultReply}) and
 * records every call in `requests`. Set `hold` to keep answers back until `release()`.
 */
export function createFakeFetch(script: Reply[] = []) {
  const requests: SeenRequest[] = [];
  const replies = [...script];
  const held: Array<() => void> = [];
  const state = { hold: false };
  const fetch: FetchFn = async (url, init) => {
    const raw = init.body;
    const gzipped = raw instanceof Uint8Array;
    const text = gzipped ? gunzipSync(raw).toString('utf8') : String(raw);
    const seen: SeenRequest = { url, headers: { ...(init.headers as Record<string, string>) }, body: JSON.parse(text), gzipped };
    requests.push(seen);
    const reply = replies.shift() ?? defaultReply(seen);
    if (state.hold) await new Promise<void>((resolve) => held.push(resolve));
    if (reply === 'network-error') throw new TypeError('fetch failed');
    if (reply === 'internal-error') throw new RangeError('invalid header value');
    return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), {
      status: reply.status,
      headers: { 'content-type': 'application/json', ...reply.headers },
    });
  };
  return {
    fetch,
    requests,
    /** Queues more replies. */
    reply: (...more: Reply[]) => void replies.push(...more),
    state,
    /** Lets every held answer through. */
    release: () => held.splice(0).forEach((resolve) => resolve()),
  };
}

/** A request the test server received. */
export interface ServerRequest extends SeenRequest {
  method: string;
  rawHeaders: IncomingHttpHeaders;
}

/** A real HTTP server on 127.0.0.1 and an ephemeral port that records requests. */
export interface TestServer {
  /** Base address, e.g. `http://127.0.0.1:54321`. */
  url: string;
  requests: ServerRequest[];
  close(): Promise<void>;
}

/** Starts a {@link TestServer}; `respond` decides each answer (default {@link defaultReply}). */
export async function startTestServer(respond: (request: ServerRequest) => Reply = defaultReply): Promise<TestServer> {
  const requests: ServerRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const gzipped = req.headers['content-encoding'] === 'gzip';
      const text = (gzipped ? gunzipSync(raw) : raw).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[key] = value;
      const seen: ServerRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers,
        rawHeaders: req.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
        gzipped,
      };
      requests.push(seen);
      answer(res, respond(seen));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, reply: Reply): void {
  // A real server cannot make the client's fetch throw anything but a network failure.
  if (reply === 'network-error' || reply === 'internal-error') {
    res.socket?.destroy();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
}
