/**
 * The client's connection to a delivery core (docs/architecture.md, "The worker boundary"): starts
 * it in the task after the one that created the client, through the strategies in order
 * (`worker-start.ts`, a chunk of its own); a worker that dies is restarted once with its
 * unacknowledged events replayed under their own numbers, and after that the core runs
 * in-process. Each start is a generation: whatever a replaced core still says or does is ignored.
 * The host app never sees any of it.
 */
import type { FromWorkerMessage } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { LogChunk } from './unacked-log.js';
import type { DeliveryClient, DeliveryClientOptions, DeliveryMode } from './delivery-client.js';
import type { DeliveryLink } from './delivery-link.js';
import type { StartStrategy } from './transport-options.js';
import { nextTask } from '../next-task.js';

/** The supervisor; create one with {@link createCoreSupervisor}. */
export interface CoreSupervisor extends Pick<DeliveryClient, 'mode' | 'started'> {
  /** The running core: undefined while one starts, when none could, and after shutdown. */
  link(): DeliveryLink | undefined;
  /** The running core, after any start or restart in progress. */
  ready(): Promise<DeliveryLink | undefined>;
  /** The strategy that started the running core. */
  strategy(): StartStrategy | null;
  /** Restarts after a worker died. */
  restarts(): number;
  /** The device's time zone as a core read it (the facade reads none: page-context.ts). */
  timezone(): string | undefined;
  /** Starts the core of a client created held (consent pending); does nothing otherwise. */
  release(): void;
  /** Starts no core any more, and lets the running one send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** What the supervisor tells the client. */
export interface CoreHooks {
  /** A data-plane message of the running core. */
  receive(message: FromWorkerMessage): void;
  /** The core died: the posted events still unsettled, for the next core to replay. */
  restarting(): readonly LogChunk[];
  /** The next core is given `columns` first (the replay, read out of those chunks). */
  replaying(columns: EventColumns): void;
  /**
   * A start is over, never called before {@link createCoreSupervisor} returns: with true once a
   * core runs (what waited for it is posted then), with false when none could start (nothing will
   * take the buffer and drop its oldest then).
   */
  started(running: boolean): void;
}

/**
 * Creates the supervisor and starts the core in the next task, or, with `options.held`, at
 * `release()`: a held client starts no worker and sends nothing (consent pending), and its first
 * start counts as over at once, so that work waiting for it (`started()`) does not wait for consent.
 */
export function createCoreSupervisor(options: DeliveryClientOptions, hooks: CoreHooks): CoreSupervisor {
  const { context, logger } = options;
  let link: DeliveryLink | undefined;
  let strategy: StartStrategy | null = null;
  let timezone: string | undefined;
  let state: DeliveryMode = options.held === true ? 'held' : 'starting';
  let generation = 0;
  let restarts = 0;
  let closed = false;

  // The first start waits for the next task: its synchronous part (the page's first dynamic
  // import, `new Worker`) costs the main thread milliseconds that do not belong in the task that
  // called createAnalytics(), where the app is starting too (docs/decisions.md, "Start-up").
  let starting =
    state === 'held'
      ? Promise.resolve(undefined)
      : nextTask((resolve) => context.timers.setTimeout(resolve, 0)).then(() => start(options.strategies, []));
  const firstStart = starting.then(
    () => undefined,
    () => undefined,
  );

  /** Tries `strategies` in order; resolves the running link, or undefined when none started. */
  async function start(strategies: readonly StartStrategy[], replay: readonly LogChunk[]): Promise<DeliveryLink | undefined> {
    const gen = generation;
    const current = (): boolean => !closed && gen === generation;
    const handlers = {
      // A core that was replaced says nothing more to the client.
      onMessage: (message: FromWorkerMessage) => gen === generation && hooks.receive(message),
      onDeath: (reason: string) => onDeath(gen, reason),
    };
    let started: Awaited<ReturnType<typeof import('./worker-start.js').startFirst>>;
    try {
      // The start machinery (comlink, worker and in-process links) is its own chunk: the facade's
      // bundle stays small, and capture does not wait for it (events are buffered meanwhile).
      const { startFirst, liveColumns } = await import('./worker-start.js');
      let columns: EventColumns | null = null;
      if (replay.length > 0 && current()) {
        // Nothing was posted since the death (no link): the replay is every posted event unsettled.
        columns = liveColumns(replay);
        hooks.replaying(columns);
      }
      started = await startFirst(strategies, context, columns, handlers, current, logger);
    } catch (error) {
      logger.warn('cannot load the delivery core; events are sent by beacon when the page is hidden', error);
    }
    if (!current()) {
      started?.link.close();
      return undefined;
    }
    if (started === undefined) {
      state = 'off';
      hooks.started(false);
      return undefined;
    }
    link = started.link;
    timezone = link.timezone ?? timezone;
    strategy = started.strategy;
    state = link.mode;
    hooks.started(true);
    return link;
  }

  function onDeath(gen: number, reason: string): void {
    if (gen !== generation || closed) return;
    generation++;
    link?.close();
    link = undefined;
    restarts++;
    state = 'starting';
    const replay = hooks.restarting();
    const next: StartStrategy[] = restarts === 1 && strategy !== null && strategy !== 'in-process' ? [strategy, 'in-process'] : ['in-process'];
    logger.debug(`${reason}; restarting (${next.join(' → ')}) and its unacknowledged events`);
    starting = start(next, replay);
  }

  return {
    link: () => link,

    async ready() {
      while (link === undefined && !closed) {
        const pending = starting;
        const started = await pending;
        if (started !== undefined || pending === starting) return started ?? link;
      }
      return link;
    },

    release() {
      if (state !== 'held' || closed) return;
      state = 'starting';
      starting = start(options.strategies, []);
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
