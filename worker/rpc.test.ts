/**
 * The whole boundary in one realm (comlink's own test approach): the control plane through comlink
 * over a `MessageChannel`, the data plane over a second channel whose port is transferred in
 * `init`, against a real `node:http` server.
 */
import { type Endpoint, type Remote, releaseProxy, transfer, wrap } from 'comlink';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toRanges } from '../protocol/worker/number-ranges.js';
import {
  type ServerRequest,
  type TestServer,
  columnsOf,
  postOf,
  uuidEvents,
  defaultReply,
  idsOf,
  rangeCount,
  startTestServer,
  testConfig,
} from '../test-support/worker/delivery-fakes.js';
import { WORKER_PROTOCOL_VERSION } from '../protocol/worker/protocol-version.js';
import type { FromWorkerMessage, WorkerApi } from '../protocol/worker/worker-contract.js';
import { exposeWorkerApi } from './worker-api.js';

let server: TestServer;
let failNext = 0;
let control: MessageChannel;
let data: MessageChannel;
let api: Remote<WorkerApi>;
let received: FromWorkerMessage[];

beforeEach(async () => {
  failNext = 0;
  server = await startTestServer((request: ServerRequest) => {
    if (failNext > 0) {
      failNext -= 1;
      return { status: 500, body: { error: 'Internal error', code: 'INTERNAL_ERROR' } };
    }
    return defaultReply(request);
  });
  control = new MessageChannel();
  data = new MessageChannel();
  exposeWorkerApi(control.port1 as unknown as Endpoint);
  api = wrap<WorkerApi>(control.port2 as unknown as Endpoint);
  received = [];
  data.port2.addEventListener('message', (event) => received.push(event.data as FromWorkerMessage));
  data.port2.start();
});

afterEach(async () => {
  await api.shutdown(0);
  api[releaseProxy]();
  control.port1.close();
  control.port2.close();
  data.port2.close();
  await server.close();
});

/** Sends `init` with the data port transferred, as the facade does. */
function init(replay: ReturnType<typeof columnsOf> | null = null, overrides = {}) {
  const config = testConfig({ endpoint: server.url, compress: true, retryDelay: 60_000, ...overrides });
  return api.init(config, transfer(data.port1, [data.port1]) as unknown as MessagePort, replay);
}

