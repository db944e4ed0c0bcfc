/**
 * The deferred request (`fetchLater`) through the facade, with a fake Worker that runs the real
 * worker API over a MessageChannel: what it arms, what the pagehide beacon then leaves to it, and
 * where there is no `fetchLater`, the body held for the pagehide beacon.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Analytics } from '../analytics.js';
import { createAnalytics } from '../create-analytics.js';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import { type FakeWorker, beaconEvents, beaconSenderReady, endOfTask, fakeWorkers } from '../../test-support/client/facade-fakes.js';
import { createDeferredRequest } from './deferred-request.js';

/** How long a waitFor below may wait for the client's asynchronous hand-overs: generous, as the full test run keeps both cores busy (a bound, not a speed requirement). */
const HAND_OVER = { timeout: 10_000 };

interface Armed {
  url: string;
  events: string[];
  signal: AbortSignal;
  contentType: string | null;
}

const clients: Analytics[] = [];
const scope = globalThis as { fetchLater?: unknown };

/** Installs a fake `fetchLater` that records what is armed; `refuse` makes it throw as over quota. */
function fakeFetchLater(options: { refuse?: boolean } = {}) {
  const armed: Armed[] = [];
  scope.fetchLater = vi.fn((url: string, init: RequestInit) => {
    if (options.refuse === true) throw new DOMException('over the deferred fetch quota', 'QuotaExceededError');
    const request: Armed = { url, events: [], signal: init.signal!, contentType: new Headers(init.headers).get('content-type') };
    armed.push(request);
    void new Response(init.body).text().then((text) => (request.events = (JSON.parse(text) as Array<{ event_type: string }>).map((e) => e.event_type)));
    return { activated: false };
  });
  /** The request armed now (the last one, not aborted). */
  const live = () => armed.filter((r) => !r.signal.aborted);
  return { armed, live };
}

/** The event types a beacon carries: gzip (`encoding=gzip`), or JSON as text or bytes (a held body of a core without gzip). */
function eventsOf(url: string, body: string | Uint8Array): string[] {
  const plain = typeof body !== 'string' && new URL(url).searchParams.get('encoding') !== 'gzip' ? new TextDecoder().decode(body) : body;
  return beaconEvents<{ event_type: string }>(plain).map((e) => e.event_type);
}

