/**
 * The client's event model: the events the facade makes and the delivery core queues, stated once
 * for the main thread and the worker (docs/architecture.md, "The event model"). Types only.
 */

/** Values of {@link EventProperties}: what a host app may pass as an event property. */
export type EventPropertyValue = string | number | boolean | null | undefined;

/** A key/value map of event properties. */
export type EventProperties = Record<string, EventPropertyValue>;

/** What is known of the page an event was made on. */
export interface PageProperties {
  title?: string;
  url?: string;
  path?: string;
  referrer?: string;
  search?: string;
}

/** What the facade knows about the page and device when an event is made. */
export interface EventContext {
  page?: PageProperties;
  userAgent?: string;
  screen?: { width: number; height: number };
  /** Library name and version, so the server can tell client versions apart. */
  library?: { name: string; version: string };
  locale?: string;
  timezone?: string;
  /** `navigator.webdriver`: the page is driven by automation (sent only when true, for the server's bot filter). */
  webdriver?: boolean;
  /** Super properties and group tags (`register()`, `group()`): flattened into the properties, the call's own winning. */
  properties?: EventProperties;
}

/**
 * The kinds of internal event. Every automatic and helper event (click, performance, funnel_step,
 * subscription_started, …) is a `track` whose `event` is its backend `event_type`.
 */
export type AnalyticsEventType = 'track' | 'page' | 'identify' | 'alias';

/** One event as the client holds it, before it is mapped to the wire (`event-mapping.ts`). */
export interface AnalyticsEvent {
  /** Time-ordered UUIDv7, made on the main thread; the server dedupes on it. */
  id: string;
  /** Unix time in ms. */
  timestamp: number;
  type: AnalyticsEventType;
  /** Event name for `track`. */
  event?: string;
  properties?: EventProperties;
  userId?: string;
  anonymousId: string;
  sessionId: string;
  /**
   * Page and device context. The facade reuses one object while the page does not change, so a
   * post of many events clones it once.
   */
  context: EventContext;
  /** For `alias`: the id being aliased. */
  previousId?: string;
}