/** Waits until status posts have acknowledged `count` events in all; resolves with their ranges. */
async function ackedCount(count: number): Promise<number[][]> {
  for (;;) {
    const acked = received.flatMap((m) => (m.t === 'status' && m.acked.length > 0 ? [m.acked] : []));
    if (acked.reduce((n, ranges) => n + rangeCount(ranges), 0) >= count) return acked;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('WorkerApi over MessageChannel (comlink)', () => {
  it('init answers the handshake and replays unacknowledged events first, under their own numbers', async () => {
    const [replayed, posted] = [uuidEvents(2), uuidEvents(1, 2)];
    expect(await init(columnsOf(replayed))).toEqual({ protocol: WORKER_PROTOCOL_VERSION, mode: 'worker', timezone: Intl.DateTimeFormat().resolvedOptions().timeZone });
    data.port2.postMessage(postOf(posted));
    expect(await api.flush(2)).toEqual({ ok: true, sent: 3 });
    expect(server.requests.flatMap(idsOf)).toEqual([...replayed, ...posted].map((e) => e.id));
    expect(toRanges((await ackedCount(3)).flatMap((r) => expandRanges(r)))).toEqual([0, 3]);
  });

  it('carries events over the data port, flushes them to the server and posts acks back', async () => {
    await init();
    const events = uuidEvents(45);
    data.port2.postMessage(postOf(events.slice(0, 25)));
    data.port2.postMessage(postOf(events.slice(25)));
    expect(await api.flush(44)).toEqual({ ok: true, sent: 45 });
    expect(server.requests.flatMap(idsOf).sort()).toEqual(events.map((e) => e.id));
    expect(server.requests.every((r) => r.headers.authorization === 'ApiKey test-key')).toBe(true);
    expect(server.requests.some((r) => r.gzipped)).toBe(true);
    // Numbers 0 … 44, each acknowledged once, as ranges.
    const acked = (await ackedCount(45)).flatMap((r) => expandRanges(r));
    expect(acked.sort((a, b) => a - b)).toEqual(events.map((_, i) => i));
    expect(await api.stats()).toMatchObject({ queueSize: 0, receivedSeq: 45, sent: 45, mode: 'worker' });
  });

  it('returns a failed flush as data and keeps the events queued', async () => {
    await init();
    failNext = 1;
    data.port2.postMessage(postOf(uuidEvents(3)));
    expect(await api.flush(2)).toMatchObject({ ok: false, code: 'HTTP_ERROR', status: 500, queued: 3 });
    expect(await api.flush(2)).toEqual({ ok: true, sent: 3 });
  });

  it('clear() discards and reports; stats() mirrors it', async () => {
    await init(null, { batchSize: 100 });
    data.port2.postMessage(postOf(uuidEvents(3)));
    while ((await api.stats()).receivedSeq < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await api.clear();
    expect(await api.stats()).toMatchObject({ queueSize: 0, discarded: 3 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(received).toContainEqual(expect.objectContaining({ t: 'discarded', reason: 'cleared', ranges: [0, 3] }));
  });

  it('uploads recorder output posted on the data port when recording stops', async () => {
    await init();
    const meta = { startUrl: 'https://shop.test/', userId: null, startedAt: Date.now() };
    data.port2.postMessage({ t: 'recording', sessionId: 'sess_9', meta, events: [{ type: 2, data: {}, timestamp: 1 }] });
    data.port2.postMessage({ t: 'recording-stop', sessionId: 'sess_9' });
    for (;;) {
      const chunk = server.requests.find((r) => r.url === '/api/v1/sessions/sess_9/recordings');
      if (chunk !== undefined) {
        expect(chunk.body).toMatchObject({ is_final: true, event_offset: 0, start_url: 'https://shop.test/', user_id: null });
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });

  it('refuses a malformed post with a log message, and goes on with the next posts', async () => {
    await init();
    const [bad, good] = [uuidEvents(2, 10), uuidEvents(1, 20)];
    data.port2.postMessage({ t: 'event-columns', columns: { ...columnsOf(bad), runs: [{ ...columnsOf(bad).runs[0], start: Number.NaN }] } });
    data.port2.postMessage({ t: 'no-such-message' });
    data.port2.postMessage(postOf(good));
    expect(await api.flush(20)).toMatchObject({ sent: 1 });
    expect(server.requests.flatMap(idsOf)).toEqual(good.map((e) => e.id));
    const logs = received.flatMap((m) => (m.t === 'log' ? [m.message] : []));
    expect(logs).toEqual([
      'the worker refused a malformed post ("event-columns"); its contents are lost',
      'the worker refused a malformed post ("no-such-message"); its contents are lost',
    ]);
  });

  it('reports the ids a post dropped unposted as overflow, by their numbers, and sends the rest', async () => {
    await init();
    const events = uuidEvents(3, 40);
    const all = columnsOf(events);
    const dropped = { idMs: all.idMs.slice(0, 2), idCounters: all.idCounters.slice(0, 2) };
    data.port2.postMessage({ t: 'event-columns', columns: columnsOf(events.slice(2)), dropped });
    expect(await api.flush(42)).toMatchObject({ sent: 1 });
    expect(server.requests.flatMap(idsOf)).toEqual([events[2]!.id]);
    const discards = received.filter((m) => m.t === 'discarded');
    expect(discards).toEqual([expect.objectContaining({ ids: [events[0]!.id, events[1]!.id], ranges: [40, 42], reason: 'overflow' })]);
    expect(await api.stats()).toMatchObject({ receivedSeq: 3, discarded: 2 });
  });

  it('refuses a post whose dropped ids are malformed, as a whole', async () => {
    await init();
    const events = uuidEvents(2, 50);
    const columns = columnsOf(events.slice(1));
    data.port2.postMessage({ t: 'event-columns', columns, dropped: { idMs: [events[0]!.timestamp], idCounters: [2 ** 42] } });
    data.port2.postMessage({ t: 'event-columns', columns, dropped: { idMs: [1, 2], idCounters: [1] } });
    await waitFor(() => received.filter((m) => m.t === 'log').length === 2);
    expect(received.filter((m) => m.t === 'discarded')).toEqual([]);
    expect(await api.stats()).toMatchObject({ queueSize: 0, receivedSeq: 0 });
  });

  it('answers the handshake when the replayed events are malformed, and says so', async () => {
    const replay = { ...columnsOf(uuidEvents(1, 30)), idTail: 'not-hex!' };
    expect(await init(replay)).toEqual({ protocol: WORKER_PROTOCOL_VERSION, mode: 'worker', timezone: Intl.DateTimeFormat().resolvedOptions().timeZone });
    await waitFor(() => received.some((m) => m.t === 'log'));
    expect(received.find((m) => m.t === 'log')).toMatchObject({ level: 'error', message: 'the worker refused the replayed events: malformed columns' });
    expect(await api.stats()).toMatchObject({ queueSize: 0 });
  });

  it('flush before init answers WORKER_UNAVAILABLE as data', async () => {
    expect(await api.flush(0)).toMatchObject({ ok: false, code: 'WORKER_UNAVAILABLE' });
  });
});

/** The numbers in flat `[from, to, …]` ranges. */
function expandRanges(ranges: readonly number[]): number[] {
  const out: number[] = [];
  for (let k = 0; k < ranges.length; k += 2) for (let n = ranges[k]!; n < ranges[k + 1]!; n++) out.push(n);
  return out;
}

/** Resolves once `condition` holds (status and log posts arrive asynchronously). */
async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}
