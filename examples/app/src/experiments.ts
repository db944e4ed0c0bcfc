/** The example's one A/B experiment, defined inline (`abTestConfig.experiments`): no fetch needed. */
import type { Experiment } from 'service-analytics';

const CREATED = '2026-01-01T00:00:00.000Z';

/** Key of {@link CTA_EXPERIMENT}. */
export const CTA_EXPERIMENT_KEY = 'cta-copy';

/** Which call to action a visitor sees: half get the control, half the variant. */
export const CTA_EXPERIMENT: Experiment = {
  id: 'exp_cta_copy',
  key: CTA_EXPERIMENT_KEY,
  name: 'Call-to-action copy',
  description: 'Does "Start free trial" beat "Sign up"?',
  status: 'RUNNING',
  trafficSplit: 1,
  createdAt: CREATED,
  updatedAt: CREATED,
  variants: [
    { id: 'var_control', key: 'control', name: 'Sign up', isControl: true, trafficSplit: 50, createdAt: CREATED, updatedAt: CREATED },
    { id: 'var_trial', key: 'free-trial', name: 'Start free trial', isControl: false, trafficSplit: 50, createdAt: CREATED, updatedAt: CREATED },
  ],
};
