import { describe, expect, it, vi } from 'vitest';
import { guardAll } from './guard.js';
import { SILENT } from './logger.js';
import { EMPTY_SESSION } from './session/empty-session.js';
import { OPERATION_FALLBACKS, fallbackOf, fallbacksOf } from './operation-fallbacks.js';

describe('the one fallback table', () => {
  it('answers a fresh copy of an object, so an app changing one changes no later answer', () => {
    const assignments = fallbackOf('getExperimentAssignments') as unknown[];
    assignments.push('changed');
    expect(fallbackOf('getExperimentAssignments')).toEqual([]);
    const session = fallbackOf('getSessionData') as { events: string[] };
    expect(session).toEqual(EMPTY_SESSION);
    expect(Object.isFrozen(session)).toBe(false);
    session.events.push('x');
    expect(EMPTY_SESSION.events).toEqual([]);
  });

  it('answers primitives and null as they are, and undefined for an operation not listed', () => {
    expect(fallbackOf('getUserId')).toBeNull();
    expect(fallbackOf('isInVariant')).toBe(false);
    expect(fallbackOf('getQueueSize')).toBe(0);
    expect(fallbackOf('track')).toBeUndefined();
  });

  it('picks the fallbacks of a lazily loaded module’s reads from the table', () => {
    expect(fallbacksOf('getVariant', 'calculateChurnRisk', 'getFunnelState')).toEqual({
      getVariant: OPERATION_FALLBACKS.getVariant,
      calculateChurnRisk: OPERATION_FALLBACKS.calculateChurnRisk,
      getFunnelState: undefined,
    });
    expect('getFunnelState' in fallbacksOf('getFunnelState')).toBe(true);
  });

  it('is what a guarded operation that throws answers', () => {
    const log = { ...SILENT, error: vi.fn() };
    const guarded = guardAll(
      {
        calculateChurnRisk: (): unknown => {
          throw new Error('boom');
        },
      },
      fallbackOf,
      log,
    );
    expect(guarded.calculateChurnRisk()).toEqual(OPERATION_FALLBACKS.calculateChurnRisk);
    expect(log.error).toHaveBeenCalledWith('calculateChurnRisk() failed', expect.any(Error));
  });
});
