/**
 * One started delivery core as the facade talks to it (docs/architecture.md, "The worker
 * boundary"): a Web Worker, control plane through comlink (`WorkerApi`), data plane through a
 * transferred `MessagePort`; or the same core on the main thread, the fallback when no worker can
 * start (CSP, old browsers, a worker that died twice) and the path of tests. A worker's start fails
 * on a synchronous throw, an `error` event, a rejected `init`, a protocol mismatch or no handshake
 * within the timeout; later, an `error` event or a control call that times out counts as death.
 * Both are in the lazily loaded chunk that starts the core (`core-connection.ts`).
 */
import { type Endpoint, transfer, wrap } from 'comlink';
import { WORKER_PROTOCOL_VERSION } from '../../protocol/worker/protocol-version.js';
import type { CoreDeps } from '../../protocol/worker/core-deps.js';
import type { DeliveryConfig, FlushResult, FromWorkerMessage, QueueStats, ToWorkerMessage, WorkerApi } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import { AnalyticsError } from '../errors.js';
import type { DeferredRequest } from '../unload/deferred-request.js';
import type { DeliveryClientOptions } from './delivery-options.js';
import type { WorkerLike } from './transport-options.js';
import { liveColumns } from './log-columns.js';

/** A running delivery core. */
export interface DeliveryLink {
  readonly mode: 'worker' | 'in-process';
  /**
   * Posts one data-plane message (one structured clone for a worker). For events, returns the
   * indices of those that could not be posted (a property structured clone refuses): the rest went
   * in parts.
   */
  post(message: ToWorkerMessage): number[];
  /**
   * `flush(upTo)` of the core. Rejects only when the core is gone (the facade then replays and
   * retries); a slow but live worker answers `{ ok: false, code: 'TIMEOUT' }`.
   */
  flush(upTo: number): Promise<FlushResult>;
  clear(): Promise<void>;
  stats(): Promise<QueueStats>;
  /** Lets the core send what it can within `timeoutMs`, then stops it. */
  shutdown(timeoutMs: number): Promise<void>;
  /** Stops at once (terminates a worker). */
  close(): void;
  /** The time zone the core adds to events, for the facade's beacons (`WorkerHello.timezone`). */
  readonly timezone: string | undefined;
}

/** What a link reports to the facade. */
export interface LinkHandlers {
  /** A data-plane message from the core. */
  onMessage(message: FromWorkerMessage): void;
  /** The core died after a successful start (error event, or a control call timed out). */
  onDeath(reason: string): void;
}

/** Options of {@link startWorkerLink}: the start's timeouts and timers, and what this start is given. */
export interface WorkerLinkOptions extends Pick<DeliveryClientOptions, 'config' | 'timers' | 'startTimeoutMs' | 'controlTimeoutMs' | 'flushTimeoutMs'> {
  /** Constructs the worker; may throw (CSP, no Worker, bad URL). */
  create: () => WorkerLike;
  /** Unacknowledged events of a worker that died, queued first under their own numbers. */
  replay: EventColumns | null;
  handlers: LinkHandlers;
  /** Arms the bodies the core posts for the deferred request (`config.deferredUnload`). */
  deferred: DeferredRequest;
}

const TIMED_OUT: unique symbol = Symbol('timed out');

