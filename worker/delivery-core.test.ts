import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_IN_FLIGHT, createDeliveryCore } from './delivery-core.js';
import { type Reply, createFakeFetch, idsOf, postOf, rangeCount, testConfig, uuidEvents as makeEvents } from '../test-support/worker/delivery-fakes.js';
import type { DeliveryConfig, FromWorkerMessage } from '../protocol/worker/worker-contract.js';
import type { AnalyticsEvent } from '../protocol/event-model/analytics-event.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 22, 10, 0, 0) });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A core with a scripted fake fetch, no jitter, and a record of what it posted. */
function setup(overrides: Partial<DeliveryConfig> = {}, script: Reply[] = []) {
  const fake = createFakeFetch(script);
  const core = createDeliveryCore(testConfig(overrides), { fetch: fake.fetch, random: () => 0 });
  const messages: FromWorkerMessage[] = [];
  core.onMessage((message) => messages.push(message));
  /** Posts `events` as the facade does; returns the number of the last, for `flush(upTo)`. */
  const post = (events: AnalyticsEvent[]) => {
    core.receive(postOf(events));
    return postOf(events).columns.idCounters.at(-1) ?? -1;
  };
  const of = <T extends FromWorkerMessage['t']>(t: T) => messages.filter((m): m is Extract<FromWorkerMessage, { t: T }> => m.t === t);
  return { core, fake, messages, post, of };
}

/** Lets pending promises and timers due within `ms` run. */
const advance = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

describe('createDeliveryCore: config defaults it uses', () => {
  it('batchSize 20: sends when 20 events are queued, not at 19', async () => {
    const { fake, post } = setup();
    post(makeEvents(19));
    await advance();
    expect(fake.requests).toHaveLength(0);
    post(makeEvents(1, 19));
    await advance();
    expect(fake.requests).toHaveLength(1);
    expect(idsOf(fake.requests[0]!)).toHaveLength(20);
  });

  it('flushInterval 10000: sends a partial batch after 10 s', async () => {
    const { fake, post } = setup();
    post(makeEvents(5));
    await advance(9_999);
    expect(fake.requests).toHaveLength(0);
    await advance(1);
    expect(fake.requests).toHaveLength(1);
    expect(idsOf(fake.requests[0]!)).toHaveLength(5);
  });

  it('maxQueueSize 1000: the 1001st event drops the oldest and reports it as overflow', () => {
    const { core, fake, post, of } = setup();
    fake.state.hold = true;
    post(makeEvents(1001));
    expect(of('discarded')).toEqual([expect.objectContaining({ ids: [makeEvents(1)[0]!.id], reason: 'overflow' })]);
    expect(core.stats()).toMatchObject({ queueSize: 1000, discarded: 1 });
  });

  it('retryAttempts 3 and retryDelay 1000: sent 4 times, waits 1000/2000/4000 ms, then discarded', async () => {
    const failures: Reply[] = ['network-error', 'network-error', 'network-error', 'network-error'];
    const { core, fake, post, of } = setup({}, failures);
    post(makeEvents(20));
    const sendsAt = async (ms: number) => {
      await advance(ms);
      return fake.requests.length;
    };
    expect(await sendsAt(0)).toBe(1);
    expect(await sendsAt(999)).toBe(1);
    expect(await sendsAt(1)).toBe(2);
    expect(await sendsAt(1_999)).toBe(2);
    expect(await sendsAt(1)).toBe(3);
    expect(await sendsAt(3_999)).toBe(3);
    expect(await sendsAt(1)).toBe(4);
    await advance(60_000);
    expect(fake.requests).toHaveLength(4);
    expect(of('discarded')).toEqual([expect.objectContaining({ reason: 'retries-exhausted', ids: idsOf(fake.requests[0]!) })]);
    expect(core.stats()).toMatchObject({ queueSize: 0, discarded: 20, sent: 0 });
  });
});

