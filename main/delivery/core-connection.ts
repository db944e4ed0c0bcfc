/**
 * The client's connection to a delivery core (docs/architecture.md, "The worker boundary"): starts
 * it through the strategies in order (docs/decisions.md, "In-process fallback when a worker cannot
 * start": the `workerUrl` option, the worker file shipped beside the library, an inline worker from
 * a Blob URL, the same core in-process); a worker that dies is restarted once with its
 * unacknowledged events replayed under their own numbers, and after that the core runs in-process.
 * Each start is a generation: whatever a replaced core still says or does is ignored. The host app
 * never sees any of it.
 *
 * A chunk of its own, with the links, comlink and the deferred request: the client loads it in the
 * task after the one that created it (`delivery-client.ts`), so the facade's bundle stays small and
 * capture does not wait for it (events are buffered meanwhile).
 */
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { FromWorkerMessage } from '../../protocol/worker/worker-contract.js';
import { type DeferredRequest, createDeferredRequest } from '../unload/deferred-request.js';
import { type DeliveryLink, type LinkHandlers, startInProcessLink, startWorkerLink } from './delivery-link.js';
import type { DeliveryClientOptions } from './delivery-options.js';
import type { StartStrategy, WorkerFactory, WorkerLike } from './transport-options.js';
import { liveColumns } from './log-columns.js';

// The unload path's sender comes in this chunk too (unload-path.ts): a client whose core has
// started has its beacon sender, whatever order the browser loads chunks in (docs/decisions.md,
// "Start-up").
export { beaconFromPageHide } from '../unload/beacon.js';

/**
 * How the core runs now: `starting` until a strategy succeeded, `off` when none did; `held` while
 * consent is pending or denied (no core started, nothing sent).
 */
export type DeliveryMode = 'held' | 'starting' | 'worker' | 'in-process' | 'off';

/** What the connection tells the client. */
export interface CoreHooks {
  /** A data-plane message of the running core. */
  receive(message: FromWorkerMessage): void;
  /**
   * The core died: the posted events still unsettled, as `read` gives them (null: none), for the
   * next core to be given first.
   */
  restarting(read: typeof liveColumns): EventColumns | null;
  /**
   * A start is over, never called before {@link connect} returns: with the running core (what
   * waited for it is posted then), or undefined when none could start (nothing will take the
   * buffer, which drops its oldest then).
   */
  started(link: DeliveryLink | undefined): void;
}

