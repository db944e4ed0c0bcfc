import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIMITS } from '../protocol/limits.js';
import type { BackendEvent } from '../protocol/wire-types.js';
import { type DeferredItem, type DeferredMessage, REBUILD_INTERVAL_MS, SENT_AT_REFRESH_MS, createDeferredBody } from './deferred-body.js';
import { createDeliveryCore } from './delivery-core.js';
import { createFakeFetch, postOf, testConfig, uuidEvents as makeEvents } from '../test-support/worker/delivery-fakes.js';
import type { FromWorkerMessage } from '../protocol/worker/worker-contract.js';
import type { AnalyticsEvent } from '../protocol/event-model/analytics-event.js';

const START = Date.UTC(2026, 10, 22, 10, 0, 0);

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  vi.useRealTimers();
});

/** gzip that settles in a microtask, so fake timers drive it (the platform's is CompressionStream). */
const gzip = async (data: Uint8Array): Promise<Uint8Array> => new Uint8Array(gzipSync(data));

/** The JSON array a `deferred-arm` carries. */
function bodyOf(message: Extract<DeferredMessage, { t: 'deferred-arm' }>): BackendEvent[] {
  const bytes = Buffer.from(message.body);
  const text = message.url.includes('encoding=gzip') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
  return JSON.parse(text) as BackendEvent[];
}

function wire(n: number, filler = ''): BackendEvent {
  return {
    event_id: `evt-${n}`,
    event_type: 'clicked',
    timestamp: new Date(START + n).toISOString(),
    session_id: 'sess-1',
    properties: { n, filler },
  } as BackendEvent;
}

/** A keeper over a list of items the test changes, with what it posted and how often it built. */
function setup(options: { compress?: typeof gzip | undefined; maxBytes?: number } = {}) {
  let items: DeferredItem[] = [];
  const posts: DeferredMessage[] = [];
  let builds = 0;
  const keeper = createDeferredBody({
    config: { endpoint: 'http://analytics.test', apiKey: 'key', projectId: 'proj_1' },
    now: () => Date.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
    compress: 'compress' in options ? options.compress : gzip,
    items: () => {
      builds++;
      return items;
    },
    post: (message) => posts.push(message),
    log: () => {},
    maxBytes: options.maxBytes,
  });
  return {
    keeper,
    posts,
    builds: () => builds,
    set(next: DeferredItem[]) {
      items = next;
      keeper.changed();
    },
  };
}

const numbered = (from: number, to: number, filler = ''): DeferredItem[] =>
  Array.from({ length: to - from }, (_, i) => ({ number: from + i, wire: wire(from + i, filler) }));

