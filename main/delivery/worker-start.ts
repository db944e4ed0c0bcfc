/**
 * Starting the delivery core, one strategy at a time, in the order of docs/decisions.md,
 * "In-process fallback when a worker cannot start": the `workerUrl` option, the worker file shipped
 * beside the library, an inline worker from a Blob URL, the same core in-process. Each returns a
 * running {@link DeliveryLink} or rejects with the reason.
 */
import type { CoreDeps } from '../../protocol/worker/core-deps.js';
import type { DeliveryConfig } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { DeliveryLink, LinkHandlers } from './delivery-link.js';
import type { Timers } from '../../protocol/worker/timers.js';
import type { Logger } from '../logger.js';
import { startInProcessLink } from './in-process-link.js';
import { type DeferredRequest, createDeferredRequest } from '../unload/deferred-request.js';
import type { StartStrategy, WorkerFactory } from './transport-options.js';
import { startWorkerLink } from './worker-link.js';

// A restart replays the client's unacknowledged events: read out of its log here, so the code
// that does it stays out of the facade's bundle.
export { liveColumns } from './log-columns.js';
// The unload path's sender comes in this chunk too (unload-path.ts): a client whose core has
// started has its beacon sender, whatever order the browser loads chunks in (docs/decisions.md,
// "Start-up").
export { beaconFromPageHide } from '../unload/beacon.js';

/** What every start needs. */
export interface StartContext {
  config: DeliveryConfig;
  workerUrl: string | URL | undefined;
  /** @default `new Worker(url, options)` */
  createWorker: WorkerFactory | undefined;
  coreDeps: Partial<CoreDeps> | undefined;
  timers: Timers;
  startTimeoutMs: number;
  controlTimeoutMs: number;
  flushTimeoutMs: number;
}

/**
 * Each client's deferred request (`fetchLater`), shared by its successive cores, so that a
 * restarted worker's first body replaces what the one before armed. Keyed by the client's context.
 */
const deferredRequests = new WeakMap<StartContext, DeferredRequest>();

/** The client's deferred request: armed by `fetchLater`, or held for the pagehide beacon where the page has none. */
function deferredRequestOf(context: StartContext, logger: Logger | undefined): DeferredRequest {
  const scope = globalThis as { fetchLater?: (url: string, init: RequestInit) => unknown };
  let request = deferredRequests.get(context);
  if (request === undefined) {
    request = createDeferredRequest(
      typeof scope.fetchLater === 'function' ? (url, init) => scope.fetchLater!(url, init) : undefined,
      (message, detail) => logger?.debug(message, detail),
      typeof window === 'undefined' ? undefined : window,
    );
    deferredRequests.set(context, request);
  }
  return request;
}

/** `new Worker(url, options)`, looked up when called; throws where there is no Worker. */
export const defaultCreateWorker: WorkerFactory = (url, options) => {
  if (typeof Worker === 'undefined') throw new Error('this environment has no Web Worker');
  return new Worker(url, options);
};

/**
 * Starts the core with one strategy. A worker is told to build bodies for the deferred request
 * (`deferredUnload`), armed with `fetchLater` or held for the pagehide beacon; the in-process core
 * never is: that would be main-thread work.
 */
export async function startWith(
  strategy: StartStrategy,
  context: StartContext,
  replay: EventColumns | null,
  handlers: LinkHandlers,
  logger?: Logger,
): Promise<DeliveryLink> {
  const createWorker = context.createWorker ?? defaultCreateWorker;
  const deferred = strategy === 'in-process' ? undefined : deferredRequestOf(context, logger);
  // After a worker's death the core runs here: what that worker had armed is aborted, so a later
  // clearQueue() or shutdown() has nothing left to abort (the pagehide beacon sends those events).
  if (strategy === 'in-process') deferredRequests.get(context)?.disarm();
  const worker = (create: () => ReturnType<WorkerFactory>) =>
    startWorkerLink({
      create,
      config: deferred === undefined ? context.config : { ...context.config, deferredUnload: true },
      deferred,
      replay,
      handlers,
      timers: context.timers,
      startTimeoutMs: context.startTimeoutMs,
      controlTimeoutMs: context.controlTimeoutMs,
      flushTimeoutMs: context.flushTimeoutMs,
    });

  switch (strategy) {
    case 'worker-url': {
      const url = context.workerUrl;
      if (url === undefined || url === '') throw new Error('no workerUrl option');
      return worker(() => createWorker(url, { type: 'module' }));
    }
    case 'shipped-worker':
      // The build puts worker.js beside the facade's files; bundlers that understand
      // `new URL(…, import.meta.url)` copy it. The worker is a self-contained script, so it runs
      // as a module or a classic worker.
      return worker(() => createWorker(new URL('./worker.js', import.meta.url), { type: 'module' }));
    case 'inline-worker': {
      const { WORKER_SOURCE } = await import('./inline-worker-source.js');
      if (WORKER_SOURCE === null) throw new Error('this build carries no inline worker');
      const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
      try {
        return await worker(() => createWorker(url, {}));
      } finally {
        // The worker has fetched its script once it answered (or failed); the URL is not needed.
        URL.revokeObjectURL(url);
      }
    }
    case 'in-process':
      return startInProcessLink(context.config, context.coreDeps, replay, handlers);
  }
}

/**
 * Tries `strategies` in order and resolves the first that starts, or undefined when none did.
 * Failures are invisible to the host app: one debug message names them, and the CSP directive
 * when the core ends up in-process.
 * @param current false once the caller no longer wants a core (shut down, or replaced).
 */
export async function startFirst(
  strategies: readonly StartStrategy[],
  context: StartContext,
  replay: EventColumns | null,
  handlers: LinkHandlers,
  current: () => boolean,
  logger: Logger,
): Promise<{ link: DeliveryLink; strategy: StartStrategy } | undefined> {
  const failures: string[] = [];
  for (const strategy of strategies) {
    if (!current()) return undefined;
    try {
      const link = await startWith(strategy, context, replay, handlers, logger);
      if (failures.length > 0) {
        logger.debug(
          strategy === 'in-process'
            ? `No Web Worker could start (${failures.join('; ')}), so analytics runs on the main thread. ` +
                "If a Content-Security-Policy blocks it, allow the worker in `worker-src` (e.g. `worker-src 'self' blob:`), or set `workerUrl`."
            : `started with ${strategy} after: ${failures.join('; ')}`,
        );
      }
      logger.debug(`delivery core started (${strategy})`);
      return { link, strategy };
    } catch (error) {
      failures.push(`${strategy}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  logger.warn(`the delivery core could not start (${failures.join('; ')}); events are kept in memory and sent by beacon when the page is hidden`);
  return undefined;
}
