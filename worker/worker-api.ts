/**
 * The control plane of the worker: {@link WorkerApi} over one delivery core, exposed through
 * comlink on any `Endpoint` (the worker global in `entry.ts`, a `MessageChannel` port in tests,
 * as comlink's own tests do). Errors cross as data (`FlushResult`), never as thrown objects.
 */
import { type Endpoint, expose } from 'comlink';
import type { CoreDeps } from '../protocol/worker/core-deps.js';
import { createDeliveryCore } from './delivery-core.js';
import { isEventColumns, isIdNumbers } from '../protocol/event-model/event-columns.js';
import { WORKER_PROTOCOL_VERSION } from '../protocol/worker/protocol-version.js';
import type { DeliveryConfig, DeliveryCore, DroppedIds, FlushResult, QueueStats, ToWorkerMessage, WorkerApi, WorkerHello } from '../protocol/worker/worker-contract.js';
import type { EventColumns } from '../protocol/event-model/event-columns.js';

/**
 * Creates the {@link WorkerApi}. `init` starts a core in 'worker' mode and wires the data-plane
 * `port` both ways; a second `init` shuts the first core down and replaces it.
 *
 * @param deps - passed to every core created (tests inject timers or fetch)
 */
export function createWorkerApi(deps: Partial<CoreDeps> = {}): WorkerApi {
  let core: DeliveryCore | undefined;
  let port: MessagePort | undefined;

  function detach(): void {
    port?.close();
    port = undefined;
  }

  return {
    async init(config: DeliveryConfig, dataPort: MessagePort, replay: EventColumns | null): Promise<WorkerHello> {
      if (core !== undefined) await core.shutdown(0);
      detach();
      const current = createDeliveryCore(config, deps, 'worker');
      core = current;
      port = dataPort;
      // A deferred request's body is transferred, not copied.
      current.onMessage((message) => dataPort.postMessage(message, message.t === 'deferred-arm' ? [message.body] : []));
      // Unacknowledged events of a worker that died go first, under their own numbers.
      // Reported as data: a throw would surface as the worker's `error` event, or fail the handshake.
      const report = (message: string): void => dataPort.postMessage({ t: 'log', level: 'error', message });
      if (replay !== null) {
        if (!isEventColumns(replay)) report('the worker refused the replayed events: malformed columns');
        else if (replay.timestamps.length > 0) {
          try {
            current.receive({ t: 'event-columns', columns: replay });
          } catch (error) {
            report(`delivery core failed on the replayed events: ${String(error)}`);
          }
        }
      }
      dataPort.addEventListener('message', (event: MessageEvent<unknown>) => {
        const data = event.data;
        if (!isToWorkerMessage(data)) {
          const t = typeof data === 'object' && data !== null ? String((data as { t?: unknown }).t) : typeof data;
          return report(`the worker refused a malformed post ("${t}"); its contents are lost`);
        }
        try {
          current.receive(data);
        } catch (error) {
          report(`delivery core failed on "${data.t}": ${String(error)}`);
        }
      });
      dataPort.start();
      return { protocol: WORKER_PROTOCOL_VERSION, mode: 'worker', timezone: current.timezone() };
    },

    async flush(upTo: number): Promise<FlushResult> {
      if (core === undefined) return { ok: false, code: 'WORKER_UNAVAILABLE', message: 'flush() before init()', queued: 0 };
      return core.flush(upTo);
    },

    async clear(): Promise<void> {
      await core?.clear();
    },

    async stats(): Promise<QueueStats> {
      return core?.stats() ?? { queueSize: 0, receivedSeq: 0, recordingQueued: 0, sent: 0, discarded: 0, mode: 'worker' };
    },

    async shutdown(timeoutMs: number): Promise<void> {
      await core?.shutdown(timeoutMs);
      detach();
    },
  };
}

/**
 * Creates the {@link WorkerApi} and exposes it through comlink on `endpoint`.
 *
 * @returns the api, for tests that want to look at it directly
 */
export function exposeWorkerApi(endpoint: Endpoint, deps: Partial<CoreDeps> = {}): WorkerApi {
  const api = createWorkerApi(deps);
  expose(api satisfies WorkerApi, endpoint);
  return api;
}

const MESSAGE_TYPES: ReadonlySet<string> = new Set([
  'event-columns',
  'recording',
  'recording-stop',
  'recording-pause',
  'recording-clear',
  'page-hidden',
]);

/** A cheap shape check: the port is ours, but a wrong post must not break the core. */
function isToWorkerMessage(data: unknown): data is ToWorkerMessage {
  if (typeof data !== 'object' || data === null) return false;
  const t = (data as { t?: unknown }).t;
  if (typeof t !== 'string' || !MESSAGE_TYPES.has(t)) return false;
  if (t === 'recording') return Array.isArray((data as { events?: unknown }).events);
  if (t === 'event-columns') {
    const { columns, dropped } = data as { columns?: unknown; dropped?: unknown };
    return isEventColumns(columns) && (dropped === undefined || isDroppedIds(dropped));
  }
  return true;
}

/** Two arrays of id numbers of one length, as the ids of {@link isEventColumns}. */
function isDroppedIds(value: unknown): value is DroppedIds {
  if (typeof value !== 'object' || value === null) return false;
  const { idMs, idCounters } = value as Partial<Record<keyof DroppedIds, unknown>>;
  if (!Array.isArray(idMs) || !Array.isArray(idCounters) || idMs.length !== idCounters.length) return false;
  return idMs.every((ms, i) => isIdNumbers(ms, idCounters[i]));
}
