/**
 * Funnels: a small state map per funnel name and the `funnel_*` events (DESIGN.md "Decisions").
 * Event properties: `funnel_started` {funnel}; `funnel_step` {funnel, step, step_index};
 * `funnel_completed` {funnel, steps, duration_ms}; `funnel_abandoned` {funnel, reason, last_step,
 * last_step_index, duration_ms}; each with the call's properties beside them (ours win on a clash).
 */
import type { EventProperties } from '../worker/types.js';
import type { FunnelState } from './types.js';

/** Funnel operations of the client (SPEC.md "Client library operations"). */
export interface FunnelOperations {
  /** Records step `stepName` at `stepIndex` of `funnelName` (starting the funnel if needed). */
  trackFunnelStep(funnelName: string, stepName: string, stepIndex: number, properties?: EventProperties): void;
  /** Starts (or restarts) `funnelName`. */
  startFunnel(funnelName: string, properties?: EventProperties): void;
  /** Records the next step of `funnelName`, numbered after the last one. */
  advanceFunnel(funnelName: string, stepName: string, properties?: EventProperties): void;
  /** Marks `funnelName` completed. */
  completeFunnel(funnelName: string, properties?: EventProperties): void;
  /** Marks `funnelName` abandoned, with an optional reason. */
  abandonFunnel(funnelName: string, reason?: string, properties?: EventProperties): void;
  /** A copy of the funnel's state, or undefined for a funnel never started. */
  getFunnelState(funnelName: string): FunnelState | undefined;
}

/** Most funnels remembered; the least recently started is forgotten first. */
const MAX_FUNNELS = 100;

/** Creates the funnel operations over `send(eventName, properties)`. */
export function createFunnels(send: (event: string, properties: EventProperties) => void, now: () => number): FunnelOperations {
  const funnels = new Map<string, FunnelState>();

  function begin(name: string): FunnelState {
    const state: FunnelState = { name, status: 'active', startedAt: now(), steps: [], currentStepIndex: -1 };
    funnels.delete(name);
    funnels.set(name, state);
    if (funnels.size > MAX_FUNNELS) funnels.delete(funnels.keys().next().value!);
    return state;
  }

  function step(name: string, stepName: string, index: number, properties: EventProperties | undefined): void {
    let state = funnels.get(name);
    if (state === undefined || state.status !== 'active') state = begin(name);
    state.steps.push({ name: stepName, index, timestamp: now() });
    state.currentStepIndex = index;
    send('funnel_step', { ...properties, funnel: name, step: stepName, step_index: index });
  }

  function end(name: string, status: 'completed' | 'abandoned', reason?: string): FunnelState {
    const state = funnels.get(name) ?? begin(name);
    state.status = status;
    state.endedAt = now();
    if (reason !== undefined) state.abandonReason = reason;
    return state;
  }

  return {
    trackFunnelStep(funnelName, stepName, stepIndex, properties) {
      step(String(funnelName), String(stepName), Number(stepIndex), properties);
    },
    startFunnel(funnelName, properties) {
      const name = String(funnelName);
      begin(name);
      send('funnel_started', { ...properties, funnel: name });
    },
    advanceFunnel(funnelName, stepName, properties) {
      const name = String(funnelName);
      const state = funnels.get(name);
      const index = state === undefined || state.status !== 'active' ? 0 : state.currentStepIndex + 1;
      step(name, String(stepName), index, properties);
    },
    completeFunnel(funnelName, properties) {
      const name = String(funnelName);
      const state = end(name, 'completed');
      send('funnel_completed', {
        ...properties,
        funnel: name,
        steps: state.steps.length,
        duration_ms: (state.endedAt ?? state.startedAt) - state.startedAt,
      });
    },
    abandonFunnel(funnelName, reason, properties) {
      const name = String(funnelName);
      const state = end(name, 'abandoned', reason);
      const last = state.steps.at(-1);
      send('funnel_abandoned', {
        ...properties,
        funnel: name,
        reason,
        last_step: last?.name,
        last_step_index: last?.index,
        duration_ms: (state.endedAt ?? state.startedAt) - state.startedAt,
      });
    },
    getFunnelState(funnelName) {
      const state = funnels.get(String(funnelName));
      return state === undefined ? undefined : { ...state, steps: state.steps.map((s) => ({ ...s })) };
    },
  };
}
