/**
 * The delivery core in a Web Worker: control plane through comlink (`WorkerApi`), data plane
 * through a transferred `MessagePort` (docs/architecture.md, "The worker boundary"). A start fails
 * on a synchronous throw, an `error` event, a rejected `init`, a protocol mismatch or no handshake
 * within the timeout; later, an `error` event or a control call that times out counts as death.
 */
import { type Endpoint, transfer, wrap } from 'comlink';
import { WORKER_PROTOCOL_VERSION } from '../../protocol/worker/protocol-version.js';
import type { DeliveryConfig, FlushResult, FromWorkerMessage, ToWorkerMessage, WorkerApi } from '../../protocol/worker/worker-contract.js';
import type { EventColumns } from '../../protocol/event-model/event-columns.js';
import type { DeliveryLink, LinkHandlers } from './delivery-link.js';
import { liveColumns } from './log-columns.js';
import type { Timers } from '../../protocol/worker/timers.js';
import { AnalyticsError } from '../errors.js';
import type { WorkerLike } from './transport-options.js';
import type { DeferredRequest } from '../unload/deferred-request.js';

/** Options of {@link startWorkerLink}. */
export interface WorkerLinkOptions {
  /** Constructs the worker; may throw (CSP, no Worker, bad URL). */
  create: () => WorkerLike;
  config: DeliveryConfig;
  /** Unacknowledged events of a worker that died, queued first under their own numbers. */
  replay: EventColumns | null;
  handlers: LinkHandlers;
  timers: Timers;
  /** Longest wait for the `init` answer. */
  startTimeoutMs: number;
  /** Longest wait for `clear`, `stats`, `shutdown` and the liveness probe. */
  controlTimeoutMs: number;
  /** Longest wait for `flush` before the worker is probed for liveness. */
  flushTimeoutMs: number;
  /** Arms the bodies the core posts for the deferred request (`config.deferredUnload`). */
  deferred?: DeferredRequest | undefined;
}

const TIMED_OUT: unique symbol = Symbol('timed out');

/** Starts a worker and resolves once it answered `init`; rejects with the reason it could not. */
export async function startWorkerLink(options: WorkerLinkOptions): Promise<DeliveryLink> {
  const { handlers, timers } = options;
  const worker = options.create();
  const channel = new MessageChannel();
  let started = false;
  let alive = true;
  let failStart: (error: Error) => void = () => {};
  const startFailed = new Promise<never>((_, reject) => {
    failStart = reject;
  });
  startFailed.catch(() => undefined);
  const deathListeners = new Set<(error: Error) => void>();

  const onError = (event: Event): void => {
    const message = (event as Partial<ErrorEvent>).message || 'the worker script failed to load or threw';
    if (!started) failStart(new Error(`worker error event: ${message}`));
    else die(`worker error event: ${message}`);
  };
  worker.addEventListener('error', onError);
  channel.port1.onmessage = (event: MessageEvent<FromWorkerMessage>) => {
    if (!alive) return;
    const message = event.data;
    // The deferred request is armed here; the client hears which events it carries, if any.
    if (message.t === 'deferred-arm' || message.t === 'deferred-disarm') {
      if (options.deferred === undefined) handlers.onMessage({ t: 'deferred-disarm' });
      else {
        const heard = options.deferred.receive(message);
        if (heard !== undefined) handlers.onMessage(heard);
      }
    } else handlers.onMessage(message);
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
    for (const close of [() => channel.port1.close(), () => worker.terminate()]) {
      try {
        close();
      } catch {
        // Already gone.
      }
    }
  }

  function die(reason: string): void {
    if (!alive) return;
    stop();
    const error = new AnalyticsError('WORKER_UNAVAILABLE', `The analytics worker stopped: ${reason}.`);
    for (const listener of deathListeners) listener(error);
    deathListeners.clear();
    handlers.onDeath(reason);
  }

  /** Runs a control call, settling with TIMED_OUT after `ms` or rejecting when the worker dies. */
  function call<T>(invoke: () => Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
    if (!alive) return Promise.reject(new AnalyticsError('WORKER_UNAVAILABLE', 'The analytics worker is not running.'));
    return new Promise((resolve, reject) => {
      const done = (): void => {
        timers.clearTimeout(timer);
        deathListeners.delete(onDeath);
      };
      const onDeath = (error: Error): void => {
        done();
        reject(error);
      };
      const timer = timers.setTimeout(() => {
        done();
        resolve(TIMED_OUT);
      }, ms);
      deathListeners.add(onDeath);
      invoke().then(
        (value) => {
          done();
          resolve(value);
        },
        (error: unknown) => {
          done();
          reject(error);
        },
      );
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
  let handshakeTimer: unknown;
  let timezone: string | undefined;
  try {
    const port = channel.port2;
    const init = api.init(options.config, transfer(port, [port]), options.replay);
    init.catch(() => undefined); // It may settle after the race is lost; nobody waits for it then.
    const hello = await Promise.race([
      init,
      startFailed,
      new Promise<never>((_, reject) => {
        handshakeTimer = timers.setTimeout(
          () => reject(new Error(`no handshake within ${options.startTimeoutMs} ms`)),
          options.startTimeoutMs,
        );
      }),
    ]);
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
  } finally {
    timers.clearTimeout(handshakeTimer);
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
      options.deferred?.disarm();
      return control('clear', () => api.clear());
    },
    stats: () => control('stats', () => api.stats()),
    async shutdown(timeoutMs) {
      try {
        await call(() => api.shutdown(timeoutMs), timeoutMs + options.controlTimeoutMs);
      } finally {
        stop();
        // A client shut down sends nothing later, as without a deferred request.
        options.deferred?.disarm();
      }
    },
    close: stop,
    timezone,
  };
}
