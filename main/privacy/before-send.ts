/**
 * The `beforeSend` hook (docs/decisions.md, "beforeSend and sampling"): the app sees each event
 * before it is queued and may change or drop it. It runs on the page's main thread, per event, only
 * when set; the facade makes no event object otherwise.
 */
import type { AnalyticsEventType, EventContext, EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { Logger } from '../logger.js';

/** An event as `beforeSend` sees it (its id is made after the hook has run). */
export interface OutgoingEvent {
  type: AnalyticsEventType;
  /** The event name (the backend `event_type` of a `track`). */
  event?: string;
  /** The call's properties (a copy: changing them changes only what is sent). For `page`, the page properties. */
  properties?: EventProperties;
  userId?: string;
  anonymousId: string;
  sessionId: string;
  /** Unix time in ms. */
  timestamp: number;
  /** Page, screen, user agent, library, locale and the registered super properties. */
  context: EventContext;
}

/**
 * `AnalyticsConfig.beforeSend`: returns the event to send (the one given, changed or not, or
 * another) or `null` to drop it. `type`, `anonymousId`, `sessionId` and `timestamp` are kept
 * from the original whatever is returned.
 */
export type BeforeSend = (event: OutgoingEvent) => OutgoingEvent | null;

/**
 * Runs `hook` on `event`: the event to send, or null when the hook dropped it. A hook that throws
 * or returns something other than an object or null sends the event as it was made.
 */
export function runBeforeSend(hook: BeforeSend, event: OutgoingEvent, log: Logger): OutgoingEvent | null {
  const made = { ...event, properties: event.properties && { ...event.properties } };
  try {
    const result: unknown = hook(made);
    if (result === null) {
      log.debug(`beforeSend dropped ${event.event ?? event.type}`);
      return null;
    }
    return typeof result === 'object' ? (result as OutgoingEvent) : event;
  } catch (error) {
    log.debug('beforeSend threw; event sent unchanged', error);
    return event;
  }
}