describe('createDeliveryCore: server answers', () => {
  it('429 with Retry-After: waits as told before sending again, new events included', async () => {
    const { fake, post } = setup({}, [{ status: 429, headers: { 'retry-after': '30' }, body: { error: 'slow', code: 'RATE_LIMITED' } }]);
    post(makeEvents(20));
    await advance();
    post(makeEvents(20, 20));
    await advance(29_999);
    expect(fake.requests).toHaveLength(1);
    await advance(1);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.flatMap(idsOf).slice(20).sort()).toEqual(makeEvents(40).map((e) => e.id));
  });

  it('429 many times in a row: waits each time and never discards, though retryAttempts is 3', async () => {
    const limited: Reply = { status: 429, headers: { 'retry-after': '2' }, body: { error: 'slow', code: 'RATE_LIMITED' } };
    const { core, fake, post, of } = setup({}, Array.from({ length: 8 }, () => limited));
    post(makeEvents(20));
    await advance();
    for (let sends = 1; sends <= 8; sends++) {
      expect(fake.requests).toHaveLength(sends);
      await advance(1_999);
      expect(fake.requests).toHaveLength(sends);
      await advance(1);
    }
    expect(fake.requests).toHaveLength(9);
    await advance();
    expect(of('discarded')).toEqual([]);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 20, discarded: 0 });
  });

  it('429 without Retry-After and 503 with it are deferrals too; a 503 without it uses up retries', async () => {
    const { core, fake, post, of } = setup({ retryAttempts: 1 }, [
      { status: 429, body: { error: 'slow', code: 'RATE_LIMITED' } },
      { status: 503, headers: { 'retry-after': '1' }, body: { error: 'busy', code: 'STORAGE_UNAVAILABLE' } },
      { status: 429, body: { error: 'slow', code: 'RATE_LIMITED' } },
      { status: 503, body: { error: 'busy', code: 'STORAGE_UNAVAILABLE' } },
      { status: 503, body: { error: 'busy', code: 'STORAGE_UNAVAILABLE' } },
    ]);
    post(makeEvents(20));
    await advance(60_000);
    // 429, 503+RA, 429: deferred; then 503 twice: one send and its single retry, then discarded.
    expect(fake.requests).toHaveLength(5);
    expect(of('discarded')).toEqual([expect.objectContaining({ reason: 'retries-exhausted' })]);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 0, discarded: 20 });
  });

  it('4xx: not retried, reported as discarded with reason rejected and logged when debug is on', async () => {
    const { core, fake, post, of } = setup({ debug: true }, [{ status: 400, body: { error: 'bad', code: 'VALIDATION_ERROR' } }]);
    post(makeEvents(20));
    await advance(60_000);
    expect(fake.requests).toHaveLength(1);
    expect(of('discarded')).toEqual([expect.objectContaining({ reason: 'rejected', ids: idsOf(fake.requests[0]!) })]);
    expect(of('log').some((m) => m.message.includes('VALIDATION_ERROR'))).toBe(true);
    expect(core.stats().queueSize).toBe(0);
  });

  it('200 with errors by index: those events are discarded as rejected, the rest acknowledged, none retried', async () => {
    const { fake, post, of } = setup({}, [
      { status: 200, body: { success: true, processed: 18, errors: [{ index: 1, error: 'x' }, { index: 5, error: 'y' }] } },
    ]);
    post(makeEvents(20));
    await advance(60_000);
    expect(fake.requests).toHaveLength(1);
    // Events are reported by the numbers of their post: the first post's 20 events are 0 … 19.
    expect(of('discarded')).toEqual([
      expect.objectContaining({ reason: 'rejected', ids: [1, 5].map((n) => makeEvents(1, n)[0]!.id), ranges: [1, 2, 5, 6] }),
    ]);
    expect(of('status').flatMap((s) => s.acked)).toEqual([0, 1, 2, 5, 6, 20]);
  });

  it('posts no log messages when debug is off', async () => {
    const { post, of } = setup({}, [{ status: 400, body: { error: 'bad', code: 'VALIDATION_ERROR' } }]);
    post(makeEvents(20));
    await advance();
    expect(of('log')).toEqual([]);
  });
});

