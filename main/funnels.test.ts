import { describe, expect, it, vi } from 'vitest';
import { createFunnels } from './funnels.js';

describe('createFunnels()', () => {
  it('tracks steps, completion and abandonment with a state per funnel', () => {
    let t = 1000;
    const send = vi.fn();
    const funnels = createFunnels(send, () => t);
    funnels.startFunnel('signup');
    t = 1500;
    funnels.advanceFunnel('signup', 'email');
    funnels.advanceFunnel('signup', 'password');
    t = 2000;
    funnels.completeFunnel('signup', { plan: 'pro' });
    expect(send.mock.calls).toEqual([
      ['funnel_started', { funnel: 'signup' }],
      ['funnel_step', { funnel: 'signup', step: 'email', step_index: 0 }],
      ['funnel_step', { funnel: 'signup', step: 'password', step_index: 1 }],
      ['funnel_completed', { plan: 'pro', funnel: 'signup', steps: 2, duration_ms: 1000 }],
    ]);
    expect(funnels.getFunnelState('signup')).toMatchObject({ status: 'completed', currentStepIndex: 1, startedAt: 1000, endedAt: 2000 });
  });

  it('starts a funnel implicitly on a step and restarts a finished one', () => {
    const send = vi.fn();
    const funnels = createFunnels(send, () => 0);
    funnels.trackFunnelStep('checkout', 'cart', 0);
    funnels.abandonFunnel('checkout', 'timeout');
    expect(send.mock.calls.at(-1)).toEqual([
      'funnel_abandoned',
      { funnel: 'checkout', reason: 'timeout', last_step: 'cart', last_step_index: 0, duration_ms: 0 },
    ]);
    funnels.advanceFunnel('checkout', 'cart');
    expect(funnels.getFunnelState('checkout')).toMatchObject({ status: 'active', steps: [{ name: 'cart', index: 0 }] });
  });

  it('returns a copy of the state', () => {
    const funnels = createFunnels(() => {}, () => 0);
    funnels.startFunnel('f');
    funnels.getFunnelState('f')!.steps.push({ name: 'x', index: 9, timestamp: 0 });
    expect(funnels.getFunnelState('f')!.steps).toEqual([]);
  });
});
