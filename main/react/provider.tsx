import { type ReactNode, useEffect, useState } from 'react';
import type { Analytics } from '../analytics.js';
import { type AnalyticsConfig, resolveConfig } from '../config.js';
import { createAnalytics } from '../create-analytics.js';
import { AnalyticsContext, type AnalyticsContextValue } from './context.js';
import { type DeferredAnalytics, createDeferredAnalytics } from './deferred-analytics.js';

/** Props of {@link ServiceAnalyticsProvider}. */
export interface ServiceAnalyticsProviderProps {
  /** The client's configuration (`AnalyticsConfig`). Read once, when the provider mounts. */
  config: AnalyticsConfig;
  /**
   * Shown in place of the children until the client exists (after mount, so also during server
   * rendering and hydration). Without it the children render at once, and operations they call
   * before the client exists are kept and replayed.
   */
  loading?: ReactNode;
  children?: ReactNode;
}

interface ProviderState {
  deferred: DeferredAnalytics;
  value: AnalyticsContextValue;
  /** A shutdown scheduled by an unmount that may be React StrictMode's rehearsal. */
  pendingShutdown?: ReturnType<typeof setTimeout>;
}

/**
 * Makes one analytics client for its subtree. The client is created in an effect, so server
 * rendering touches no browser global and sends nothing; under React StrictMode the rehearsed
 * unmount and remount keep the same client (one start, one page view). It is shut down when the
 * provider really unmounts.
 */
export function ServiceAnalyticsProvider({ config, loading, children }: ServiceAnalyticsProviderProps): ReactNode {
  const [state] = useState<ProviderState>(() => {
    const deferred = createDeferredAnalytics(Object.freeze({ ...resolveConfig(config) }));
    return { deferred, value: { analytics: deferred.analytics } };
  });
  const [ready, setReady] = useState(false);

  useEffect(() => {
    if (state.pendingShutdown !== undefined) {
      // StrictMode remounted us right after its rehearsal unmount: keep the client.
      clearTimeout(state.pendingShutdown);
      state.pendingShutdown = undefined;
    }
    let client: Analytics | undefined = state.deferred.current();
    if (client === undefined) {
      client = createAnalytics(config);
      state.deferred.attach(client);
    }
    setReady(true);
    const started = client;
    return () => {
      state.pendingShutdown = setTimeout(() => {
        state.pendingShutdown = undefined;
        void started.shutdown();
      }, 0);
    };
    // The config is read once; a new client per config change would resend the page view.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state]);

  return <AnalyticsContext.Provider value={state.value}>{!ready && loading !== undefined ? loading : children}</AnalyticsContext.Provider>;
}