describe('createDeliveryCore.flush(upTo)', () => {
  it('resolves with the number sent once everything queued at the call is accepted', async () => {
    const { core, fake, post } = setup();
    const upTo = post(makeEvents(45));
    const result = core.flush(upTo);
    await advance();
    expect(await result).toEqual({ ok: true, sent: 45 });
    expect(fake.requests.map((r) => idsOf(r).length).sort()).toEqual([20, 20, 5]);
  });

  it('waits for the data-plane post that carries event `upTo` before snapshotting', async () => {
    const { core, fake } = setup();
    let settled = false;
    const result = core.flush(2).then((r) => ((settled = true), r));
    await advance();
    expect(settled).toBe(false);
    core.receive(postOf(makeEvents(3)));
    await advance();
    expect(await result).toEqual({ ok: true, sent: 3 });
    expect(fake.requests).toHaveLength(1);
  });

  it('resolves at once with nothing queued', async () => {
    const { core } = setup();
    expect(await core.flush(-1)).toEqual({ ok: true, sent: 0 });
  });

  it('fails as soon as one request fails, keeps the events queued, and a later flush sends them', async () => {
    const { core, fake, post } = setup({}, [{ status: 503, body: { error: 'busy', code: 'STORAGE_UNAVAILABLE' } }]);
    const upTo = post(makeEvents(5));
    const failed = core.flush(upTo);
    await advance();
    expect(await failed).toMatchObject({ ok: false, code: 'HTTP_ERROR', status: 503, queued: 5 });
    expect(core.stats().queueSize).toBe(5);
    // The next attempt does not wait out the backoff.
    const retried = core.flush(upTo);
    await advance();
    expect(await retried).toEqual({ ok: true, sent: 5 });
    expect(fake.requests).toHaveLength(2);
  });

  it('reports network failures and 401 with their codes', async () => {
    const { core, post } = setup({}, ['network-error', { status: 401, body: { error: 'bad key', code: 'AUTH_ERROR' } }]);
    const upTo = post(makeEvents(1));
    const network = core.flush(upTo);
    await advance();
    expect(await network).toMatchObject({ ok: false, code: 'NETWORK_ERROR', queued: 1 });
    const auth = core.flush(upTo);
    await advance();
    // A 401 is final: the events were discarded as rejected, nothing is left queued.
    expect(await auth).toMatchObject({ ok: false, code: 'AUTH_ERROR', status: 401, queued: 0 });
  });
});

