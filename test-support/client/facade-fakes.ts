/**
 * Test helpers of the facade: a fake `Worker` that runs the real worker API over a
 * `MessageChannel` (comlink's own test approach), and a client on the in-process path with a fake
 * `fetch`. Test-only: imported by `*.test.ts` files, never by the library.
 */
import { afterEach, beforeEach, vi } from 'vitest';
import { type Endpoint, expose } from 'comlink';
import { createFakeFetch } from '../worker/delivery-fakes.js';
import type { ToWorkerMessage, WorkerApi } from '../../protocol/worker/worker-contract.js';
import { createWorkerApi } from '../../worker/worker-api.js';
import type { Analytics } from '../../main/analytics.js';
import type { AnalyticsConfig } from '../../main/config.js';
import { createAnalytics } from '../../main/create-analytics.js';
import type { TransportOptions, WorkerLike } from '../../main/delivery/transport-options.js';
import { gunzipSync, strFromU8 } from 'fflate';

/** How a fake worker behaves. */
export type FakeWorkerBehaviour =
  /** Runs the worker API (with the given fetch). */
  | 'ok'
  /** The constructor throws, as a CSP violation does. */
  | 'throw'
  /** Fires an `error` event, as a script that fails to load does. */
  | 'error-event'
  /** Never answers, as a worker stuck in a loop does. */
  | 'silent'
  /** Answers `init` with another protocol version. */
  | 'wrong-protocol';

type Listener = (event: Event) => void;

/** A `Worker` stand-in; `created` records every one made by {@link fakeWorkers}. */
export class FakeWorker implements WorkerLike {
  readonly channel = new MessageChannel();
  /** Data-plane messages the worker received. */
  readonly received: ToWorkerMessage[] = [];
  terminated = false;
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(
    readonly url: string,
    behaviour: FakeWorkerBehaviour,
    fetch: ReturnType<typeof createFakeFetch>['fetch'],
  ) {
    const inner = createWorkerApi({ fetch, compress: undefined });
    const api: WorkerApi = {
      ...inner,
      init: async (config, port, replay) => {
        port.addEventListener('message', (event: MessageEvent<ToWorkerMessage>) => this.received.push(event.data));
        const hello = await inner.init(config, port, replay);
        return behaviour === 'wrong-protocol' ? { ...hello, protocol: -1 } : hello;
      },
    };
    if (behaviour === 'ok' || behaviour === 'wrong-protocol') expose(api, this.channel.port2 as unknown as Endpoint);
    this.channel.port1.addEventListener('message', (event) => this.dispatch('message', event));
    this.channel.port1.start();
    if (behaviour === 'error-event') queueMicrotask(() => this.fail('script failed to load'));
  }

  postMessage(message: unknown, transfer: Transferable[]): void {
    if (!this.terminated) this.channel.port1.postMessage(message, transfer as never);
  }

  addEventListener(type: string, listener: Listener): void {
    let set = this.listeners.get(type);
    if (set === undefined) this.listeners.set(type, (set = new Set()));
    set.add(listener);
  }

  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener);
  }

  terminate(): void {
    this.terminated = true;
    this.channel.port1.close();
    this.channel.port2.close();
  }

  /** Fires an `error` event, as an uncaught exception in the worker does. */
  fail(message = 'boom'): void {
    const event = new Event('error');
    Object.assign(event, { message });
    this.dispatch('error', event);
  }

  /** Stops answering anything, as a hung worker does. */
  hang(): void {
    this.channel.port2.close();
  }

  private dispatch(type: string, event: Event): void {
    for (const listener of this.listeners.get(type) ?? []) listener(event);
  }
}

/**
 * A worker factory whose n-th worker behaves as `behaviours[n]` ('ok' after the list), each with its
 * own fake fetch (so a dead worker's held requests do not mix with the next one's).
 */
export function fakeWorkers(behaviours: FakeWorkerBehaviour[], fetches: Array<ReturnType<typeof createFakeFetch>>) {
  const created: FakeWorker[] = [];
  const createWorker = (url: string | URL, _options?: WorkerOptions): WorkerLike => {
    const n = created.length;
    const behaviour = behaviours[n] ?? 'ok';
    if (behaviour === 'throw') {
      created.push(new FakeWorker(String(url), 'silent', fetches[0]!.fetch));
      throw new Error('SecurityError: Failed to construct Worker');
    }
    const worker = new FakeWorker(String(url), behaviour, (fetches[n] ?? fetches.at(-1)!).fetch);
    created.push(worker);
    return worker;
  };
  return { created, createWorker };
}

/** A client on the in-process path, auto page tracking off, talking to a fake fetch. */
export function inProcessClient(config: Partial<AnalyticsConfig> = {}, transport: TransportOptions = {}) {
  const server = createFakeFetch();
  const analytics: Analytics = createAnalytics({
    apiKey: 'key_1',
    projectId: 'proj_1',
    endpoint: 'https://analytics.test',
    enableAutoPageTracking: false,
    ...config,
    transport: { strategies: ['in-process'], coreDeps: { fetch: server.fetch, compress: undefined }, ...transport },
  });
  return { analytics, server };
}

/**
 * For a test file whose tests each make in-process clients: clears localStorage before each test,
 * shuts down every client a test made after it, and returns the factory (as {@link inProcessClient}).
 */
export function inProcessClientsPerTest(): typeof inProcessClient {
  const clients: Analytics[] = [];
  beforeEach(() => localStorage.clear());
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.shutdown(0)));
  });
  return (...args) => {
    const made = inProcessClient(...args);
    clients.push(made.analytics);
    return made;
  };
}

/** The backend events the fake server received, in order. */
export function receivedEvents(server: ReturnType<typeof createFakeFetch>): Array<Record<string, unknown>> {
  return server.requests.flatMap((r) => (Array.isArray(r.body) ? (r.body as Array<Record<string, unknown>>) : []));
}

/** Waits for the end of the current task's microtasks (the facade's post). */
export const endOfTask = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Waits until the clients made before the call are past their start-up: the delivery core's
 * start, then the page's idle callback (idle-callback.ts), where each begins its deferred
 * imports (main/when-idle.ts), and those imports.
 */
async function afterStartSettled(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) {
    await vi.dynamicImportSettled();
    await endOfTask();
  }
}

/** Waits until a client made before the call has its page observers (a lazily imported chunk). */
export async function pageObserversReady(): Promise<void> {
  await afterStartSettled();
  await import('../../main/auto/page-observers.js');
  await endOfTask();
}

/** Waits until a client made before the call has its beacon sender (it comes with the chunk that starts the core). */
export async function beaconSenderReady(): Promise<void> {
  await afterStartSettled();
  await import('../../main/delivery/core-connection.js');
  await endOfTask();
}

/**
 * Waits until a client made before the call has its lazily loaded modules: funnels and
 * subscriptions (`business-module.ts`) and experiments (`experiments.ts`).
 */
export async function lazyModulesReady(): Promise<void> {
  await afterStartSettled();
  await Promise.all([import('../../main/business/business-module.js'), import('../../main/experiments/experiments.js')]);
  await endOfTask();
}

/** The backend events of a beacon body as the facade hands it to `sendBeacon`: JSON, or gzip of it. */
export function beaconEvents<T = Record<string, unknown>>(body: string | Uint8Array): T[] {
  return JSON.parse(typeof body === 'string' ? body : strFromU8(gunzipSync(body))) as T[];
}