/** The connection; create one with {@link connect}. */
export interface CoreConnection {
  mode(): DeliveryMode;
  /** The running core, after any start or restart in progress; undefined when none runs. */
  ready(): Promise<DeliveryLink | undefined>;
  /** Settles once the first start is over, whether a core started or none could. */
  started(): Promise<void>;
  /** The strategy that started the running core. */
  strategy(): StartStrategy | null;
  /** Restarts after a worker died. */
  restarts(): number;
  /** The device's time zone as a core read it (the facade reads none: page-context.ts). */
  timezone(): string | undefined;
  /** Starts no core any more, and lets the running one send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** Connects a client and starts its core (a held client connects at its release: `delivery-client.ts`). */
export function connect(options: DeliveryClientOptions, hooks: CoreHooks): CoreConnection {
  const { logger } = options;
  let link: DeliveryLink | undefined;
  let strategy: StartStrategy | null = null;
  let timezone: string | undefined;
  let state: DeliveryMode = 'starting';
  let generation = 0;
  let restarts = 0;
  let closed = false;
  let deferred: DeferredRequest | undefined;
  let starting = start(options.strategies, null);
  const firstStart = starting.then(
    () => undefined,
    () => undefined,
  );

  /**
   * The client's deferred request (`fetchLater`, or a body held for the pagehide beacon where the
   * page has none), shared by its successive workers so that a restarted worker's first body
   * replaces what the one before armed.
   */
  function deferredRequest(): DeferredRequest {
    const scope = globalThis as { fetchLater?: (url: string, init: RequestInit) => unknown };
    return (deferred ??= createDeferredRequest(
      typeof scope.fetchLater === 'function' ? (url, init) => scope.fetchLater!(url, init) : undefined,
      (message, detail) => logger.debug(message, detail),
      typeof window === 'undefined' ? undefined : window,
    ));
  }

  /**
   * Tries `strategies` in order, each core given `columns` first (a replay); resolves the running
   * link, or undefined when none started.
   * Failures are invisible to the host app: one debug message names them, and the CSP directive
   * when the core ends up in-process.
   */
  async function start(strategies: readonly StartStrategy[], columns: EventColumns | null): Promise<DeliveryLink | undefined> {
    const gen = generation;
    // False once no core is wanted from this start: shut down, or replaced by a restart.
    const current = (): boolean => !closed && gen === generation;
    const handlers: LinkHandlers = {
      // A core that was replaced says nothing more to the client.
      onMessage: (message) => void (gen === generation && hooks.receive(message)),
      onDeath: (reason) => onDeath(gen, reason),
    };
    const attempt = async (s: StartStrategy): Promise<DeliveryLink> => {
      if (s === 'in-process') {
        // After a worker's death the core runs here: what that worker armed is aborted, so that a
        // later clearQueue() or shutdown() has nothing left to abort (the pagehide beacon sends those
        // events). The in-process core builds no body: that would be main-thread work.
        deferred?.disarm();
        return startInProcessLink(options.config, options.coreDeps, columns, handlers);
      }
      // A worker builds the bodies of the deferred request (`deferredUnload`), armed with
      // `fetchLater` or held for the pagehide beacon.
      const request = deferredRequest();
      const createWorker = options.createWorker ?? defaultCreateWorker;
      const inWorker = (create: () => WorkerLike): Promise<DeliveryLink> =>
        startWorkerLink({ ...options, config: { ...options.config, deferredUnload: true }, create, replay: columns, handlers, deferred: request });
      if (s === 'worker-url') {
        const url = options.workerUrl;
        if (url === undefined || url === '') throw new Error('no workerUrl option');
        return inWorker(() => createWorker(url, { type: 'module' }));
      }
      // The build puts worker.js beside the facade's files; bundlers that understand
      // `new URL(…, import.meta.url)` copy it. The worker is a self-contained script, so it runs
      // as a module or a classic worker.
      if (s === 'shipped-worker') return inWorker(() => createWorker(new URL('./worker.js', import.meta.url), { type: 'module' }));
      const { WORKER_SOURCE } = await import('./inline-worker-source.js');
      if (WORKER_SOURCE === null) throw new Error('this build carries no inline worker');
      const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' }));
      try {
        return await inWorker(() => createWorker(url, {}));
      } finally {
        // The worker has fetched its script once it answered (or failed); the URL is not needed.
        URL.revokeObjectURL(url);
      }
    };
    const failures: string[] = [];
    for (const s of strategies) {
      if (!current()) return undefined;
      let started: DeliveryLink;
      try {
        started = await attempt(s);
      } catch (error) {
        failures.push(`${s}: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      if (failures.length > 0) {
        logger.debug(
          s === 'in-process'
            ? `No Web Worker could start (${failures.join('; ')}), so analytics runs on the main thread. ` +
                "If a Content-Security-Policy blocks it, allow the worker in `worker-src` (e.g. `worker-src 'self' blob:`), or set `workerUrl`."
            : `started with ${s} after: ${failures.join('; ')}`,
        );
      }
      logger.debug(`delivery core started (${s})`);
      if (!current()) return void started.close();
      link = started;
      timezone = started.timezone ?? timezone;
      strategy = s;
      state = started.mode;
      hooks.started(started);
      return started;
    }
    logger.warn(`the delivery core could not start (${failures.join('; ')}); events are kept in memory and sent by beacon when the page is hidden`);
    if (!current()) return undefined;
    state = 'off';
    hooks.started(undefined);
    return undefined;
  }

  function onDeath(gen: number, reason: string): void {
    if (gen !== generation || closed) return;
    generation++;
    link?.close();
    link = undefined;
    restarts++;
    state = 'starting';
    // Nothing was posted since the death (no link): the replay is every posted event unsettled.
    const replay = hooks.restarting(liveColumns);
    const next: StartStrategy[] = restarts === 1 && strategy !== null && strategy !== 'in-process' ? [strategy, 'in-process'] : ['in-process'];
    logger.debug(`${reason}; restarting (${next.join(' → ')}) and its unacknowledged events`);
    starting = start(next, replay);
  }

  return {
    async ready() {
      while (link === undefined && !closed) {
        const pending = starting;
        const started = await pending;
        if (started !== undefined || pending === starting) return started ?? link;
      }
      return link;
    },

    mode: () => state,
    started: () => firstStart,
    strategy: () => strategy,
    restarts: () => restarts,
    timezone: () => timezone,

    async shutdown(timeoutMs) {
      if (closed) return;
      const current = link;
      closed = true;
      generation++;
      link = undefined;
      state = 'off';
      if (current !== undefined) await current.shutdown(timeoutMs).catch(() => undefined);
    },
  };
}

/** `new Worker(url, options)`, looked up when called; throws where there is no Worker. */
const defaultCreateWorker: WorkerFactory = (url, options) => {
  if (typeof Worker === 'undefined') throw new Error('this environment has no Web Worker');
  return new Worker(url, options);
};
