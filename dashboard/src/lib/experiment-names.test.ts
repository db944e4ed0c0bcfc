import { describe, expect, it } from 'vitest';
import type { WireEvent } from '../api/wire-types.js';
import { experimentNames } from './experiment-names.js';

const exposure = (experiment: unknown): WireEvent => ({
  event_id: 'e',
  event_type: 'experiment_exposure',
  user_id: null,
  session_id: null,
  timestamp: null,
  received_at: null,
  properties: { experiment: experiment as string, variant: 'control' },
  user_agent: null,
});

describe('experimentNames(events)', () => {
  it('lists each experiment once, the most exposed first, ties by name', () => {
    const events = ['b', 'a', 'c', 'c', 'a', 'c'].map(exposure);
    expect(experimentNames(events)).toEqual(['c', 'a', 'b']);
  });

  it('skips exposures without a usable name', () => {
    expect(experimentNames([exposure(''), exposure(3), exposure(null), exposure('x')])).toEqual(['x']);
  });
});
