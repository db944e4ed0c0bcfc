/**
 * A stand-in for the client while the provider has not created it yet. Children's effects run
 * before their provider's, so a `track()` in a child's first effect would otherwise find no client:
 * calls made before the client exists are kept and replayed on it, in order; synchronous getters
 * answer their fallback (`operation-fallbacks.ts`) until then. Its `session` store answers the
 * empty session until then; listeners subscribed meanwhile move to the client's store when it
 * comes, and are told once, since the snapshot changed.
 */
import type { Analytics } from '../analytics.js';
import { EMPTY_SESSION } from '../session/empty-session.js';
import { OPERATION_FALLBACKS, fallbackOf } from '../operation-fallbacks.js';
import type { SessionStore } from '../session/session-state.js';

/** Operations that answer a promise: they wait for the client. */
const ASYNC_OPERATIONS = new Set(['flush', 'getDeliveryStats', 'shutdown']);

/** Calls kept before the client exists; bounded like the client's own queue. */
const MAX_PENDING_CALLS = 1000;

/** The stand-in and the way to give it its client. */
export interface DeferredAnalytics {
  /** Forwards to the client once attached; before that, keeps calls and answers empty values. */
  readonly analytics: Analytics;
  /** Gives the stand-in its client and replays the calls it kept. */
  attach(client: Analytics): void;
  /** The attached client, if any. */
  current(): Analytics | undefined;
}

type Operation = (...args: unknown[]) => unknown;

/** Creates a stand-in. Nothing happens until {@link DeferredAnalytics.attach}. */
export function createDeferredAnalytics(config: Analytics['config']): DeferredAnalytics {
  let client: Analytics | undefined;
  const pending: Array<[string, unknown[]]> = [];
  const waiting: Array<(client: Analytics) => void> = [];
  const methods = new Map<string, Operation>();

  const method = (name: string): Operation => {
    let fn = methods.get(name);
    if (fn !== undefined) return fn;
    fn = (...args: unknown[]): unknown => {
      if (client !== undefined) return (client[name as keyof Analytics] as Operation)(...args);
      if (ASYNC_OPERATIONS.has(name)) {
        return new Promise<Analytics>((resolve) => waiting.push(resolve)).then((c) => (c[name as keyof Analytics] as Operation)(...args));
      }
      if (name in OPERATION_FALLBACKS) return fallbackOf(name);
      if (pending.length < MAX_PENDING_CALLS) pending.push([name, args]);
      return undefined;
    };
    methods.set(name, fn);
    return fn;
  };

  const session: SessionStore = {
    subscribe(listener) {
      if (client !== undefined) return client.session.subscribe(listener);
      let subscribed = true;
      let unsubscribe: (() => void) | undefined;
      waiting.push((attached) => {
        if (!subscribed) return;
        unsubscribe = attached.session.subscribe(listener);
        try {
          listener(); // From the empty session to the client's.
        } catch {
          // As in the client's store: one listener's failure is not the stand-in's.
        }
      });
      return () => {
        subscribed = false;
        unsubscribe?.();
      };
    },
    getSnapshot: () => client?.session.getSnapshot() ?? EMPTY_SESSION,
  };

  const analytics = new Proxy({} as Analytics, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      if (name === 'config') return client?.config ?? config;
      if (name === 'session') return session;
      if (name === 'then') return undefined; // not a thenable
      return method(name);
    },
  });

  return {
    analytics,
    attach(next) {
      client = next;
      for (const [name, args] of pending.splice(0)) (next[name as keyof Analytics] as Operation)(...args);
      for (const resolve of waiting.splice(0)) resolve(next);
    },
    current: () => client,
  };
}