describe('createDeferredBody(options)', () => {
  it('posts a gzip body of the items in the beacon form, with their numbers as ranges', async () => {
    const { posts, set } = setup();
    set([...numbered(0, 3), { number: undefined, wire: wire(99) }, ...numbered(5, 7)]);
    await vi.advanceTimersByTimeAsync(0);
    expect(posts).toHaveLength(1);
    const arm = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    expect(arm).toMatchObject({ t: 'deferred-arm', covered: [0, 3, 5, 7], complete: true });
    const url = new URL(arm.url);
    expect(url.pathname).toBe('/api/v1/events/batch');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      api_key: 'key',
      project_id: 'proj_1',
      sent_at: new Date(START).toISOString(),
      encoding: 'gzip',
    });
    expect(bodyOf(arm).map((e) => e.event_id)).toEqual(['evt-0', 'evt-1', 'evt-2', 'evt-99', 'evt-5', 'evt-6']);
  });

  it('builds at once while nothing is armed (firstArmed settles when it is), on the interval once armed', async () => {
    const { keeper, posts, set } = setup();
    set(numbered(0, 2));
    const first = keeper.firstArmed();
    expect(first).toBeDefined();
    await first;
    expect(posts).toEqual([expect.objectContaining({ t: 'deferred-arm', covered: [0, 2] })]);
    expect(keeper.firstArmed()).toBeUndefined();
    set(numbered(0, 3));
    expect(keeper.firstArmed()).toBeUndefined();
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(posts.at(-1)).toMatchObject({ covered: [0, 3] });
  });

  it('builds at most once per interval while nothing can be armed (an oldest event that fits no body)', async () => {
    const { keeper, posts, set, builds } = setup({ maxBytes: 100 });
    const big = (from: number, to: number) => numbered(from, to, 'x'.repeat(2_000));
    set(big(0, 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(builds()).toBe(1);
    for (let n = 2; n <= 10; n++) {
      set(big(0, n));
      // Not at once: within the interval the change waits for it, and nothing is held meanwhile.
      expect(keeper.firstArmed()).toBeUndefined();
      await vi.advanceTimersByTimeAsync(50);
    }
    expect(builds()).toBe(1);
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(builds()).toBe(2);
    expect(posts).toEqual([]);
  });

  it('sends plain JSON without encoding=gzip where there is no gzip', async () => {
    const { posts, set } = setup({ compress: undefined });
    set(numbered(0, 2));
    await vi.advanceTimersByTimeAsync(0);
    const arm = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    expect(new URL(arm.url).searchParams.has('encoding')).toBe(false);
    expect(bodyOf(arm)).toHaveLength(2);
  });

  it('coalesces changes: at most one rebuild per interval, with the latest items', async () => {
    const { posts, set, builds } = setup();
    set(numbered(0, 1));
    set(numbered(0, 2));
    await vi.advanceTimersByTimeAsync(0);
    expect(builds()).toBe(1);
    expect(posts.at(-1)).toMatchObject({ covered: [0, 2] });
    for (let n = 3; n <= 40; n++) {
      set(numbered(0, n));
      await vi.advanceTimersByTimeAsync(10);
    }
    // 38 changes over 380 ms: one rebuild at the next interval at the latest, not 38.
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(builds()).toBeLessThanOrEqual(3);
    expect(posts.at(-1)).toMatchObject({ covered: [0, 40] });
  });

  it('never runs two rebuilds at once: a change during a slow gzip waits for it', async () => {
    let inProgress = 0;
    let most = 0;
    const slow = async (data: Uint8Array) => {
      most = Math.max(most, ++inProgress);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      inProgress--;
      return gzip(data);
    };
    const { posts, set, builds } = setup({ compress: slow });
    set(numbered(0, 1));
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 0; i < 5; i++) {
      set(numbered(0, 2 + i));
      await vi.advanceTimersByTimeAsync(300);
    }
    await vi.advanceTimersByTimeAsync(3_000);
    expect(most).toBe(1);
    // Built at 0 (until 1,000), at 1,000 with the changes made meanwhile, at 2,000 with the last.
    expect(builds()).toBe(3);
    expect(posts.at(-1)).toMatchObject({ covered: [0, 6] });
  });

  it('disarms once nothing is unacknowledged, and only if something was armed', async () => {
    const { posts, set } = setup();
    set([]);
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(posts).toEqual([]);
    set(numbered(0, 2));
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    set([]);
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(posts.map((m) => m.t)).toEqual(['deferred-arm', 'deferred-disarm']);
  });

  it('keeps the armed body while the set only shrinks, and rebuilds when it gains an event', async () => {
    const { posts, set, builds } = setup();
    set(numbered(0, 10));
    await vi.advanceTimersByTimeAsync(0);
    for (let acked = 1; acked < 10; acked++) {
      set(numbered(acked, 10)); // the server acknowledged the oldest
      await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS / 4);
    }
    // Every re-arm costs the page's main thread; what is armed still carries the one left.
    expect(posts).toHaveLength(1);
    expect(builds()).toBeGreaterThan(1);
    set([...numbered(9, 10), { number: 10, wire: wire(10) }]);
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(posts).toHaveLength(2);
    expect(posts.at(-1)).toMatchObject({ covered: [9, 11], complete: true });
  });

  it('rebuilds a body that could not carry everything when acknowledgements make room', async () => {
    const { posts, set } = setup({ compress: undefined, maxBytes: 2_000 });
    set(numbered(0, 100, 'x'.repeat(100)));
    await vi.advanceTimersByTimeAsync(0);
    const first = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    const carried = bodyOf(first).length;
    set(numbered(carried, 100, 'x'.repeat(100)));
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(posts).toHaveLength(2);
    expect(bodyOf(posts[1] as Extract<DeferredMessage, { t: 'deferred-arm' }>)[0]!.event_id).toBe(`evt-${carried}`);
  });

  it('covers the oldest that fit in maxBytes as sent, and says the body is not complete', async () => {
    const { posts, set } = setup({ compress: undefined, maxBytes: 2_000 });
    set(numbered(0, 100, 'x'.repeat(100)));
    await vi.advanceTimersByTimeAsync(0);
    const arm = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    expect(arm.body.byteLength).toBeLessThanOrEqual(2_000);
    expect(arm.complete).toBe(false);
    const events = bodyOf(arm);
    expect(events.length).toBeGreaterThan(5);
    expect(arm.covered).toEqual([0, events.length]);
    expect(events.map((e) => e.event_id)).toEqual(numbered(0, events.length).map((item) => item.wire.event_id));
  });

  it('keeps a gzip body within 60 KB and one server batch, with realistic events', async () => {
    const { posts, set } = setup();
    // Random text does not compress: 1,500 events of ~300 bytes cannot all fit.
    const noise = (n: number) => Array.from({ length: 40 }, (_, i) => ((n * 7919 + i * 104_729) % 36).toString(36)).join('');
    set(Array.from({ length: 1_500 }, (_, n) => ({ number: n, wire: wire(n, noise(n).repeat(6)) })));
    await vi.advanceTimersByTimeAsync(0);
    const arm = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    expect(arm.body.byteLength).toBeLessThanOrEqual(LIMITS.maxBeaconBytes);
    const events = bodyOf(arm);
    expect(events.length).toBeLessThanOrEqual(LIMITS.maxEventsPerBatch);
    expect(arm.complete).toBe(false);
    expect(arm.covered).toEqual([0, events.length]);
  });

  it('writes every character of the events exactly, past its first buffer (multi-byte text, 400 events)', async () => {
    const { posts, set } = setup({ compress: undefined, maxBytes: LIMITS.maxBatchBodyBytes });
    const items = numbered(0, 400, 'café 東京 🚀 \u2028 "quoted" \\ '.repeat(8));
    set(items);
    await vi.advanceTimersByTimeAsync(0);
    const arm = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    expect(arm.body.byteLength).toBeGreaterThan(64 * 1024);
    expect(arm.complete).toBe(true);
    expect(bodyOf(arm)).toEqual(items.map((item) => item.wire));
  });

  it('carries at most one server batch of bytes before compression: the oldest events whose JSON fits', async () => {
    const { posts, set } = setup();
    const items = numbered(0, 400, 'x'.repeat(5_000));
    set(items);
    await vi.advanceTimersByTimeAsync(0);
    const arm = posts[0] as Extract<DeferredMessage, { t: 'deferred-arm' }>;
    const events = bodyOf(arm);
    const raw = (n: number) => Buffer.byteLength(JSON.stringify(items.slice(0, n).map((item) => item.wire)));
    expect(raw(events.length)).toBeLessThanOrEqual(LIMITS.maxBatchBodyBytes);
    expect(raw(events.length + 1)).toBeGreaterThan(LIMITS.maxBatchBodyBytes);
    expect(arm.complete).toBe(false);
    expect(arm.covered).toEqual([0, events.length]);
  });

  it('disarms when not even the oldest event fits', async () => {
    const { posts, set } = setup({ compress: undefined, maxBytes: 100 });
    set(numbered(0, 2));
    await vi.advanceTimersByTimeAsync(0);
    expect(posts).toEqual([]);
    set(numbered(0, 1));
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(posts).toEqual([]);
  });

  it('drops a body being built when the queue is cleared meanwhile, and disarms', async () => {
    const slow = async (data: Uint8Array) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      return gzip(data);
    };
    const { keeper, posts, set } = setup({ compress: slow });
    set(numbered(0, 2));
    await vi.advanceTimersByTimeAsync(150);
    expect(posts.map((m) => m.t)).toEqual(['deferred-arm']);
    set(numbered(0, 3)); // a rebuild starts at 250 ms …
    await vi.advanceTimersByTimeAsync(150);
    set([]);
    keeper.cleared(); // … and the queue is cleared while it runs
    await vi.advanceTimersByTimeAsync(1_000);
    expect(posts.map((m) => m.t)).toEqual(['deferred-arm', 'deferred-disarm']);
  });

  it('rebuilds an armed body with a fresh sent_at every SENT_AT_REFRESH_MS, and stops when closed', async () => {
    const { keeper, posts, set } = setup();
    set(numbered(0, 2));
    await vi.advanceTimersByTimeAsync(0);
    // The rebuild is scheduled from inside a timer, which fake timers count as at least 1 ms.
    await vi.advanceTimersByTimeAsync(SENT_AT_REFRESH_MS + 1);
    expect(posts).toHaveLength(2);
    const sentAt = (m: DeferredMessage) => new URL((m as Extract<DeferredMessage, { t: 'deferred-arm' }>).url).searchParams.get('sent_at');
    expect(Date.parse(sentAt(posts[1]!)!) - START).toBeGreaterThanOrEqual(SENT_AT_REFRESH_MS);
    keeper.close();
    await vi.advanceTimersByTimeAsync(3 * SENT_AT_REFRESH_MS);
    expect(posts).toHaveLength(2);
  });
});

