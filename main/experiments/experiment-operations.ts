/**
 * Experiment operations on the main thread, forwarding (`deferred-module.ts`) to `experiments.ts`,
 * a chunk loaded when the client starts with `enableABTesting` on (it stays out of the
 * main-thread bundle, which has a budget). With `enableABTesting` off nothing is loaded, read,
 * stored or sent, and the operations answer null, false and [].
 *
 * Until the chunk has arrived (normally within the first moments of the page), the reads answer
 * their fallbacks (`operation-fallbacks.ts`: `getVariant()` null, `isInVariant()` false,
 * `getExperimentAssignments()` []), and no exposure is
 * sent: render the default experience for null, as for a user outside the experiment. A `reset()`
 * made meanwhile is applied when it arrives.
 */
import { createDeferredModule } from '../deferred-module.js';
import { fallbacksOf } from '../operation-fallbacks.js';
import type { Experiments, ExperimentsOptions } from './experiments.js';

/** Starts loading the experiments chunk when `enabled`, and returns the operations. */
export function createExperimentOperations(enabled: boolean, options: ExperimentsOptions): Experiments {
  return createDeferredModule<Experiments>({
    load: enabled ? () => import('./experiments.js').then(({ createExperiments }) => createExperiments(options)) : undefined,
    calls: ['forget', 'stop'],
    reads: fallbacksOf('getVariant', 'isInVariant', 'getExperimentAssignments'),
    now: options.now,
    log: options.log,
    name: 'experiments',
  }).operations;
}
