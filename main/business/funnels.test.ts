import { describe, expect, it, vi } from 'vitest';
import { type FunnelOperations, createFunnels } from './funnels.js';
import type { Logger } from '../logger.js';

function setup() {
  const clock = { t: 1000 };
  const send = vi.fn<(event: string, properties: Record<string, unknown>) => void>();
  const log: Logger = { debug: vi.fn(), warn: vi.fn(), error: vi.fn() };
  const funnels: FunnelOperations = createFunnels(send, () => clock.t, log);
  return { clock, send, log, funnels };
}

describe('createFunnels(): valid transitions', () => {
  it('start → advance → advance → complete sends the four event shapes and keeps the state', () => {
    const { clock, send, funnels } = setup();
    funnels.startFunnel('signup', { source: 'ad' });
    clock.t = 1500;
    funnels.advanceFunnel('signup', 'email');
    clock.t = 1800;
    funnels.advanceFunnel('signup', 'password', { strength: 3 });
    clock.t = 2000;
    funnels.completeFunnel('signup', { plan: 'pro' });
    expect(send.mock.calls).toEqual([
      ['funnel_started', { source: 'ad', funnel: 'signup' }],
      ['funnel_step', { funnel: 'signup', step: 'email', step_index: 0, ms_since_start: 500, ms_since_previous: 500 }],
      ['funnel_step', { strength: 3, funnel: 'signup', step: 'password', step_index: 1, ms_since_start: 800, ms_since_previous: 300 }],
      ['funnel_completed', { plan: 'pro', funnel: 'signup', steps: 2, last_step: 'password', duration_ms: 1000 }],
    ]);
    expect(funnels.getFunnelState('signup')).toEqual({
      name: 'signup',
      status: 'completed',
      startedAt: 1000,
      completedAt: 2000,
      currentStep: 'password',
      currentStepIndex: 1,
      steps: [
        { name: 'email', index: 0, timestamp: 1500 },
        { name: 'password', index: 1, timestamp: 1800 },
      ],
    });
  });

  it('start → abandon sends funnel_abandoned with the reason and the last step', () => {
    const { clock, send, funnels } = setup();
    funnels.startFunnel('checkout');
    funnels.advanceFunnel('checkout', 'cart');
    clock.t = 4000;
    funnels.abandonFunnel('checkout', 'closed tab', { page: 'cart' });
    expect(send.mock.calls.at(-1)).toEqual([
      'funnel_abandoned',
      { page: 'cart', funnel: 'checkout', reason: 'closed tab', last_step: 'cart', last_step_index: 0, duration_ms: 3000 },
    ]);
    expect(funnels.getFunnelState('checkout')).toMatchObject({ status: 'abandoned', abandonedAt: 4000, abandonReason: 'closed tab' });
  });

  it('abandon before any step, without a reason, leaves reason and last step out', () => {
    const { send, funnels } = setup();
    funnels.startFunnel('f');
    funnels.abandonFunnel('f');
    expect(send.mock.calls.at(-1)).toEqual([
      'funnel_abandoned',
      { funnel: 'f', reason: undefined, last_step: undefined, last_step_index: undefined, duration_ms: 0 },
    ]);
    expect(funnels.getFunnelState('f')).toMatchObject({ status: 'abandoned', currentStep: null, currentStepIndex: -1 });
  });

  it('trackFunnelStep starts a funnel that is not running, then records the given index', () => {
    const { send, funnels } = setup();
    funnels.trackFunnelStep('checkout', 'payment', 2);
    expect(send.mock.calls.map(([name]) => name)).toEqual(['funnel_started', 'funnel_step']);
    expect(send.mock.calls[1]![1]).toMatchObject({ step: 'payment', step_index: 2 });
    funnels.trackFunnelStep('checkout', 'shipping', 1); // going back is allowed
    funnels.advanceFunnel('checkout', 'payment'); // numbered after the last step
    expect(funnels.getFunnelState('checkout')).toMatchObject({ status: 'started', currentStep: 'payment', currentStepIndex: 2 });
    expect(funnels.getFunnelState('checkout')!.steps.map((s) => s.index)).toEqual([2, 1, 2]);
  });

  it('trackFunnelStep after completion starts a new run', () => {
    const { send, funnels } = setup();
    funnels.startFunnel('f');
    funnels.completeFunnel('f');
    funnels.trackFunnelStep('f', 'again', 0);
    expect(send.mock.calls.map(([name]) => name)).toEqual(['funnel_started', 'funnel_completed', 'funnel_started', 'funnel_step']);
    expect(funnels.getFunnelState('f')).toMatchObject({ status: 'started', steps: [{ name: 'again' }] });
  });

  it('startFunnel on a running funnel abandons it (reason "restarted") and starts it again', () => {
    const { clock, send, funnels } = setup();
    funnels.startFunnel('f');
    funnels.advanceFunnel('f', 'one');
    clock.t = 3000;
    funnels.startFunnel('f');
    expect(send.mock.calls.slice(2)).toEqual([
      ['funnel_abandoned', { funnel: 'f', reason: 'restarted', last_step: 'one', last_step_index: 0, duration_ms: 2000 }],
      ['funnel_started', { funnel: 'f' }],
    ]);
    expect(funnels.getFunnelState('f')).toMatchObject({ status: 'started', startedAt: 3000, steps: [] });
  });

  it('startFunnel after completion or abandonment starts a fresh run', () => {
    const { send, funnels } = setup();
    funnels.startFunnel('f');
    funnels.abandonFunnel('f', 'x');
    funnels.startFunnel('f');
    expect(send.mock.calls.map(([name]) => name)).toEqual(['funnel_started', 'funnel_abandoned', 'funnel_started']);
    expect(funnels.getFunnelState('f')).toEqual({ name: 'f', status: 'started', startedAt: 1000, steps: [], currentStep: null, currentStepIndex: -1 });
  });

  it('keeps funnels apart by name', () => {
    const { funnels } = setup();
    funnels.startFunnel('a');
    funnels.startFunnel('b');
    funnels.completeFunnel('a');
    expect(funnels.getFunnelState('a')!.status).toBe('completed');
    expect(funnels.getFunnelState('b')!.status).toBe('started');
  });
});

