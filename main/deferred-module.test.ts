import { describe, expect, it, vi } from 'vitest';
import { createDeferredModule } from './deferred-module.js';
import type { Logger } from './logger.js';

interface Counter {
  add(properties: { n: number }): void;
  fail(): void;
  total(): number;
  info(): { total: number };
}

function setup(options: { load?: 'manual' | 'off' } = {}) {
  const clock = { t: 100 };
  const log: Logger = { debug: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const seen: Array<[number, number]> = [];
  let resolve!: (module: Counter) => void;
  let reject!: (error: unknown) => void;
  const loaded = new Promise<Counter>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const deferred = createDeferredModule<Counter>({
    load:
      options.load === 'off'
        ? undefined
        : (now) =>
            loaded.then(() => {
              let total = 0;
              return {
                add: ({ n }) => {
                  total += n;
                  seen.push([n, now()]);
                },
                fail: () => {
                  throw new Error('boom');
                },
                total: () => total,
                info: () => ({ total }),
              };
            }),
    calls: ['add', 'fail'],
    reads: { total: -1, info: { total: -1 } },
    now: () => clock.t,
    log,
    name: 'counter',
  });
  return { clock, log, seen, deferred, arrive: () => resolve(undefined as never), failLoad: (e: unknown) => reject(e) };
}

describe('createDeferredModule(options)', () => {
  it('replays calls made before arrival in order, each seeing the time of its call', async () => {
    const { clock, seen, deferred, arrive } = setup();
    const ops = deferred.operations;
    const properties = { n: 1 };
    ops.add(properties);
    properties.n = 99; // changed by the app after the call: the copy taken at the call counts
    clock.t = 200;
    ops.add({ n: 2 });
    ops.fail(); // a failing call does not stop the others
    ops.add({ n: 3 });
    expect(ops.total()).toBe(-1);
    const settled = deferred.settled();
    expect(settled).toBeInstanceOf(Promise);
    clock.t = 500;
    arrive();
    await settled;
    expect(seen).toEqual([
      [1, 100],
      [2, 200],
      [3, 200],
    ]);
    expect(ops.total()).toBe(6);
    expect(deferred.now()).toBe(500);
    ops.add({ n: 4 });
    expect(seen.at(-1)).toEqual([4, 500]);
    expect(deferred.settled()).toBeUndefined();
  });

  it('gives run() the time of the call', async () => {
    const { clock, deferred, arrive } = setup();
    const at = vi.fn();
    deferred.run((_module, time) => at(time));
    clock.t = 300;
    arrive();
    await deferred.settled();
    expect(at).toHaveBeenCalledWith(100);
    deferred.run((_module, time) => at(time));
    expect(at).toHaveBeenLastCalledWith(300);
  });

  it('answers a fresh copy of the fallback before arrival', () => {
    const { deferred } = setup();
    const first = deferred.operations.info();
    first.total = 5;
    expect(deferred.operations.info()).toEqual({ total: -1 });
    expect(deferred.settled()).toBeUndefined();
  });

  it('drops the queue when loading fails, and ignores later calls', async () => {
    const { log, seen, deferred, failLoad } = setup();
    deferred.operations.add({ n: 1 });
    const settled = deferred.settled();
    failLoad(new Error('chunk missing'));
    await settled;
    expect(log.error).toHaveBeenCalledWith('counter could not be loaded; 1 calls dropped', expect.any(Error));
    deferred.operations.add({ n: 2 });
    expect(deferred.settled()).toBeUndefined();
    expect(deferred.operations.total()).toBe(-1);
    expect(seen).toEqual([]);
  });

  it('keeps at most 1000 queued calls, dropping the oldest', async () => {
    const { seen, deferred, arrive } = setup();
    for (let n = 1; n <= 1001; n++) deferred.operations.add({ n });
    arrive();
    await deferred.settled();
    expect(seen).toHaveLength(1000);
    expect(seen[0]![0]).toBe(2);
  });

  it('with no loader, ignores calls and answers the fallbacks', () => {
    const { deferred } = setup({ load: 'off' });
    deferred.operations.add({ n: 1 });
    expect(deferred.settled()).toBeUndefined();
    expect(deferred.operations.total()).toBe(-1);
  });
});

describe('createDeferredModule(options) with a schedule', () => {
  function scheduled() {
    const load = vi.fn(async () => ({ add: vi.fn(), fail: vi.fn(), total: () => 7, info: () => ({ total: 7 }) }) satisfies Counter);
    let start: (() => void) | undefined;
    const deferred = createDeferredModule<Counter>({
      load,
      calls: ['add', 'fail'],
      reads: { total: -1, info: { total: -1 } },
      now: () => 5,
      log: { debug: vi.fn(), warn: vi.fn(), error: vi.fn() },
      name: 'counter',
      schedule: (begin) => {
        start = begin;
      },
    });
    return { load, deferred, start: () => start!() };
  }

  it('loads only when the schedule says, once', async () => {
    const { load, deferred, start } = scheduled();
    expect(load).not.toHaveBeenCalled();
    expect(deferred.operations.total()).toBe(-1);
    start();
    start();
    await vi.waitFor(() => expect(deferred.operations.total()).toBe(7));
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('a call before the schedule starts the load at once and is applied when it arrives; settled() waits for it', async () => {
    const { load, deferred, start } = scheduled();
    deferred.operations.add({ n: 1 });
    expect(load).toHaveBeenCalledTimes(1);
    await deferred.settled();
    start();
    expect(load).toHaveBeenCalledTimes(1);
    expect(deferred.operations.total()).toBe(7);
  });
});
