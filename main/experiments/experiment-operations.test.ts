/** A/B testing through the facade: off by default, the lazily loaded module, and the wire. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Analytics } from '../analytics.js';
import type { AnalyticsConfig } from '../config.js';
import { assignVariant } from './experiment-assignment.js';
import type { Experiment } from './experiment-types.js';
import { inProcessClient, lazyModulesReady, receivedEvents } from '../../test-support/client/facade-fakes.js';

const HERO: Experiment = {
  id: 'exp_hero',
  key: 'hero',
  name: 'Hero copy',
  status: 'RUNNING',
  trafficSplit: 1,
  variants: [
    { id: 'v_control', key: 'control', name: 'Control', isControl: true, trafficSplit: 0.5, createdAt: '', updatedAt: '' },
    { id: 'v_bold', key: 'bold', name: 'Bold', isControl: false, trafficSplit: 0.5, createdAt: '', updatedAt: '' },
  ],
  createdAt: '',
  updatedAt: '',
};
const STORAGE_KEY = 'service-analytics:proj_1:experiments';
const clients: Analytics[] = [];

function client(config: Partial<AnalyticsConfig> = { enableABTesting: true, abTestConfig: { experiments: [HERO] } }) {
  const made = inProcessClient(config);
  clients.push(made.analytics);
  return made;
}

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
});

describe('with enableABTesting off (the default)', () => {
  it('answers null, false and [], and stores and sends nothing', async () => {
    const { analytics, server } = client({ abTestConfig: { experiments: [HERO] } });
    await lazyModulesReady();
    expect(analytics.config.enableABTesting).toBe(false);
    expect(analytics.getVariant('hero')).toBeNull();
    expect(analytics.isInVariant('hero', 'control')).toBe(false);
    expect(analytics.getExperimentAssignments()).toEqual([]);
    analytics.reset();
    await analytics.flush();
    expect(receivedEvents(server)).toEqual([]);
    expect(localStorage.getItem(STORAGE_KEY)).toBeNull();
  });
});

describe('with enableABTesting on', () => {
  it('answers null until the experiments module arrives, then the variant, exposed once with the ids', async () => {
    const { analytics, server } = client();
    expect(analytics.getVariant('hero')).toBeNull();
    await lazyModulesReady();
    const expected = assignVariant(HERO, analytics.getAnonymousId())!.key;
    expect(analytics.getVariant('hero')).toBe(expected);
    expect(analytics.isInVariant('hero', expected)).toBe(true);
    expect(analytics.getExperimentAssignments()).toMatchObject([{ experimentId: 'exp_hero', variantKey: expected }]);
    await analytics.flush();
    const exposures = receivedEvents(server).filter((e) => e.event_type === 'experiment_exposure');
    expect(exposures).toHaveLength(1);
    expect(exposures[0]!.properties).toMatchObject({
      experiment: 'hero',
      variant: expected,
      experiment_id: 'exp_hero',
      is_control: expected === 'control',
      anonymous_id: analytics.getAnonymousId(),
    });
  });

  it('keeps the assignment and the exposure across a reload', async () => {
    const first = client();
    await lazyModulesReady();
    const variant = first.analytics.getVariant('hero');
    await first.analytics.shutdown(0);
    const reloaded = client();
    await lazyModulesReady();
    expect(reloaded.analytics.getVariant('hero')).toBe(variant);
    await reloaded.analytics.flush();
    expect(receivedEvents(reloaded.server).filter((e) => e.event_type === 'experiment_exposure')).toEqual([]);
  });

  it('keeps the assignment through identify(), and forgets it on reset()', async () => {
    const { analytics } = client();
    await lazyModulesReady();
    const variant = analytics.getVariant('hero');
    analytics.identify('user_9');
    expect(analytics.getVariant('hero')).toBe(variant);
    analytics.reset();
    expect(localStorage.getItem(STORAGE_KEY)).toBeNull();
    expect(analytics.getVariant('hero')).toBe(assignVariant(HERO, analytics.getAnonymousId())!.key);
  });
});
