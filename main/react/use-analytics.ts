import { useContext } from 'react';
import type { Analytics } from '../analytics.js';
import { AnalyticsContext } from './context.js';

/**
 * The analytics client of the nearest {@link ServiceAnalyticsProvider}: every operation of
 * {@link Analytics}. Throws when there is no provider above.
 */
export function useAnalytics(): Analytics {
  return useClient('useAnalytics');
}

/** The same as {@link useAnalytics} (the client's specification names both). */
export function useServiceAnalytics(): Analytics {
  return useClient('useServiceAnalytics');
}

function useClient(hook: string): Analytics {
  const value = useContext(AnalyticsContext);
  if (value === null) {
    throw new Error(
      `${hook}() was called outside <ServiceAnalyticsProvider>. Wrap your app (or this part of it) in <ServiceAnalyticsProvider config={{ apiKey, projectId }}>.`,
    );
  }
  return value.analytics;
}