describe('createDeliveryCore: driving', () => {
  it('keeps at most MAX_IN_FLIGHT requests outstanding and drains a 10,000-event post', async () => {
    const { core, fake, post, of } = setup({ maxQueueSize: 10_000 });
    fake.state.hold = true;
    post(makeEvents(10_000));
    await advance();
    expect(fake.requests).toHaveLength(MAX_IN_FLIGHT);
    fake.state.hold = false;
    fake.release();
    await advance();
    expect(fake.requests).toHaveLength(500);
    expect(new Set(fake.requests.flatMap(idsOf)).size).toBe(10_000);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 10_000 });
    // Status posts are coalesced: never more than one per completed request plus the post.
    expect(of('status').length).toBeLessThanOrEqual(501);
    expect(of('status').reduce((n, s) => n + rangeCount(s.acked), 0)).toBe(10_000);
    // Acks are ranges: a batch of 20 events posted together is one range, not 20 numbers.
    expect(of('status').reduce((n, s) => n + s.acked.length, 0)).toBeLessThanOrEqual(2 * 500);
  });

  it('spaces status posts while a burst drains: acks are carried as a union, the empty queue is reported at once', async () => {
    const { fake, post, of } = setup({ maxQueueSize: 10_000 });
    fake.state.hold = true;
    post(makeEvents(2_000));
    await advance();
    const before = of('status').length;
    for (let i = 0; i < 9; i++) {
      fake.release();
      await advance(10);
    }
    // 36 batches (MAX_IN_FLIGHT per release) acked within 90 ms: at most one routine status so far.
    expect(of('status').length - before).toBeLessThanOrEqual(1);
    expect(of('status').reduce((n, s) => n + rangeCount(s.acked), 0)).toBeLessThan(9 * MAX_IN_FLIGHT * 20);
    fake.state.hold = false;
    fake.release();
    await advance(0);
    // Every ack is posted at once when the queue becomes empty: the facade counts its queue from them.
    expect(of('status').reduce((n, s) => n + rangeCount(s.acked), 0)).toBe(2_000);
  });

  it('acks events by the numbers of their posts, in whatever order the batches succeed', async () => {
    // The first batch fails once and is retried after the second was accepted.
    const { post, of } = setup({}, ['network-error']);
    post(makeEvents(20));
    post(makeEvents(20, 20));
    await advance(200); // routine status posts are spaced (outbox.ts)
    expect(of('status').flatMap((s) => s.acked)).toEqual([20, 40]);
    await advance(1_000);
    expect(of('status').flatMap((s) => s.acked)).toEqual([20, 40, 0, 20]);
  });

  it('reports events by their ids\' counters', async () => {
    const { core, of } = setup();
    core.receive(postOf(makeEvents(7, 100)));
    await core.flush(106);
    await advance(0);
    expect(of('status').flatMap((s) => s.acked)).toEqual([100, 107]);
  });

  it('posts one status for the messages of one task', async () => {
    const { post, of } = setup();
    post(makeEvents(3));
    post(makeEvents(2, 3));
    await advance();
    expect(of('status')).toEqual([{ t: 'status', recordingQueued: 0, restored: 0, acked: [] }]);
  });

  it('adds its time zone to events whose context has none, reading it once, when events are first queued', async () => {
    const fake = createFakeFetch();
    const timezone = vi.fn(() => 'Europe/Paris');
    const core = createDeliveryCore(testConfig({ batchSize: 2 }), { fetch: fake.fetch, random: () => 0, timezone });
    const [plain, zoned] = makeEvents(2);
    expect(timezone).not.toHaveBeenCalled();
    core.receive(postOf([plain!, { ...zoned!, context: { ...zoned!.context, timezone: 'Asia/Tokyo' } }]));
    await advance();
    const sent = fake.requests[0]!.body as Array<{ properties: Record<string, unknown> }>;
    expect(sent.map((e) => e.properties.timezone)).toEqual(['Europe/Paris', 'Asia/Tokyo']);
    expect(core.timezone()).toBe('Europe/Paris');
  });

  it('page-hidden sends what is queued now', async () => {
    const { core, fake, post } = setup();
    post(makeEvents(3));
    core.receive({ t: 'page-hidden' });
    await advance();
    expect(fake.requests).toHaveLength(1);
  });

  it('clear() discards every queued event with reason cleared', async () => {
    const { core, post, of } = setup();
    post(makeEvents(3));
    await core.clear();
    expect(of('discarded')).toEqual([expect.objectContaining({ reason: 'cleared', ids: makeEvents(3).map((e) => e.id) })]);
    expect(core.stats().queueSize).toBe(0);
  });

  it('shutdown(timeout) sends what is queued, then refuses flushes', async () => {
    const { core, fake, post } = setup();
    post(makeEvents(3));
    const done = core.shutdown(5_000);
    await advance();
    await done;
    expect(fake.requests).toHaveLength(1);
    expect(await core.flush(3)).toMatchObject({ ok: false, code: 'SHUT_DOWN' });
  });

  it('shutdown(timeout) gives up after the timeout when the server is down', async () => {
    const { core, post } = setup({}, Array<Reply>(10).fill('network-error'));
    post(makeEvents(3));
    const done = core.shutdown(5_000);
    await advance(5_000);
    await done;
    expect(core.stats().queueSize).toBe(3);
  });

  it('reports recorder output in status.recordingQueued and uploads it on page-hidden', async () => {
    const { core, fake, of } = setup();
    const meta = { startUrl: 'https://shop.test/', userId: 'user-1', startedAt: Date.now() };
    const events = [2, 3].map((type) => ({ type, data: {}, timestamp: 1 }));
    core.receive({ t: 'recording', sessionId: 'sess_1', meta, events });
    await advance();
    expect(of('status').at(-1)).toMatchObject({ recordingQueued: 2 });
    core.receive({ t: 'page-hidden' });
    await advance();
    expect(fake.requests.map((r) => r.url)).toEqual(['http://analytics.test/api/v1/sessions/sess_1/recordings']);
    // The newest recorded event waits for the next chunk (recording-uploader.ts).
    expect(of('status').at(-1)).toMatchObject({ recordingQueued: 1 });
  });

  it('discards a batch whose send failed for a reason of its own, logged, without retrying it as a network failure', async () => {
    const { core, fake, post, of } = setup({ debug: true }, ['internal-error']);
    post(makeEvents(20));
    await advance(60_000);
    expect(fake.requests).toHaveLength(1);
    expect(of('discarded')).toEqual([expect.objectContaining({ reason: 'rejected', detail: expect.stringContaining('invalid header value') })]);
    expect(of('log')).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'error', message: expect.stringContaining('could not be made') })]));
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 0, discarded: 20 });
  });

  it('discards a malformed event as rejected when it arrives, and sends the rest', async () => {
    const { core, fake, post, of } = setup();
    const broken = { ...makeEvents(1, 99)[0]!, context: undefined } as unknown as AnalyticsEvent;
    post([...makeEvents(19), broken]);
    await advance();
    // Mapped once, on arrival: the broken one never enters the queue, and 19 wait for a batch.
    expect(of('discarded')).toEqual([expect.objectContaining({ reason: 'rejected', ids: [makeEvents(1, 99)[0]!.id] })]);
    expect(fake.requests).toHaveLength(0);
    await advance(10_000);
    expect(idsOf(fake.requests[0]!)).toHaveLength(19);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 19 });
  });
});

