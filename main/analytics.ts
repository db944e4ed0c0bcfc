/** The client's public interface: every operation of a client made by `createAnalytics()`. */
import type { EventProperties, PageProperties } from '../protocol/event-model/analytics-event.js';
import type { ResolvedConfig } from './config.js';
import type { ExperimentOperations } from './experiments/experiments.js';
import type { FunnelOperations } from './business/funnels.js';
import type { RecorderOperations } from './recorder/facade-recorder.js';
import type { SubscriptionOperations } from './business/subscriptions.js';
import type { PerformanceData, SessionData, UserProperties } from './types.js';
import type { DeliveryStats } from './delivery/delivery-client.js';
import type { SessionStore } from './session/session-state.js';

/**
 * An analytics client made by `createAnalytics()`. Every operation returns at once and never
 * throws into the app; failures are logged when `debug` is on. Only `flush()` reports failure, by
 * rejecting with an `AnalyticsError`.
 */
export interface Analytics extends FunnelOperations, RecorderOperations, SubscriptionOperations, ExperimentOperations {
  /** The configuration in use, every default applied. */
  readonly config: Readonly<ResolvedConfig>;
  /** Sends a custom event named `event`. */
  track(event: string, properties?: EventProperties): void;
  /** Sends a `page_view`; the properties override the page's own (title, url, path, referrer, search). */
  page(properties?: PageProperties): void;
  /**
   * Sets the user id and sends `user_identify` with the traits. A `subscription` trait is validated
   * like a subscription event's properties (invalid fields are not sent), remembered for
   * `getSubscriptionData()` when its status is valid, and sent JSON-encoded. Identifying a user
   * other than the current one forgets the previous user's subscription data.
   */
  identify(userId: string, traits?: UserProperties): void;
  /** Links `previousId` (by default the current user or anonymous id) to `newId`, sends `user_alias`, and continues as `newId`. */
  alias(newId: string, previousId?: string): void;
  /**
   * Clears the user, issues a new anonymous id and starts a new session; forgets the subscription
   * data and the experiment assignments (the new anonymous id may get other variants). Sends nothing.
   */
  reset(): void;
  /**
   * Sends everything queued now. Resolves once the server accepted it; rejects with an
   * `AnalyticsError` (code `NETWORK_ERROR`, `HTTP_ERROR`, `AUTH_ERROR`, `RATE_LIMITED`, `TIMEOUT`,
   * `WORKER_UNAVAILABLE`, `SHUT_DOWN`) when it failed, and the events stay queued.
   */
  flush(): Promise<void>;
  /** Sets (or clears, with an empty string) the user id without sending anything. */
  setUserId(userId: string): void;
  /** The user id, or null when none is set. */
  getUserId(): string | null;
  /** The anonymous id, persisted across page loads. */
  getAnonymousId(): string;
  /** The id of the session the next event will carry (a new one after `sessionTimeout`). */
  getSessionId(): string;
  /** The current session's data; after a timeout, the ended session (`isActive: false`). */
  getSessionData(): SessionData;
  /**
   * The session as a subscribable store, so a view can follow it without polling:
   * `session.subscribe(listener)` calls the listener after the session changed (page views and
   * other events, clicks, scroll depth, a new session, the session ending) and answers its
   * unsubscribe; `session.getSnapshot()` answers `getSessionData()`'s data, frozen, as the same
   * object until it changes. Fits React's `useSyncExternalStore` (the React binding's
   * `useSessionTracking()` rides on it) and similar stores. Neither function throws.
   *
   * ```ts
   * const stop = analytics.session.subscribe(() => render(analytics.session.getSnapshot()));
   * ```
   */
  readonly session: SessionStore;
  /** The data of the active session, starting a new session after a timeout. */
  getActiveSession(): SessionData;
  /** The current session's engagement score, 0–100 (formula in `calculateEngagementScore` of `engagement.ts`). */
  calculateEngagementScore(): number;
  /** Events waiting to be sent. */
  getQueueSize(): number;
  /** Discards every queued event. */
  clearQueue(): void;
  /** Sends an `error` event of type `custom`. */
  trackCustomError(error: string | Error, properties?: EventProperties): void;
  /** Sends a `performance` event. */
  trackPerformance(data: PerformanceData): void;
  /** Sends `feature_used` with `feature` = `featureName`. */
  trackFeatureUsage(featureName: string, properties?: EventProperties): void;
  /**
   * The visitor agreed to be counted: events held while consent was pending are sent, storage is
   * used from now on, and a recording asked for meanwhile starts. The choice is stored (unless
   * `persistence` is `'memory'`) and wins over `consent` and Do-Not-Track on later loads.
   */
  optIn(): void;
  /**
   * The visitor declined: events held or queued are dropped (reported through `onDiscard`), the
   * recorder stops without uploading, what the client stored on the device is removed, and nothing
   * is sent any more. The choice is stored like `optIn()`'s.
   */
  optOut(): void;
  /** True while consent is denied (`optOut()`, `consent: 'denied'`, or Do-Not-Track when respected). */
  hasOptedOut(): boolean;
  /**
   * Adds super properties: every later event carries them (the event's own properties win over a
   * key of the same name). Stored like the user id; `reset()` clears them.
   */
  register(properties: EventProperties): void;
  /** Removes one super property. */
  unregister(key: string): void;
  /** A copy of the super properties. */
  getRegistered(): EventProperties;
  /**
   * Puts the visitor in group `key` of `type` (an account, a company): sends `group_identify`
   * (`group_type`, `group_key` and the traits) and tags every later event with its groups, as one
   * JSON-encoded `groups` property (`{"company":"acme"}`). Stored like the user id; `reset()`
   * clears it.
   */
  group(type: string, key: string, traits?: EventProperties): void;
  /**
   * How delivery runs (mode `worker`, `in-process` or `off`, the start strategy, restarts) and the
   * core's counters. An addition of this library, for diagnostics and tests.
   */
  getDeliveryStats(): Promise<DeliveryStats>;
  /**
   * Removes every listener, lets the core send what it can within `timeoutMs`, and stops it.
   * Later calls do nothing.
   * @param timeoutMs @default 2000
   */
  shutdown(timeoutMs?: number): Promise<void>;
}