function setup() {
  const server = createFakeFetch();
  server.state.hold = true; // the worker's requests never come back: nothing is acknowledged
  const workers = fakeWorkers(['ok'], [server]);
  // The config each worker's init() got (comlink's message: the first argument, as it is).
  const configs: Array<{ deferredUnload?: boolean }> = [];
  const createWorker: typeof workers.createWorker = (url, options) => {
    const worker = workers.createWorker(url, options) as FakeWorker;
    worker.channel.port2.addEventListener('message', (event: MessageEvent<{ path?: string[]; argumentList?: Array<{ value: unknown }> }>) => {
      if (event.data.path?.[0] === 'init') configs.push(event.data.argumentList![0]!.value as { deferredUnload?: boolean });
    });
    return worker;
  };
  const sendBeacon = vi.fn((_url: string, _body: string | Uint8Array) => true);
  const analytics = createAnalytics({
    apiKey: 'key_1',
    projectId: 'proj_1',
    endpoint: 'https://analytics.test',
    enableAutoPageTracking: false,
    workerUrl: '/w.js',
    transport: { createWorker, sendBeacon, coreDeps: { fetch: server.fetch, compress: undefined } },
  });
  clients.push(analytics);
  const beaconed = () => sendBeacon.mock.calls.flatMap(([url, body]) => eventsOf(url, body));
  return { analytics, server, configs, workers, sendBeacon, beaconed };
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  delete scope.fetchLater;
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('the deferred request (fetchLater)', () => {
  it('is armed with the unacknowledged events; pagehide beacons only what it does not carry', async () => {
    const later = fakeFetchLater();
    const { analytics, beaconed, configs } = setup();
    await beaconSenderReady();
    expect(configs).toEqual([expect.objectContaining({ deferredUnload: true })]);
    for (const name of ['a', 'b', 'c']) analytics.track(name);
    await vi.waitFor(() => expect(later.live()[0]?.events).toEqual(['a', 'b', 'c']), HAND_OVER);
    const url = new URL(later.live()[0]!.url);
    expect(url.origin + url.pathname).toBe('https://analytics.test/api/v1/events/batch');
    expect(url.searchParams.get('api_key')).toBe('key_1');
    // The beacon form: the body's bytes as plain text (no Blob), so no CORS preflight.
    expect(later.live()[0]!.contentType).toBe('text/plain');
    analytics.track('d'); // buffered: not posted to the core yet
    window.dispatchEvent(new Event('pagehide'));
    expect(beaconed()).toEqual(['d']);
  });

  it('is re-armed when the set changes: the previous request is aborted, one stays armed', async () => {
    const later = fakeFetchLater();
    const { analytics, beaconed } = setup();
    await beaconSenderReady();
    analytics.track('a');
    await vi.waitFor(() => expect(later.live()[0]?.events).toEqual(['a']), HAND_OVER);
    analytics.track('b');
    await vi.waitFor(() => expect(later.live()[0]?.events).toEqual(['a', 'b']), HAND_OVER);
    expect(later.armed).toHaveLength(2);
    expect(later.armed[0]!.signal.aborted).toBe(true);
    expect(later.live()).toHaveLength(1);
    window.dispatchEvent(new Event('pagehide'));
    expect(beaconed()).toEqual([]);
  });

  it('events posted after the armed body was built go by beacon', async () => {
    const later = fakeFetchLater();
    const { analytics, beaconed } = setup();
    await beaconSenderReady();
    analytics.track('a');
    await vi.waitFor(() => expect(later.live()[0]?.events).toEqual(['a']), HAND_OVER);
    analytics.track('b');
    await endOfTask(); // posted; the core's rebuild waits for its interval
    window.dispatchEvent(new Event('pagehide'));
    expect(beaconed()).toEqual(['b']);
  });

  it('is aborted by clearQueue()', async () => {
    const later = fakeFetchLater();
    const { analytics } = setup();
    await beaconSenderReady();
    analytics.track('a');
    await vi.waitFor(() => expect(later.live()).toHaveLength(1), HAND_OVER);
    await analytics.clearQueue();
    expect(later.live()).toEqual([]);
  });

  it('is aborted by shutdown(): a client shut down sends nothing later', async () => {
    const later = fakeFetchLater();
    const { analytics } = setup();
    await beaconSenderReady();
    analytics.track('a');
    await vi.waitFor(() => expect(later.live()).toHaveLength(1), HAND_OVER);
    await analytics.shutdown(0);
    expect(later.live()).toEqual([]);
  });

  it('a restarted worker re-arms it; once the core runs in-process, it is aborted', async () => {
    const later = fakeFetchLater();
    const { analytics, workers, beaconed } = setup();
    await beaconSenderReady();
    analytics.track('a');
    await vi.waitFor(() => expect(later.live()).toHaveLength(1), HAND_OVER);
    workers.created[0]!.fail();
    await vi.waitFor(() => expect(later.armed).toHaveLength(2), HAND_OVER); // the replay, armed by the next worker
    expect(later.live()).toHaveLength(1);
    expect(later.live()[0]).toBe(later.armed[1]);
    workers.created[1]!.fail();
    await vi.waitFor(async () => expect((await analytics.getDeliveryStats()).mode).toBe('in-process'), HAND_OVER);
    expect(later.live()).toEqual([]);
    window.dispatchEvent(new Event('pagehide'));
    expect(beaconed()).toEqual(['a']);
  });

  it('refused by fetchLater (quota): pagehide beacons everything, as without it', async () => {
    fakeFetchLater({ refuse: true });
    const { analytics, beaconed } = setup();
    await beaconSenderReady();
    analytics.track('a');
    analytics.track('b');
    await vi.waitFor(() => expect(scope.fetchLater).toHaveBeenCalled(), HAND_OVER);
    window.dispatchEvent(new Event('pagehide'));
    expect(beaconed()).toEqual(['a', 'b']);
  });

  it('without fetchLater the body is held, and pagehide sends it as it is, then beacons only what came after it', async () => {
    const { analytics, beaconed, configs, sendBeacon, server } = setup();
    await beaconSenderReady();
    expect(configs).toEqual([expect.objectContaining({ deferredUnload: true })]);
    const early = Array.from({ length: 25 }, (_, i) => `e${i}`);
    for (const name of early) analytics.track(name);
    // While nothing is held the core builds the body before it sends: a request means it was posted.
    await vi.waitFor(() => expect(server.requests.length).toBeGreaterThan(0), HAND_OVER);
    await endOfTask();
    analytics.track('late');
    await endOfTask();
    window.dispatchEvent(new Event('pagehide'));
    expect(sendBeacon).toHaveBeenCalledTimes(2);
    const [heldUrl, heldBody] = sendBeacon.mock.calls[0]!;
    expect(heldBody).toBeInstanceOf(Uint8Array);
    expect(eventsOf(heldUrl, heldBody)).toEqual(early);
    expect(beaconed()).toEqual([...early, 'late']);
    // At the end of later tasks of the unload, neither is sent again.
    analytics.track('later');
    await endOfTask();
    expect(beaconed()).toEqual([...early, 'late', 'later']);
  });

  it('a held body whose events the server mostly acknowledged stays: pagehide beacons the few that wait', async () => {
    const { analytics, beaconed, server } = setup();
    await beaconSenderReady();
    const early = Array.from({ length: 45 }, (_, i) => `e${i}`);
    for (const name of early) analytics.track(name);
    // The body of all 45 is held, then two batches of 20 go and are acknowledged; 5 wait.
    await vi.waitFor(() => expect(server.requests).toHaveLength(2), HAND_OVER);
    server.state.hold = false;
    server.release();
    await vi.waitFor(() => expect(analytics.getQueueSize()).toBe(5), HAND_OVER);
    await endOfTask();
    window.dispatchEvent(new Event('pagehide'));
    expect(beaconed()).toEqual(early.slice(40));
  });

  it('a held body the browser refuses: pagehide beacons its events itself', async () => {
    const { analytics, beaconed, sendBeacon, server } = setup();
    await beaconSenderReady();
    const early = Array.from({ length: 25 }, (_, i) => `e${i}`);
    for (const name of early) analytics.track(name);
    await vi.waitFor(() => expect(server.requests.length).toBeGreaterThan(0), HAND_OVER);
    await endOfTask();
    sendBeacon.mockImplementationOnce(() => false);
    window.dispatchEvent(new Event('pagehide'));
    expect(sendBeacon.mock.calls.length).toBeGreaterThan(1);
    const after = sendBeacon.mock.calls.slice(1).flatMap(([url, body]) => eventsOf(url, body));
    expect(after).toEqual(early);
    expect(beaconed()).toEqual([...early, ...early]);
  });
});

describe('createDeferredRequest(fetchLater, debug)', () => {
  const arm = { t: 'deferred-arm' as const, url: 'https://a.test/x', body: new ArrayBuffer(3), covered: [0, 3], complete: true };

  it('aborts what is armed before it arms the next, and on a disarm', () => {
    const signals: AbortSignal[] = [];
    const request = createDeferredRequest((_url, init) => signals.push(init.signal!), () => {});
    expect(request.receive(arm)).toBe(arm);
    expect(request.receive(arm)).toBe(arm);
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
    expect(request.receive({ t: 'deferred-disarm' })).toEqual({ t: 'deferred-disarm' });
    expect(signals[1]!.aborted).toBe(true);
  });

  it('leaves what is armed as it is from pagehide to pageshow: the beacon left those events to it', () => {
    const signals: AbortSignal[] = [];
    const page = new EventTarget();
    const request = createDeferredRequest((_url, init) => signals.push(init.signal!), () => {}, page as unknown as Window);
    request.receive(arm);
    page.dispatchEvent(new Event('pagehide'));
    expect(request.receive({ ...arm, covered: [0, 5] })).toBeUndefined();
    expect(request.receive({ t: 'deferred-disarm' })).toBeUndefined();
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
    page.dispatchEvent(new Event('pageshow'));
    expect(request.receive({ ...arm, covered: [0, 5] })).toEqual({ ...arm, covered: [0, 5] });
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
  });

  it('without fetchLater, holds the body: marks it held, and leaves it as it is from pagehide to pageshow', () => {
    const page = new EventTarget();
    const request = createDeferredRequest(undefined, () => {}, page as unknown as Window);
    expect(request.receive(arm)).toEqual({ ...arm, held: true });
    page.dispatchEvent(new Event('pagehide'));
    expect(request.receive({ ...arm, covered: [0, 5] })).toBeUndefined();
    page.dispatchEvent(new Event('pageshow'));
    expect(request.receive({ t: 'deferred-disarm' })).toEqual({ t: 'deferred-disarm' });
  });

  it('answers a refused arm with a disarm, and says so in the debug log', () => {
    const debug = vi.fn();
    const request = createDeferredRequest(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    }, debug);
    expect(request.receive(arm)).toEqual({ t: 'deferred-disarm' });
    expect(debug).toHaveBeenCalledWith(expect.stringContaining('fetchLater refused'), expect.any(DOMException));
  });
});