describe('createDeliveryCore: offline and kept events', () => {
  function offlineSetup(overrides: Partial<DeliveryConfig>, script: Reply[]) {
    const fake = createFakeFetch(script);
    let online = false;
    const listeners = new Set<() => void>();
    const core = createDeliveryCore(testConfig(overrides), {
      fetch: fake.fetch,
      random: () => 0,
      online: {
        isOnline: () => online,
        onOnline(listener) {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      },
    });
    const messages: FromWorkerMessage[] = [];
    core.onMessage((message) => messages.push(message));
    const goOnline = () => {
      online = true;
      for (const listener of [...listeners]) listener();
    };
    return { core, fake, messages, goOnline };
  }

  it('spends no retry on failures while the browser says it is offline, and sends as soon as it is back', async () => {
    // retryAttempts 0: one failure counted as an attempt would discard the batch at once.
    const { core, fake, messages, goOnline } = offlineSetup({ retryAttempts: 0 }, ['network-error', 'network-error']);
    core.receive(postOf(makeEvents(20)));
    await advance(60_000);
    expect(fake.requests).toHaveLength(1);
    expect(messages.filter((m) => m.t === 'discarded')).toEqual([]);
    expect(core.stats()).toMatchObject({ queueSize: 20, discarded: 0 });
    goOnline();
    await advance(0);
    // The second send fails too, now online: with retryAttempts 0 that one is final.
    expect(fake.requests).toHaveLength(2);
    expect(core.stats()).toMatchObject({ queueSize: 0, discarded: 20 });
  });

  it('discardAfterRetries: false keeps events whose retries are spent and sends them at the next flush interval', async () => {
    const failures: Reply[] = Array.from({ length: 5 }, () => ({ status: 503 }));
    const fake = createFakeFetch(failures);
    const core = createDeliveryCore(testConfig({ retryAttempts: 1, discardAfterRetries: false }), { fetch: fake.fetch, random: () => 0 });
    const messages: FromWorkerMessage[] = [];
    core.onMessage((message) => messages.push(message));
    core.receive(postOf(makeEvents(20)));
    await advance(120_000);
    expect(messages.filter((m) => m.t === 'discarded')).toEqual([]);
    expect(fake.requests).toHaveLength(6);
    expect(core.stats()).toMatchObject({ queueSize: 0, sent: 20, discarded: 0 });
  });
});
