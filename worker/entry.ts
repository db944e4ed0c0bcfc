/**
 * The worker script: exposes {@link WorkerApi} through comlink on the worker global. Everything
 * else lives in `worker-api.ts`, so tests import that without this module's side effect.
 */
import type { Endpoint } from 'comlink';
import { exposeWorkerApi } from './worker-api.js';

export { exposeWorkerApi } from './worker-api.js';
export type { WorkerApi } from '../protocol/worker/worker-contract.js';

const scope = globalThis as typeof globalThis & { WorkerGlobalScope?: abstract new () => object };

// Only inside a worker: importing this file anywhere else (SSR, tests, a bundler's analysis)
// must not grab `globalThis`'s message events.
if (typeof scope.WorkerGlobalScope === 'function' && globalThis instanceof scope.WorkerGlobalScope) {
  exposeWorkerApi(globalThis as unknown as Endpoint);
}
