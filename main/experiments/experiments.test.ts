import { describe, expect, it, vi } from 'vitest';
import { assignVariant } from './experiment-assignment.js';
import type { ABTestConfig, Experiment, ExperimentStatus, Variant } from './experiment-types.js';
import { createExperiments } from './experiments.js';
import type { Logger } from '../logger.js';
import type { KeyValueStore } from '../session/storage.js';

const KEY = 'service-analytics:p:experiments';

function variant(key: string, trafficSplit: number, isControl = false): Variant {
  return { id: `id_${key}`, key, name: key.toUpperCase(), isControl, trafficSplit, createdAt: '', updatedAt: '' };
}

function experiment(key: string, variants: Variant[], status: ExperimentStatus = 'RUNNING', trafficSplit = 100): Experiment {
  return { id: `exp_${key}`, key, name: key, status, trafficSplit, variants, createdAt: '', updatedAt: '' };
}

const CHECKOUT = experiment('checkout', [variant('control', 50, true), variant('one_page', 50)]);

function memoryStore(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, get: (k) => data.get(k) ?? null, set: (k, v) => void data.set(k, v), remove: (k) => void data.delete(k) };
}

interface Setup {
  config?: ABTestConfig;
  store?: KeyValueStore;
  unit?: { id: string };
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

function setup(options: Setup = {}) {
  const unit = options.unit ?? { id: 'anon-1' };
  const send = vi.fn<(event: string, properties: Record<string, unknown>) => void>();
  const log: Logger = { debug: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const timers = { pending: [] as Array<() => void>, setTimeout: vi.fn(), clearTimeout: vi.fn() };
  timers.setTimeout.mockImplementation((callback: () => void) => timers.pending.push(callback));
  const store = options.store ?? memoryStore();
  const experiments = createExperiments({
    config: options.config ?? { experiments: [CHECKOUT] },
    store,
    key: KEY,
    unitId: () => unit.id,
    send,
    now: () => Date.parse('2026-05-01T10:00:00Z'),
    log,
    fetch: options.fetch,
    timers,
  });
  return { experiments, send, log, store, unit, timers };
}

/** A unit id whose hash puts it in `variantKey` of `exp`. */
function idIn(exp: Experiment, variantKey: string, prefix = 'anon-'): string {
  for (let i = 0; ; i++) if (assignVariant(exp, `${prefix}${i}`)?.key === variantKey) return `${prefix}${i}`;
}

describe('createExperiments(): getVariant(key)', () => {
  it('answers the hashed variant and sends experiment_exposure once', () => {
    const id = idIn(CHECKOUT, 'one_page');
    const { experiments, send } = setup({ unit: { id } });
    expect(experiments.getVariant('checkout')).toBe('one_page');
    expect(experiments.getVariant('checkout')).toBe('one_page');
    expect(experiments.isInVariant('checkout', 'one_page')).toBe(true);
    expect(experiments.isInVariant('checkout', 'control')).toBe(false);
    expect(send.mock.calls).toEqual([
      [
        'experiment_exposure',
        { experiment: 'checkout', variant: 'one_page', experiment_id: 'exp_checkout', variant_id: 'id_one_page', is_control: false },
      ],
    ]);
  });

  it('is stable across reloads and does not expose again after one', () => {
    const store = memoryStore();
    const id = idIn(CHECKOUT, 'control');
    setup({ store, unit: { id } }).experiments.getVariant('checkout');
    const reloaded = setup({ store, unit: { id } });
    expect(reloaded.experiments.getVariant('checkout')).toBe('control');
    expect(reloaded.send).not.toHaveBeenCalled();
  });

  it('keeps a stored assignment when the split changes', () => {
    const store = memoryStore();
    const onlyA = experiment('split', [variant('a', 1), variant('b', 0)]);
    expect(setup({ store, config: { experiments: [onlyA] } }).experiments.getVariant('split')).toBe('a');
    const onlyB = experiment('split', [variant('a', 0), variant('b', 1)]);
    expect(setup({ store, config: { experiments: [onlyB] } }).experiments.getVariant('split')).toBe('a');
    expect(setup({ config: { experiments: [onlyB] } }).experiments.getVariant('split')).toBe('b');
  });

  it('reassigns (and exposes again) when the stored variant no longer exists', () => {
    const store = memoryStore();
    setup({ store, config: { experiments: [experiment('e', [variant('old', 1)])] } }).experiments.getVariant('e');
    const { experiments, send } = setup({ store, config: { experiments: [experiment('e', [variant('new', 1)])] } });
    expect(experiments.getVariant('e')).toBe('new');
    expect(send).toHaveBeenCalledWith('experiment_exposure', expect.objectContaining({ variant: 'new' }));
  });

  it.each<ExperimentStatus>(['DRAFT', 'PAUSED', 'COMPLETED', 'ARCHIVED'])(
    'answers null for a %s experiment, keeping a stored assignment for when it runs again',
    (status) => {
      const store = memoryStore();
      const id = idIn(CHECKOUT, 'one_page');
      setup({ store, unit: { id } }).experiments.getVariant('checkout');
      // Another unit id (e.g. after identify) that would hash to the other variant.
      const later = { id: idIn(CHECKOUT, 'control', 'user-') };
      const stopped = setup({ store, unit: later, config: { experiments: [{ ...CHECKOUT, status }] } });
      expect(stopped.experiments.getVariant('checkout')).toBeNull();
      expect(stopped.experiments.getExperimentAssignments()).toEqual([]);
      expect(stopped.send).not.toHaveBeenCalled();
      expect(setup({ store, unit: later }).experiments.getVariant('checkout')).toBe('one_page');
    },
  );

  it('answers null for an unknown experiment and for a user outside its traffic', () => {
    const closed = experiment('closed', [variant('a', 1)], 'RUNNING', 0);
    const { experiments, send, store } = setup({ config: { experiments: [closed] } });
    expect(experiments.getVariant('nope')).toBeNull();
    expect(experiments.getVariant('closed')).toBeNull();
    expect(experiments.isInVariant('closed', 'a')).toBe(false);
    expect(send).not.toHaveBeenCalled();
    expect(store.get(KEY)).toBeNull();
  });

  it('sends no exposure with exposureEvent: false', () => {
    const id = idIn(CHECKOUT, 'one_page');
    const { experiments, send } = setup({ unit: { id }, config: { experiments: [CHECKOUT], exposureEvent: false } });
    expect(experiments.getVariant('checkout')).toBe('one_page');
    expect(experiments.isInVariant('checkout', 'one_page')).toBe(true);
    expect(send).not.toHaveBeenCalled();
  });
});

describe('createExperiments(): ids', () => {
  it('forget() (reset) drops assignments: the new anonymous id is hashed afresh and exposed again', () => {
    const store = memoryStore();
    const unit = { id: idIn(CHECKOUT, 'control') };
    const { experiments, send } = setup({ store, unit });
    experiments.getVariant('checkout');
    experiments.forget();
    expect(store.get(KEY)).toBeNull();
    unit.id = idIn(CHECKOUT, 'one_page', 'new-anon-');
    expect(experiments.getVariant('checkout')).toBe('one_page');
    expect(send.mock.calls.map(([, p]) => p.variant)).toEqual(['control', 'one_page']);
  });

  it('identify (anonymous → user id) keeps existing assignments; new ones hash the user id', () => {
    const other = experiment('other', [variant('x', 1), variant('y', 1)]);
    const unit = { id: idIn(CHECKOUT, 'control') };
    const { experiments } = setup({ unit, config: { experiments: [CHECKOUT, other] } });
    expect(experiments.getVariant('checkout')).toBe('control');
    unit.id = idIn(CHECKOUT, 'one_page', 'user-');
    expect(experiments.getVariant('checkout')).toBe('control');
    expect(experiments.getVariant('other')).toBe(assignVariant(other, unit.id)!.key);
  });
});

describe('createExperiments().getExperimentAssignments()', () => {
  it('lists the running experiments the user is in, without exposing', () => {
    const id = idIn(CHECKOUT, 'one_page');
    const paused = experiment('paused', [variant('a', 1)], 'PAUSED');
    const { experiments, send } = setup({ unit: { id }, config: { experiments: [CHECKOUT, paused] } });
    const list = experiments.getExperimentAssignments();
    expect(list).toEqual([
      {
        experimentId: 'exp_checkout',
        variantId: 'id_one_page',
        variantKey: 'one_page',
        variantName: 'ONE_PAGE',
        isControl: false,
        assignedAt: '2026-05-01T10:00:00.000Z',
        experiment: CHECKOUT,
      },
    ]);
    list[0]!.experiment!.variants.pop();
    expect(experiments.getExperimentAssignments()[0]!.experiment!.variants).toHaveLength(2);
    expect(send).not.toHaveBeenCalled();
    experiments.getVariant('checkout');
    expect(send).toHaveBeenCalledTimes(1);
  });
});

describe('createExperiments(): configuration', () => {
  it('ignores experiments without a key or variants, and a list that is not an array', () => {
    const bad = [{ key: 'no_variants' }, null, { variants: [] }, CHECKOUT] as unknown as Experiment[];
    const { experiments, log } = setup({ unit: { id: idIn(CHECKOUT, 'control') }, config: { experiments: bad } });
    expect(experiments.getVariant('checkout')).toBe('control');
    expect(experiments.getExperimentAssignments().map((a) => [a.experimentId, a.variantKey])).toEqual([['exp_checkout', 'control']]);
    expect(log.warn).toHaveBeenCalledTimes(3);
    const notArray = setup({ config: { experiments: 'checkout' as unknown as Experiment[] } });
    expect(notArray.experiments.getVariant('checkout')).toBeNull();
    expect(notArray.log.warn).toHaveBeenCalledWith(expect.stringContaining('not an array'));
  });

  it('assigns afresh over a corrupt stored entry', () => {
    const store = memoryStore();
    store.set(KEY, '{oops');
    expect(setup({ store, unit: { id: idIn(CHECKOUT, 'control') } }).experiments.getVariant('checkout')).toBe('control');
    // The corrupt entry was replaced by a readable one holding the new assignment.
    expect(setup({ store, unit: { id: idIn(CHECKOUT, 'one_page') } }).experiments.getVariant('checkout')).toBe('control');
    store.set(KEY, JSON.stringify({ checkout: { v: 'control' } })); // no assignment time
    expect(setup({ store, unit: { id: idIn(CHECKOUT, 'one_page') } }).experiments.getVariant('checkout')).toBe('one_page');
  });
});

describe('createExperiments(): experimentsUrl', () => {
  const url = 'https://cdn.example/experiments.json';
  const json = (body: unknown, status = 200): Promise<Response> => Promise.resolve(new Response(JSON.stringify(body), { status }));
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

  it('answers null until the list arrives, then assigns; a fetched experiment replaces an inline one', async () => {
    const fetched = experiment('checkout', [variant('fetched', 1)]);
    const fetch = vi.fn((_url: string, _init: RequestInit) => json([fetched, experiment('new', [variant('n', 1)])]));
    const { experiments, timers } = setup({ fetch, config: { experiments: [], experimentsUrl: url, fetchTimeoutMs: 1234 } });
    expect(experiments.getVariant('new')).toBeNull();
    expect(fetch).toHaveBeenCalledWith(url, expect.objectContaining({ signal: expect.any(AbortSignal) }));
    expect(timers.setTimeout).toHaveBeenCalledWith(expect.any(Function), 1234);
    await settle();
    expect(experiments.getVariant('new')).toBe('n');
    expect(experiments.getVariant('checkout')).toBe('fetched');
    expect(timers.clearTimeout).toHaveBeenCalled();
  });

  it.each([
    ['a non-2xx answer', () => json([], 404)],
    ['a body that is not an array', () => json({ experiments: [] })],
    ['a network error', () => Promise.reject(new TypeError('Failed to fetch'))],
  ])('keeps the inline experiments after %s', async (_name, answer) => {
    const id = idIn(CHECKOUT, 'one_page');
    const { experiments, log } = setup({ unit: { id }, fetch: answer, config: { experiments: [CHECKOUT], experimentsUrl: url } });
    await settle();
    expect(experiments.getVariant('checkout')).toBe('one_page');
    expect(experiments.getExperimentAssignments().map((a) => a.experiment)).toEqual([CHECKOUT]);
    expect(log.warn).toHaveBeenCalledWith(expect.stringContaining('could not be loaded'), expect.anything());
  });

  it('aborts after the timeout (default 5000 ms) and on stop()', async () => {
    const signals: AbortSignal[] = [];
    const fetch = (_url: string, init: RequestInit): Promise<Response> =>
      new Promise((_resolve, reject) => {
        signals.push(init.signal!);
        init.signal!.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    const timedOut = setup({ fetch, config: { experimentsUrl: url } });
    expect(timedOut.timers.setTimeout).toHaveBeenCalledWith(expect.any(Function), 5000);
    timedOut.timers.pending[0]!();
    await settle();
    expect(signals[0]!.aborted).toBe(true);
    expect(timedOut.log.warn).toHaveBeenCalled();
    const stopped = setup({ fetch, config: { experimentsUrl: url } });
    stopped.experiments.stop();
    expect(signals[1]!.aborted).toBe(true);
  });
});
