/**
 * Funnels: one small state machine per funnel name, and the `funnel_*` events (docs/decisions.md,
 * "Wire mapping of every client call"). State lives in memory for the life of the page. Part of the
 * lazily loaded `business-module.ts` chunk (the main thread forwards to it,
 * `business-operations.ts`).
 *
 * Events (each beside the call's own properties; ours win on a clash):
 * - `funnel_started` {funnel}
 * - `funnel_step` {funnel, step, step_index, ms_since_start, ms_since_previous}
 * - `funnel_completed` {funnel, steps, last_step, duration_ms}
 * - `funnel_abandoned` {funnel, reason, last_step, last_step_index, duration_ms}
 *
 * Transitions (`started` is the only state that accepts steps):
 *
 * | State | Call | Result |
 * |---|---|---|
 * | none, completed, abandoned | startFunnel | started (`funnel_started`) |
 * | started | startFunnel | the running funnel is abandoned with reason `restarted`, then started again |
 * | started | advanceFunnel | step at `currentStepIndex + 1` (`funnel_step`) |
 * | none, completed, abandoned | trackFunnelStep | started, then the step (`funnel_started`, `funnel_step`) |
 * | started | trackFunnelStep | step at the given index; any order (going back a step is allowed) |
 * | started | completeFunnel | completed (`funnel_completed`) |
 * | started | abandonFunnel | abandoned (`funnel_abandoned`) |
 *
 * Every other call is invalid: `advanceFunnel`, `completeFunnel` or `abandonFunnel` on a funnel that
 * is not `started` (never started, completed twice, abandoned after completion…), an empty funnel or
 * step name, a step index that is not a non-negative integer. An invalid call sends nothing, leaves
 * the state as it was, never throws, and says why in the debug log.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { Logger } from '../logger.js';

/** Where a funnel is: only a `started` funnel accepts steps. */
export type FunnelStatus = 'started' | 'completed' | 'abandoned';

/** One step reached in a funnel. */
export interface FunnelStep {
  /** The step's name. */
  name: string;
  /** Its index (0 for the first step of `advanceFunnel`). */
  index: number;
  /** When the step was reached (ms since the epoch). */
  timestamp: number;
}

/** The state of one funnel, returned by `getFunnelState()` (its fields are this library's choice). */
export interface FunnelState {
  /** The funnel's name. */
  name: string;
  status: FunnelStatus;
  /** When the funnel (this run of it) started, ms since the epoch. */
  startedAt: number;
  /** Steps reached in this run, in call order. */
  steps: FunnelStep[];
  /** Name of the last step reached; null before the first step. */
  currentStep: string | null;
  /** Index of the last step reached; -1 before the first step. */
  currentStepIndex: number;
  /** When the funnel was completed (ms), once completed. */
  completedAt?: number;
  /** When the funnel was abandoned (ms), once abandoned. */
  abandonedAt?: number;
  /** The reason given to `abandonFunnel` (`restarted` when a running funnel was started again). */
  abandonReason?: string;
}

/** Funnel operations of the client. */
export interface FunnelOperations {
  /**
   * Records step `stepName` at `stepIndex` (a non-negative integer) of `funnelName`, starting the
   * funnel first when it is not running.
   */
  trackFunnelStep(funnelName: string, stepName: string, stepIndex: number, properties?: EventProperties): void;
  /** Starts `funnelName`; a running one is abandoned (reason `restarted`) and started again. */
  startFunnel(funnelName: string, properties?: EventProperties): void;
  /** Records the next step of a started funnel, at the index after the last one (0 first). */
  advanceFunnel(funnelName: string, stepName: string, properties?: EventProperties): void;
  /** Completes a started funnel. */
  completeFunnel(funnelName: string, properties?: EventProperties): void;
  /** Abandons a started funnel, with an optional reason. */
  abandonFunnel(funnelName: string, reason?: string, properties?: EventProperties): void;
  /**
   * A copy of the funnel's state, or undefined for a funnel never started on this page (and until
   * the lazily loaded funnels module has arrived, see `business-operations.ts`).
   */
  getFunnelState(funnelName: string): FunnelState | undefined;
}

/** Most funnels remembered; the least recently started is forgotten first. */
const MAX_FUNNELS = 100;