describe('createDeliveryCore with deferredUnload', () => {
  function core(deferredUnload: boolean) {
    const fake = createFakeFetch();
    const c = createDeliveryCore(testConfig({ deferredUnload, batchSize: 5 }), { fetch: fake.fetch, random: () => 0, compress: gzip });
    const messages: FromWorkerMessage[] = [];
    c.onMessage((message) => messages.push(message));
    const post = (events: AnalyticsEvent[]) => c.receive(postOf(events));
    const deferred = () => messages.filter((m): m is DeferredMessage => m.t === 'deferred-arm' || m.t === 'deferred-disarm');
    return { core: c, fake, post, deferred };
  }

  it('covers queued and in-flight events, and disarms once the server acknowledged them', async () => {
    const { fake, post, deferred } = core(true);
    fake.state.hold = true;
    post(makeEvents(7)); // 5 go out (held), 2 wait
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(fake.requests).toHaveLength(1);
    expect(deferred().at(-1)).toMatchObject({ t: 'deferred-arm', covered: [0, 7], complete: true });
    fake.state.hold = false;
    fake.release();
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    // The 5 acknowledged: the armed body still carries the 2 left, so it stays (no re-arm).
    expect(deferred()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000); // sent_at renewed with the 2 left; flushInterval sends them
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(deferred().map((m) => (m.t === 'deferred-arm' ? m.covered : m.t))).toEqual([[0, 7], [5, 7], 'deferred-disarm']);
  });

  it('sends nothing until the first body is armed, then sends; once armed, new events do not wait', async () => {
    const fake = createFakeFetch();
    // A gzip the test lets finish: the first body's build is in progress until then.
    const waiting: Array<() => void> = [];
    const heldGzip = async (data: Uint8Array): Promise<Uint8Array> => {
      await new Promise<void>((resolve) => waiting.push(resolve));
      return gzip(data);
    };
    const releaseAll = async () => {
      for (let round = 0; round < 5; round++) {
        waiting.splice(0).forEach((resolve) => resolve());
        await vi.advanceTimersByTimeAsync(0);
      }
    };
    const c = createDeliveryCore(testConfig({ deferredUnload: true, batchSize: 5, compress: true }), { fetch: fake.fetch, random: () => 0, compress: heldGzip });
    const messages: FromWorkerMessage[] = [];
    c.onMessage((message) => messages.push(message));
    const arms = () => messages.filter((m) => m.t === 'deferred-arm');
    c.receive(postOf(makeEvents(12)));
    await vi.advanceTimersByTimeAsync(0);
    // Held: the first body is being built (its gzip not done), so no batch is being made.
    expect(waiting).toHaveLength(1);
    expect(fake.requests).toHaveLength(0);
    expect(arms()).toHaveLength(0);
    await releaseAll();
    expect(arms()).toEqual([expect.objectContaining({ covered: [0, 12] })]);
    expect(fake.requests).toHaveLength(2); // two full batches of 5; 2 events wait for more
    // A body is armed: new events are sent without waiting for the next rebuild.
    c.receive(postOf(makeEvents(5, 12)));
    await releaseAll();
    expect(fake.requests).toHaveLength(3);
    expect(arms()).toHaveLength(1);
  });

  it('disarms on clearQueue()', async () => {
    const { core: c, fake, post, deferred } = core(true);
    fake.state.hold = true;
    post(makeEvents(3));
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    await c.clear();
    await vi.advanceTimersByTimeAsync(REBUILD_INTERVAL_MS);
    expect(deferred().map((m) => m.t)).toEqual(['deferred-arm', 'deferred-disarm']);
  });

  it('builds nothing when the facade cannot use it', async () => {
    const { post, deferred } = core(false);
    post(makeEvents(3));
    await vi.advanceTimersByTimeAsync(SENT_AT_REFRESH_MS);
    expect(deferred()).toEqual([]);
  });
});
