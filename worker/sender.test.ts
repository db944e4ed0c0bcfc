import { afterEach, describe, expect, it, vi } from 'vitest';
import { toBackendEvent } from '../protocol/event-model/event-mapping.js';
import { type SenderDeps, platformGzip, sendBatch, sendRecordingChunk } from './sender.js';
import { type Reply, type TestServer, makeEvents, startTestServer, testConfig } from '../test-support/worker/delivery-fakes.js';

const now = Date.UTC(2026, 10, 22, 10, 0, 0);
/** What a value looks like after the JSON round trip (undefined members gone). */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function senderDeps(overrides: Partial<SenderDeps> = {}): SenderDeps {
  return {
    fetch: (url, init) => fetch(url, init),
    now: () => now,
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    compress: undefined,
    timeoutMs: 10_000,
    ...overrides,
  };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  vi.useRealTimers();
});

async function serve(reply: Reply) {
  server = await startTestServer(() => reply);
  return { server, config: testConfig({ endpoint: server.url }) };
}

describe('sendBatch(events, config, deps) against a node:http server', () => {
  it('posts a bare JSON array with the auth, project and X-Sent-At headers', async () => {
    const { server, config } = await serve({ status: 200, body: { success: true, processed: 2 } });
    const events = wire(makeEvents(2).map((e) => toBackendEvent(e)));
    const outcome = await sendBatch(events, config, senderDeps());
    expect(outcome).toEqual({ kind: 'ok', status: 200, rejected: [] });
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/api/v1/events/batch', body: events, gzipped: false });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'ApiKey test-key',
      'x-project-id': 'proj_1',
      'x-sent-at': '2026-11-22T10:00:00.000Z',
    });
    expect(request!.headers).not.toHaveProperty('content-encoding');
  });

  it('gzips a body with CompressionStream and the server gunzips the same events', async () => {
    const { server, config } = await serve({ status: 200, body: { success: true, processed: 50 } });
    const events = wire(makeEvents(50).map((e) => toBackendEvent(e)));
    const outcome = await sendBatch(events, config, senderDeps({ compress: platformGzip() }));
    expect(outcome.kind).toBe('ok');
    expect(server.requests[0]).toMatchObject({ gzipped: true, body: events });
    expect(server.requests[0]!.headers['content-encoding']).toBe('gzip');
  });

  it('sends a small body uncompressed even with compression on', async () => {
    const { server, config } = await serve({ status: 200, body: { success: true, processed: 1 } });
    await sendBatch([{ event_type: 'x' }], config, senderDeps({ compress: platformGzip() }));
    expect(server.requests[0]!.gzipped).toBe(false);
  });

  it('returns the events a 200 lists as rejected by index', async () => {
    const errors = [{ index: 1, error: 'properties.x: expected a string' }];
    const { config } = await serve({ status: 200, body: { success: true, processed: 1, errors } });
    expect(await sendBatch(makeEvents(2).map((e) => toBackendEvent(e)), config, senderDeps())).toEqual({ kind: 'ok', status: 200, rejected: errors });
  });

  it('classifies 429 as retryable with its Retry-After', async () => {
    const { config } = await serve({ status: 429, headers: { 'retry-after': '7' }, body: { error: 'slow down', code: 'RATE_LIMITED' } });
    expect(await sendBatch([], config, senderDeps())).toEqual({
      kind: 'http',
      status: 429,
      retryAfterMs: 7000,
      code: 'RATE_LIMITED',
      message: 'HTTP 429 RATE_LIMITED: slow down',
    });
  });

  it('classifies 5xx as retryable', async () => {
    const { config } = await serve({ status: 500, body: { error: 'Internal error', code: 'INTERNAL_ERROR' } });
    expect(await sendBatch([], config, senderDeps())).toMatchObject({ kind: 'http', status: 500, retryAfterMs: undefined });
  });

  it.each([400, 401, 413, 415])('classifies %i as rejected with its code', async (status) => {
    const { config } = await serve({ status, body: { error: 'no', code: 'SOME_CODE' } });
    expect(await sendBatch([], config, senderDeps())).toMatchObject({ kind: 'http', status, code: 'SOME_CODE' });
  });

  it('reports an error thrown by fetch that is no network failure as failed, not as the network', async () => {
    const deps = senderDeps();
    const broken: SenderDeps['fetch'] = () => Promise.reject(new RangeError('invalid header value'));
    expect(await sendBatch([], { endpoint: 'http://127.0.0.1:9', apiKey: 'k', projectId: 'p' }, { ...deps, fetch: broken })).toMatchObject({
      kind: 'failed',
      message: expect.stringContaining('invalid header value'),
    });
    const offline: SenderDeps['fetch'] = () => Promise.reject(new TypeError('Failed to fetch'));
    expect(await sendBatch([], { endpoint: 'http://127.0.0.1:9', apiKey: 'k', projectId: 'p' }, { ...deps, fetch: offline })).toMatchObject({ kind: 'network' });
  });

  it("asks for keepalive on small bodies only, leaving the browser's 64 KB keepalive budget to beacons, and never sends cookies", async () => {
    const seen: RequestInit[] = [];
    const capture: SenderDeps['fetch'] = async (_url, init) => {
      seen.push(init);
      return new Response('{"success":true,"processed":0}', { status: 200 });
    };
    const config = { endpoint: 'http://127.0.0.1:9', apiKey: 'k', projectId: 'p' };
    await sendBatch(makeEvents(2).map((e) => toBackendEvent(e)), config, senderDeps({ fetch: capture }));
    const big = makeEvents(2).map((e) => ({ ...toBackendEvent(e), properties: { text: 'x'.repeat(20_000) } }));
    await sendBatch(big, config, senderDeps({ fetch: capture }));
    expect(seen.map((init) => init.keepalive)).toEqual([true, false]);
    expect(seen.map((init) => init.credentials)).toEqual(['omit', 'omit']);
  });

  it('classifies a dropped connection as a network failure', async () => {
    const { config } = await serve('network-error');
    expect(await sendBatch([], config, senderDeps())).toMatchObject({ kind: 'network', timedOut: false });
  });

  it('gives up after timeoutMs and calls it a timed-out network failure', async () => {
    vi.useFakeTimers();
    const hanging: SenderDeps['fetch'] = (_url, init) =>
      new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    const pending = sendBatch([], testConfig(), senderDeps({ fetch: hanging, timeoutMs: 5_000 }));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await pending).toMatchObject({ kind: 'network', timedOut: true });
  });
});

describe('sendRecordingChunk(sessionId, body, config, deps)', () => {
  it('posts the chunk to the session recordings endpoint with the same headers', async () => {
    const { server, config } = await serve({ status: 200, body: { success: true, stored: 0 } });
    const body = JSON.stringify({ events: [], duration: 1, start_url: 'https://x.test/', user_id: null, is_final: true, event_offset: 0 });
    expect(await sendRecordingChunk('sess_1', body, config, senderDeps())).toMatchObject({ kind: 'ok' });
    expect(server.requests[0]).toMatchObject({ url: '/api/v1/sessions/sess_1/recordings', body: JSON.parse(body) });
    expect(server.requests[0]!.headers.authorization).toBe('ApiKey test-key');
  });
});