/** Creates the funnel operations over `send(eventName, properties)`. */
export function createFunnels(
  send: (event: string, properties: EventProperties) => void,
  now: () => number,
  log: Logger,
): FunnelOperations {
  const funnels = new Map<string, FunnelState>();

  /** The running funnel `name`, or undefined (logged) when the call is invalid. */
  function running(op: string, name: unknown, start?: boolean): FunnelState | undefined {
    if (typeof name !== 'string' || name === '') return void log.debug(`${op}() needs a funnel name; ignored`);
    const state = funnels.get(name);
    if (state?.status === 'started') return state;
    if (start) return begin(name, undefined);
    log.debug(`${op}("${name}"): the funnel is ${state?.status ?? 'not started'}; ignored`);
  }

  function begin(name: string, properties: EventProperties | undefined): FunnelState {
    const state: FunnelState = { name, status: 'started', startedAt: now(), steps: [], currentStep: null, currentStepIndex: -1 };
    funnels.delete(name);
    funnels.set(name, state);
    if (funnels.size > MAX_FUNNELS) funnels.delete(funnels.keys().next().value!);
    send('funnel_started', { ...properties, funnel: name });
    return state;
  }

  function step(state: FunnelState, name: unknown, index: number, properties: EventProperties | undefined): void {
    const time = now();
    const previous = state.steps.at(-1)?.timestamp ?? state.startedAt;
    state.steps.push({ name: name as string, index, timestamp: time });
    state.currentStep = name as string;
    state.currentStepIndex = index;
    send('funnel_step', {
      ...properties,
      funnel: state.name,
      step: name as string,
      step_index: index,
      ms_since_start: time - state.startedAt,
      ms_since_previous: time - previous,
    });
  }

  function abandon(state: FunnelState, reason: string | undefined, properties: EventProperties | undefined): void {
    state.status = 'abandoned';
    state.abandonedAt = now();
    state.abandonReason = reason;
    send('funnel_abandoned', {
      ...properties,
      funnel: state.name,
      reason,
      last_step: state.currentStep ?? undefined,
      last_step_index: state.steps.length > 0 ? state.currentStepIndex : undefined,
      duration_ms: state.abandonedAt - state.startedAt,
    });
  }

  const badStep = (op: string, stepName: unknown): boolean =>
    typeof stepName !== 'string' || stepName === '' ? (log.debug(`${op}() needs a step name; ignored`), true) : false;

  return {
    trackFunnelStep(funnelName, stepName, stepIndex, properties) {
      if (badStep('trackFunnelStep', stepName)) return;
      if (!Number.isSafeInteger(stepIndex) || stepIndex < 0) {
        return log.debug(`trackFunnelStep(): the step index must be a non-negative integer, not ${String(stepIndex)}; ignored`);
      }
      const state = running('trackFunnelStep', funnelName, true);
      if (state !== undefined) step(state, stepName, stepIndex, properties);
    },
    startFunnel(funnelName, properties) {
      if (typeof funnelName !== 'string' || funnelName === '') return log.debug('startFunnel() needs a funnel name; ignored');
      const state = funnels.get(funnelName);
      if (state?.status === 'started') abandon(state, 'restarted', undefined);
      begin(funnelName, properties);
    },
    advanceFunnel(funnelName, stepName, properties) {
      if (badStep('advanceFunnel', stepName)) return;
      const state = running('advanceFunnel', funnelName);
      if (state !== undefined) step(state, stepName, state.currentStepIndex + 1, properties);
    },
    completeFunnel(funnelName, properties) {
      const state = running('completeFunnel', funnelName);
      if (state === undefined) return;
      state.status = 'completed';
      state.completedAt = now();
      send('funnel_completed', {
        ...properties,
        funnel: state.name,
        steps: state.steps.length,
        last_step: state.currentStep ?? undefined,
        duration_ms: state.completedAt - state.startedAt,
      });
    },
    abandonFunnel(funnelName, reason, properties) {
      const state = running('abandonFunnel', funnelName);
      if (state !== undefined) abandon(state, reason === undefined || reason === null ? undefined : String(reason), properties);
    },
    getFunnelState(funnelName) {
      const state = funnels.get(funnelName);
      return state === undefined ? undefined : { ...state, steps: state.steps.map((s) => ({ ...s })) };
    },
  };
}
