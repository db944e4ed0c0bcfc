/**
 * Worker start, fallback order, restart with replay and the log of unacknowledged events, with a fake Worker that runs
 * the real worker API over a MessageChannel (the boundary exercised in one realm, as comlink's own
 * tests do).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeFetch } from '../../test-support/worker/delivery-fakes.js';
import type { Analytics } from '../analytics.js';
import { createAnalytics } from '../create-analytics.js';
import { type FakeWorkerBehaviour, beaconEvents, beaconSenderReady, endOfTask, fakeWorkers, inProcessClient, receivedEvents } from '../../test-support/client/facade-fakes.js';

const clients: Analytics[] = [];

function setup(behaviours: FakeWorkerBehaviour[], options: { workerUrl?: string; debug?: boolean; flushTimeoutMs?: number; worker?: boolean } = {}) {
  const fetches = [createFakeFetch(), createFakeFetch(), createFakeFetch()];
  const inProcess = createFakeFetch();
  const workers = fakeWorkers(behaviours, fetches);
  const analytics = createAnalytics({
    apiKey: 'key_1',
    projectId: 'proj_1',
    endpoint: 'https://analytics.test',
    enableAutoPageTracking: false,
    workerUrl: options.workerUrl,
    debug: options.debug,
    worker: options.worker,
    retryDelay: 60_000,
    transport: {
      createWorker: workers.createWorker,
      coreDeps: { fetch: inProcess.fetch, compress: undefined },
      flushTimeoutMs: options.flushTimeoutMs,
    },
  });
  clients.push(analytics);
  return { analytics, fetches, inProcess, workers };
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('worker start', () => {
  it('uses the workerUrl option first and posts one set of columns per task, numbered by the ids\' counters', async () => {
    const { analytics, fetches, workers } = setup(['ok'], { workerUrl: '/assets/analytics-worker.js' });
    for (let i = 0; i < 5; i++) analytics.track('burst', { i });
    await analytics.flush();
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', strategy: 'worker-url', restarts: 0 });
    expect(workers.created).toHaveLength(1);
    expect(workers.created[0]!.url).toBe('/assets/analytics-worker.js');
    const posts = workers.created[0]!.received.filter((m) => m.t === 'event-columns');
    expect(posts).toHaveLength(1);
    const first = posts[0]!.t === 'event-columns' ? posts[0]!.columns : undefined;
    expect(first?.properties.map((p) => p?.i)).toEqual([0, 1, 2, 3, 4]);
    // One number per event, the id's counter: ascending, one apart within a task.
    expect(first?.idCounters.map((n) => n - first.idCounters[0]!)).toEqual([0, 1, 2, 3, 4]);
    expect(receivedEvents(fetches[0]!)).toHaveLength(5);
    analytics.track('next');
    await analytics.flush();
    const next = workers.created[0]!.received.filter((m) => m.t === 'event-columns').at(-1);
    expect(next?.t === 'event-columns' && next.columns.idCounters[0]! > first!.idCounters[4]!).toBe(true);
  });

  it('tries the worker file beside the library next, as a module worker', async () => {
    const { analytics, workers } = setup(['throw', 'ok'], { workerUrl: 'https://cdn.example/w.js' });
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', strategy: 'shipped-worker' });
    expect(workers.created[1]!.url).toMatch(/\/worker\.js$/);
  });

  it('moves on after an error event', async () => {
    const { analytics, workers } = setup(['error-event', 'ok'], { workerUrl: '/w.js' });
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', strategy: 'shipped-worker' });
    expect(workers.created[0]!.terminated).toBe(true);
  });

  it('moves on when the handshake does not come within the timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { analytics, workers } = setup(['silent', 'ok'], { workerUrl: '/w.js' });
    const stats = analytics.getDeliveryStats();
    // The core starts in the task after createAnalytics() (delivery-client.ts): then the handshake's timer runs.
    await vi.waitFor(() => expect(workers.created).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(3000);
    expect(await stats).toMatchObject({ mode: 'worker', strategy: 'shipped-worker' });
    expect(workers.created[0]!.terminated).toBe(true);
  });

  it('moves on when the worker speaks another protocol version (a stale worker file)', async () => {
    const { analytics } = setup(['wrong-protocol', 'ok'], { workerUrl: '/w.js' });
    expect(await analytics.getDeliveryStats()).toMatchObject({ strategy: 'shipped-worker' });
  });

  it('with worker: false, goes straight to the in-process core and creates no worker', async () => {
    const { analytics, workers, inProcess } = setup(['ok'], { workerUrl: '/w.js', worker: false });
    analytics.track('no_worker');
    await analytics.flush();
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'in-process', strategy: 'in-process' });
    expect(workers.created).toEqual([]);
    expect(receivedEvents(inProcess).map((e) => e.event_type)).toEqual(['no_worker']);
  });

  it('runs in-process when no worker starts, with one debug message naming worker-src', async () => {
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const { analytics, inProcess } = setup(['throw', 'throw'], { workerUrl: '/w.js', debug: true });
    analytics.track('fallback');
    await analytics.flush();
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'in-process', strategy: 'in-process' });
    expect(receivedEvents(inProcess).map((e) => e.event_type)).toEqual(['fallback']);
    const csp = debug.mock.calls.filter(([message]) => String(message).includes('worker-src'));
    expect(csp).toHaveLength(1);
  });

  it('loses nothing captured before the handshake', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { analytics, fetches, workers } = setup(['silent', 'ok'], { workerUrl: '/w.js' });
    analytics.track('early_1');
    analytics.track('early_2');
    expect(analytics.getQueueSize()).toBe(2);
    expect(workers.created).toHaveLength(0);
    await vi.waitFor(() => expect(workers.created).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(3000);
    analytics.track('late');
    await analytics.flush();
    expect(receivedEvents(fetches[1]!).map((e) => e.event_type)).toEqual(['early_1', 'early_2', 'late']);
  });
});

describe('a worker that dies', () => {
  it('is restarted once with its unacknowledged events replayed; after that, the core runs in-process', async () => {
    const { analytics, fetches, inProcess, workers } = setup(['ok', 'ok'], { workerUrl: '/w.js' });
    fetches[0]!.state.hold = true;
    analytics.track('a');
    analytics.track('b');
    const first = analytics.flush();
    await vi.waitFor(() => expect(fetches[0]!.requests).toHaveLength(1));
    workers.created[0]!.fail('uncaught');
    await first; // retried on the restarted worker
    expect(receivedEvents(fetches[1]!).map((e) => e.event_type)).toEqual(['a', 'b']);
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', strategy: 'worker-url', restarts: 1 });
    expect(workers.created[1]!.url).toBe('/w.js');

    fetches[1]!.state.hold = true;
    analytics.track('c');
    const second = analytics.flush();
    await vi.waitFor(() => expect(fetches[1]!.requests).toHaveLength(2));
    workers.created[1]!.fail('again');
    await second;
    expect(receivedEvents(inProcess).map((e) => e.event_type)).toEqual(['c']);
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'in-process', restarts: 2 });
    expect(workers.created).toHaveLength(2);
  });

  it('replays exactly the unacknowledged events under their own numbers, and posts the next events as before', async () => {
    const { analytics, fetches, workers } = setup(['ok', 'ok'], { workerUrl: '/w.js' });
    analytics.track('acked');
    await analytics.flush();
    await vi.waitFor(async () => expect((await analytics.getDeliveryStats()).unacknowledged).toBe(0));
    fetches[0]!.state.hold = true;
    analytics.track('x');
    analytics.track('y');
    const flushed = analytics.flush();
    await vi.waitFor(() => expect(fetches[0]!.requests).toHaveLength(2));
    workers.created[0]!.fail('uncaught');
    await flushed;
    expect(receivedEvents(fetches[1]!).map((e) => e.event_type)).toEqual(['x', 'y']);
    analytics.track('z');
    expect(analytics.getQueueSize()).toBe(1);
    await analytics.flush();
    // The replay went with init; the next post carries only the new event.
    const posts = workers.created[1]!.received.filter((m) => m.t === 'event-columns');
    expect(posts.map((m) => m.t === 'event-columns' && m.columns.names)).toEqual([['z']]);
    await vi.waitFor(() => expect(analytics.getQueueSize()).toBe(0));
    expect((await analytics.getDeliveryStats()).unacknowledged).toBe(0);
  });

  it('flushes on the next worker though none of its events were left to replay', async () => {
    const { analytics, fetches, workers } = setup(['ok', 'ok'], { workerUrl: '/w.js' });
    analytics.track('acked');
    await analytics.flush();
    await vi.waitFor(async () => expect((await analytics.getDeliveryStats()).unacknowledged).toBe(0));
    workers.created[0]!.fail('uncaught');
    // The new core was given nothing: flush() waits for no event it never gets.
    await analytics.flush();
    analytics.track('next');
    await analytics.flush();
    expect(receivedEvents(fetches[1]!).map((e) => e.event_type)).toEqual(['next']);
    expect(await analytics.getDeliveryStats()).toMatchObject({ restarts: 1, unacknowledged: 0 });
  });

  it('counts as dead when a control call times out', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { analytics, workers } = setup(['ok', 'ok'], { workerUrl: '/w.js' });
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', restarts: 0 });
    workers.created[0]!.hang();
    const stats = analytics.getDeliveryStats().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(3000);
    expect(await stats).toMatchObject({ name: 'AnalyticsError', code: 'WORKER_UNAVAILABLE' });
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', restarts: 1 });
    expect(workers.created[0]!.terminated).toBe(true);
  });

  it('a slow flush on a live worker rejects with TIMEOUT and keeps the worker', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { analytics, fetches } = setup(['ok'], { workerUrl: '/w.js', flushTimeoutMs: 10_000 });
    await analytics.getDeliveryStats(); // started, before time moves
    fetches[0]!.state.hold = true;
    analytics.track('slow');
    const flushed = analytics.flush().catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await flushed).toMatchObject({ code: 'TIMEOUT' });
    expect(analytics.getQueueSize()).toBe(1);
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'worker', restarts: 0 });
    fetches[0]!.release();
  });
});

describe('an event the worker cannot be given', () => {
  it('goes to onDiscard as rejected; the task\'s other events are posted in parts and sent', async () => {
    const discarded: Array<{ ids: string[]; reason: string; detail: string }> = [];
    const fetches = [createFakeFetch()];
    const workers = fakeWorkers(['ok'], fetches);
    const analytics = createAnalytics({
      apiKey: 'key_1',
      projectId: 'proj_1',
      endpoint: 'https://analytics.test',
      enableAutoPageTracking: false,
      onDiscard: (info) => discarded.push(info),
      // A function in the context: structured clone refuses the post that carries it.
      beforeSend: (event) => (event.event === 'bad' ? { ...event, context: { ...event.context, page: (() => {}) as never } } : event),
      transport: { createWorker: workers.createWorker },
    });
    clients.push(analytics);
    await analytics.getDeliveryStats(); // the core runs
    for (const name of ['a', 'b', 'bad', 'c']) analytics.track(name);
    await analytics.flush();
    expect(receivedEvents(fetches[0]!).map((e) => e.event_type)).toEqual(['a', 'b', 'c']);
    expect(discarded).toEqual([expect.objectContaining({ reason: 'rejected', ids: [expect.any(String)], detail: 'the event could not be posted to the delivery core' })]);
    expect(analytics.getQueueSize()).toBe(0);
  });
});

describe('getQueueSize() with a worker', () => {
  it('counts buffered and in-flight events, then 0 after the acks', async () => {
    const { analytics, fetches } = setup(['ok'], { workerUrl: '/w.js' });
    await analytics.getDeliveryStats();
    fetches[0]!.state.hold = true;
    analytics.track('1');
    analytics.track('2');
    expect(analytics.getQueueSize()).toBe(2);
    await endOfTask();
    expect(analytics.getQueueSize()).toBe(2);
    const flushed = analytics.flush();
    await vi.waitFor(() => expect(fetches[0]!.requests).toHaveLength(1));
    expect(analytics.getQueueSize()).toBe(2);
    fetches[0]!.release();
    await flushed;
    await vi.waitFor(() => expect(analytics.getQueueSize()).toBe(0));
    expect((await analytics.getDeliveryStats()).unacknowledged).toBe(0);
  });
});

describe('when no strategy starts at all', () => {
  it('keeps events in memory, rejects flush() with WORKER_UNAVAILABLE, and sends them by beacon on pagehide', async () => {
    const sendBeacon = vi.fn((_url: string, _body: string | Uint8Array) => true);
    const onDiscard = vi.fn();
    const analytics = createAnalytics({
      apiKey: 'k',
      projectId: 'p',
      enableAutoPageTracking: false,
      maxQueueSize: 3,
      onDiscard,
      transport: { strategies: ['inline-worker'], sendBeacon },
    });
    clients.push(analytics);
    for (let i = 0; i < 5; i++) analytics.track(`e${i}`);
    await expect(analytics.flush()).rejects.toMatchObject({ code: 'WORKER_UNAVAILABLE' });
    expect(await analytics.getDeliveryStats()).toMatchObject({ mode: 'off', strategy: null });
    expect(analytics.getQueueSize()).toBe(3);
    expect(onDiscard).toHaveBeenCalledWith(expect.objectContaining({ reason: 'overflow' }));
    await beaconSenderReady();
    window.dispatchEvent(new Event('pagehide'));
    const body = beaconEvents<{ event_type: string }>(sendBeacon.mock.calls[0]![1]);
    expect(body.map((e) => e.event_type)).toEqual(['e2', 'e3', 'e4']);
  });
});

describe('two clients on one page', () => {
  it('do not share state', async () => {
    const a = setup(['ok'], { workerUrl: '/a.js' });
    const b = createAnalytics({ apiKey: 'k2', projectId: 'other', enableAutoPageTracking: false, transport: { strategies: ['in-process'] } });
    clients.push(b);
    expect(a.analytics.getAnonymousId()).not.toBe(b.getAnonymousId());
    a.analytics.track('only_a');
    expect(a.analytics.getQueueSize()).toBe(1);
    expect(b.getQueueSize()).toBe(0);
    await a.analytics.flush();
    expect(receivedEvents(a.fetches[0]!).map((e) => e.event_type)).toEqual(['only_a']);
    expect(await b.getDeliveryStats()).toMatchObject({ mode: 'in-process' });
  });
});

describe('a burst above maxQueueSize with a running core', () => {
  it('posts only the newest maxQueueSize events and the numbers of the rest, which the worker reports through onDiscard', async () => {
    const discarded: string[] = [];
    const fetches = [createFakeFetch()];
    const workers = fakeWorkers(['ok'], fetches);
    const client = createAnalytics({
      apiKey: 'key_1',
      projectId: 'proj_1',
      endpoint: 'https://analytics.test',
      enableAutoPageTracking: false,
      maxQueueSize: 10,
      onDiscard: (info) => discarded.push(...info.ids),
      transport: { createWorker: workers.createWorker },
    });
    clients.push(client);
    expect(await client.getDeliveryStats()).toMatchObject({ mode: 'worker' }); // the core runs
    for (let i = 0; i < 25; i++) client.track('burst', { i });
    await endOfTask();
    const posts = workers.created[0]!.received.filter((m) => m.t === 'event-columns');
    // The dropped part first, as numbers only (no event objects copied), then the newest 10.
    expect(posts.map((m) => [m.columns.timestamps.length, m.dropped?.idMs.length])).toEqual([[0, 15], [10, undefined]]);
    expect(posts[1]!.columns.properties.map((p) => p?.i)).toEqual(Array.from({ length: 10 }, (_, k) => 15 + k));
    await client.flush();
    const sent = receivedEvents(fetches[0]!);
    expect(sent.map((e) => (e.properties as { i: number }).i)).toEqual(Array.from({ length: 10 }, (_, k) => 15 + k));
    // The oldest 15, reported once each, in order, all older than what was sent.
    expect(discarded).toHaveLength(15);
    expect([...discarded].sort()).toEqual(discarded);
    expect(discarded.every((id) => id < String(sent[0]!.event_id))).toBe(true);
    expect(new Set(discarded.map((id) => id.slice(-8)))).toEqual(new Set([String(sent[0]!.event_id).slice(-8)]));
    expect(client.getQueueSize()).toBe(0);
    expect((await client.getDeliveryStats()).unacknowledged).toBe(0);
  });

  it('posts the task once within the bound; the core drops the oldest, reported through onDiscard, and sends the newest', async () => {
    const discarded: string[] = [];
    const { analytics, server } = inProcessClient({ onDiscard: (info) => discarded.push(...info.ids) });
    clients.push(analytics);
    await analytics.getDeliveryStats(); // the core runs
    for (let i = 0; i < 3_000; i++) analytics.track('burst', { i });
    // Above maxQueueSize (1000) nothing is sliced per call; what waits is reported within the bound.
    expect(analytics.getQueueSize()).toBe(1_000);
    await analytics.flush();
    const sent = receivedEvents(server).map((e) => (e.properties as { i: number }).i);
    expect(sent).toEqual(Array.from({ length: 1_000 }, (_, k) => 2_000 + k));
    expect(discarded).toHaveLength(2_000);
    expect(new Set(discarded).size).toBe(2_000);
  });
});