describe('createFunnels(): invalid transitions send nothing, change nothing and are logged', () => {
  const cases: Array<[string, (f: FunnelOperations) => void, (f: FunnelOperations) => void]> = [
    ['advance without start', () => {}, (f) => f.advanceFunnel('f', 's')],
    ['complete without start', () => {}, (f) => f.completeFunnel('f')],
    ['abandon without start', () => {}, (f) => f.abandonFunnel('f', 'r')],
    ['complete twice', (f) => (f.startFunnel('f'), f.completeFunnel('f')), (f) => f.completeFunnel('f')],
    ['abandon after complete', (f) => (f.startFunnel('f'), f.completeFunnel('f')), (f) => f.abandonFunnel('f')],
    ['abandon twice', (f) => (f.startFunnel('f'), f.abandonFunnel('f')), (f) => f.abandonFunnel('f')],
    ['complete after abandon', (f) => (f.startFunnel('f'), f.abandonFunnel('f')), (f) => f.completeFunnel('f')],
    ['advance after complete', (f) => (f.startFunnel('f'), f.completeFunnel('f')), (f) => f.advanceFunnel('f', 's')],
    ['a negative step index', (f) => f.startFunnel('f'), (f) => f.trackFunnelStep('f', 's', -1)],
    ['a fractional step index', (f) => f.startFunnel('f'), (f) => f.trackFunnelStep('f', 's', 1.5)],
    ['a NaN step index', (f) => f.startFunnel('f'), (f) => f.trackFunnelStep('f', 's', Number.NaN)],
    ['a string step index', (f) => f.startFunnel('f'), (f) => f.trackFunnelStep('f', 's', '2' as unknown as number)],
    ['an empty step name', (f) => f.startFunnel('f'), (f) => f.advanceFunnel('f', '')],
    ['a missing step name', (f) => f.startFunnel('f'), (f) => f.trackFunnelStep('f', undefined as unknown as string, 0)],
    ['an empty funnel name', () => {}, (f) => f.startFunnel('')],
    ['a funnel name that is not a string', () => {}, (f) => f.trackFunnelStep({} as unknown as string, 's', 0)],
  ];

  it.each(cases)('%s', (_name, arrange, act) => {
    const { send, log, funnels } = setup();
    arrange(funnels);
    const sent = send.mock.calls.length;
    const before = funnels.getFunnelState('f');
    expect(() => act(funnels)).not.toThrow();
    expect(send.mock.calls.length).toBe(sent);
    expect(funnels.getFunnelState('f')).toEqual(before);
    expect(log.debug).toHaveBeenCalledWith(expect.stringContaining('ignored'));
  });
});

describe('createFunnels().getFunnelState(name)', () => {
  it('is undefined for a funnel never started and a copy otherwise', () => {
    const { funnels } = setup();
    expect(funnels.getFunnelState('never')).toBeUndefined();
    funnels.startFunnel('f');
    funnels.getFunnelState('f')!.steps.push({ name: 'x', index: 9, timestamp: 0 });
    expect(funnels.getFunnelState('f')!.steps).toEqual([]);
  });

  it('forgets the least recently started funnel beyond 100', () => {
    const { funnels } = setup();
    for (let i = 0; i <= 100; i++) funnels.startFunnel(`f${i}`);
    expect(funnels.getFunnelState('f0')).toBeUndefined();
    const kept = { status: 'started', startedAt: 1000, steps: [], currentStep: null, currentStepIndex: -1 };
    expect(funnels.getFunnelState('f1')).toEqual({ name: 'f1', ...kept });
    expect(funnels.getFunnelState('f100')).toEqual({ name: 'f100', ...kept });
  });
});
