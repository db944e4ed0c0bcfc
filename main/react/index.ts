'use client';
/**
 * React bindings: `service-analytics/react`. React is a peer dependency; the core never imports it.
 */
export { ServiceAnalyticsProvider } from './provider.js';
export type { ServiceAnalyticsProviderProps } from './provider.js';
export { useAnalytics, useServiceAnalytics } from './use-analytics.js';
export { TrackView } from './track-view.js';
export type { TrackViewProps } from './track-view.js';
export { TrackClick } from './track-click.js';
export type { TrackClickProps } from './track-click.js';
export { TrackForm } from './track-form.js';
export type { TrackFormProps } from './track-form.js';
export { useSessionTracking } from './use-session-tracking.js';
export type { SessionSnapshot } from './session-store.js';
