import { createContext } from 'react';
import type { Analytics } from '../analytics.js';

/** What the provider gives its children: the client (a stand-in until it exists). */
export interface AnalyticsContextValue {
  analytics: Analytics;
}

/** The provider's context; null outside a provider. */
export const AnalyticsContext = createContext<AnalyticsContextValue | null>(null);