/** Starts a worker and resolves once it answered `init`; rejects with the reason it could not. */
export async function startWorkerLink(options: WorkerLinkOptions): Promise<DeliveryLink> {
  const { handlers, timers } = options;
  const worker = options.create();
  const channel = new MessageChannel();
  let started = false;
  let alive = true;
  /** The calls waiting for an answer, `init` included: each is rejected when the worker dies. */
  const deathListeners = new Set<(error: Error) => void>();

  const onError = (event: Event): void =>
    die(`worker error event: ${(event as Partial<ErrorEvent>).message || 'the worker script failed to load or threw'}`);
  worker.addEventListener('error', onError);
  channel.port1.onmessage = (event: MessageEvent<FromWorkerMessage>) => {
    if (!alive) return;
    const message = event.data;
    // The deferred request is armed here; the client hears which events it carries, if any.
    const heard = message.t === 'deferred-arm' || message.t === 'deferred-disarm' ? options.deferred.receive(message) : message;
    if (heard !== undefined) handlers.onMessage(heard);
  };

  /**
   * Events `from` … `to − 1` of a post that threw (DataCloneError), in halves, and their halves,
   * down to the events that cannot be posted, whose indices go to `failed`. O(n log n) even for one
   * bad event in a large burst.
   */
  function postInParts(columns: EventColumns, from: number, to: number, failed: number[]): void {
    if (to - from === 1) return void failed.push(from);
    const half = (from + to) >> 1;
    for (const [a, b] of [
      [from, half],
      [half, to],
    ] as const) {
      try {
        // Events a … b − 1: the others count as settled.
        const part = liveColumns([{ columns, settled: [0, a, b, to], done: 0 }]);
        channel.port1.postMessage({ t: 'event-columns', columns: part } satisfies ToWorkerMessage);
      } catch {
        postInParts(columns, a, b, failed);
      }
    }
  }

  function stop(): void {
    alive = false;
    worker.removeEventListener('error', onError);
    channel.port1.onmessage = null;
    channel.port1.close();
    try {
      worker.terminate();
    } catch {
      // Already gone.
    }
  }

  /** Stops the worker; after its start, that is a death the client hears of, before it, a failed start. */
  function die(reason: string): void {
    if (!alive) return;
    stop();
    const error = started ? new AnalyticsError('WORKER_UNAVAILABLE', `The analytics worker stopped: ${reason}.`) : new Error(reason);
    for (const listener of deathListeners) listener(error);
    deathListeners.clear();
    if (started) handlers.onDeath(reason);
  }

  /** Runs a control call, settling with TIMED_OUT after `ms` or rejecting when the worker dies. */
  function call<T>(invoke: () => Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
    if (!alive) return Promise.reject(new AnalyticsError('WORKER_UNAVAILABLE', 'The analytics worker is not running.'));
    let timer: unknown;
    let onDeath: (error: Error) => void = () => undefined;
    const limit = new Promise<typeof TIMED_OUT>((resolve, reject) => {
      timer = timers.setTimeout(() => resolve(TIMED_OUT), ms);
      deathListeners.add((onDeath = reject));
    });
    return Promise.race([invoke(), limit]).finally(() => {
      timers.clearTimeout(timer);
      deathListeners.delete(onDeath);
    });
  }

  /** A control call whose timeout means the worker is dead. */
  async function control<T>(what: string, invoke: () => Promise<T>): Promise<T> {
    const result = await call(invoke, options.controlTimeoutMs);
    if (result === TIMED_OUT) {
      die(`${what}() got no answer within ${options.controlTimeoutMs} ms`);
      throw new AnalyticsError('WORKER_UNAVAILABLE', `The analytics worker did not answer ${what}().`);
    }
    return result;
  }

  const api = wrap<WorkerApi>(worker as unknown as Endpoint);
  const port = channel.port2;
  let timezone: string | undefined;
  try {
    const hello = await call(() => api.init(options.config, transfer(port, [port]), options.replay), options.startTimeoutMs);
    if (hello === TIMED_OUT) throw new Error(`no handshake within ${options.startTimeoutMs} ms`);
    if (hello?.protocol !== WORKER_PROTOCOL_VERSION) {
      throw new Error(
        `the worker speaks protocol ${String(hello?.protocol)}, this library ${WORKER_PROTOCOL_VERSION} (a stale worker file?)`,
      );
    }
    timezone = typeof hello.timezone === 'string' ? hello.timezone : undefined;
    started = true;
  } catch (error) {
    stop();
    throw error;
  }

  return {
    mode: 'worker',
    post(message) {
      const failed: number[] = [];
      if (!alive) return failed;
      try {
        channel.port1.postMessage(message);
      } catch (error) {
        if (message.t !== 'event-columns') throw error;
        postInParts(message.columns, 0, message.columns.timestamps.length, failed);
      }
      return failed;
    },
    async flush(upTo): Promise<FlushResult> {
      // comlink distributes the union into a union of promises; it is one promise of a FlushResult.
      const result = await call(() => api.flush(upTo) as Promise<FlushResult>, options.flushTimeoutMs);
      if (result !== TIMED_OUT) return result;
      // Slow is not dead: a flush may wait out retries. Only a missed probe means death.
      const stats = await control('stats', () => api.stats());
      return {
        ok: false,
        code: 'TIMEOUT',
        message: `flush() did not finish within ${options.flushTimeoutMs} ms; the events stay queued`,
        queued: stats.queueSize,
      };
    },
    clear() {
      // Dropped events must not leave with the page later.
      options.deferred.disarm();
      return control('clear', () => api.clear());
    },
    stats: () => control('stats', () => api.stats()),
    async shutdown(timeoutMs) {
      try {
        await call(() => api.shutdown(timeoutMs), timeoutMs + options.controlTimeoutMs);
      } finally {
        stop();
        // A client shut down sends nothing later, as without a deferred request.
        options.deferred.disarm();
      }
    },
    close: stop,
    timezone,
  };
}

/** Loads the core and starts it with `replay` queued first. */
export async function startInProcessLink(
  config: DeliveryConfig,
  deps: Partial<CoreDeps> | undefined,
  replay: EventColumns | null,
  handlers: LinkHandlers,
): Promise<DeliveryLink> {
  const { createDeliveryCore } = await import('../../worker/delivery-core.js');
  // No gzip and no deferred body here: both would be main-thread work (docs/decisions.md,
  // "Compression"; the pagehide beacon serves instead: "Unload").
  const core = createDeliveryCore({ ...config, compress: false, deferredUnload: false }, deps, 'in-process');
  core.onMessage((message) => handlers.onMessage(message));
  if (replay !== null) core.receive({ t: 'event-columns', columns: replay });
  return {
    mode: 'in-process',
    post(message) {
      try {
        core.receive(message);
      } catch (error) {
        // Nothing is cloned here: a post that fails fails whole, and its events are reported as not posted.
        if (message.t !== 'event-columns') throw error;
        return message.columns.idCounters.map((_, i) => i);
      }
      return [];
    },
    flush: (upTo) => core.flush(upTo),
    clear: () => core.clear(),
    stats: () => Promise.resolve(core.stats()),
    shutdown: (timeoutMs) => core.shutdown(timeoutMs),
    close: () => void core.shutdown(0).catch(() => undefined),
    // Read by the core when it queued the first events (on this thread: the in-process cost).
    get timezone() {
      return core.timezone();
    },
  };
}
