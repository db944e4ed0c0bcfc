/**
 * Public data shapes of the client library: properties, SessionData, PerformanceData, ErrorData,
 * HeatmapData. Shapes that cross the worker boundary are defined once in `protocol/worker/worker-contract.ts` and
 * re-exported here.
 */
import type { SubscriptionProperties } from './business/subscription-types.js';
import type { TrafficChannel } from '../protocol/traffic-channel.js';

export type { DiscardReason, QueueStats } from '../protocol/worker/worker-contract.js';
export type { AnalyticsEvent, AnalyticsEventType, EventContext, EventProperties, EventPropertyValue, PageProperties } from '../protocol/event-model/analytics-event.js';
export type { FunnelState, FunnelStatus, FunnelStep } from './business/funnels.js';
/** Where a session's traffic came from (the rules: `protocol/traffic-channel.ts`). */
export type { TrafficChannel } from '../protocol/traffic-channel.js';

/** A value of {@link UserProperties}: a scalar, or the user's subscription. */
export type UserPropertyValue = string | number | boolean | null | undefined | SubscriptionProperties;

/** UserProperties: traits given to `identify()`. */
export interface UserProperties {
  /** The user's e-mail address. */
  email?: string;
  /** The user's subscription; remembered for `getSubscriptionData()` and sent JSON-encoded. */
  subscription?: SubscriptionProperties;
  [key: string]: UserPropertyValue;
}


/** SessionData: what the facade knows about the current session. */
export interface SessionData {
  sessionId?: string;
  /** When the session started (ms). */
  startTime: number;
  /** When the session ended (ms); set only once it has timed out. */
  endTime?: number;
  /** Milliseconds from start to the last activity. */
  duration?: number;
  /** `page_view` events sent in this session. */
  pageViews: number;
  /** Clicks on the page in this session. */
  clicks: number;
  /** Current scroll depth, percent of the document seen (0–100). */
  scrollDepth: number;
  /** Deepest scroll depth reached in this session, percent. */
  maxScrollDepth: number;
  /** False once `sessionTimeout` has passed without activity. */
  isActive: boolean;
  /** Names of the events sent in this session, oldest first (the latest 500). */
  events: string[];
  /** Scroll frames observed (one per animation frame with scrolling). */
  scrollEvents?: number;
  /** `click` events sent (heatmap tracking). */
  clickEvents?: number;
  /** URL changes within the page (SPA navigations) in this session. */
  pageChanges?: number;
  /** 0–100, see `calculateEngagementScore`. */
  engagementScore?: number;
  /** 0–100, see `calculateBounceLikelihood`. */
  bounceLikelihood?: number;
  /** Traffic source of the session, see `detectChannel`. */
  channel?: TrafficChannel;
}

/** PerformanceData: page timings in milliseconds (CLS is unitless). */
export interface PerformanceData {
  loadTime?: number;
  domReady?: number;
  firstPaint?: number;
  firstContentfulPaint?: number;
  largestContentfulPaint?: number;
  firstInputDelay?: number;
  cumulativeLayoutShift?: number;
  timeToInteractive?: number;
}

/** Kinds of {@link ErrorData}. */
export type ErrorType = 'javascript' | 'unhandledrejection' | 'network' | 'custom';

/** ErrorData: what an `error` event carries. */
export interface ErrorData {
  message: string;
  stack?: string;
  filename?: string;
  lineno?: number;
  colno?: number;
  type: ErrorType;
}

/** HeatmapData: one click, hover or scroll position. */
export interface HeatmapData {
  x: number;
  y: number;
  /** Tag name. */
  element?: string;
  /** CSS selector of the element. */
  selector?: string;
  action: 'click' | 'move' | 'scroll';
  viewport: { width: number; height: number };
  /**
   * Where in the element's box the pointer was, as fractions of its width and height (0 at its
   * left and top edge, 1 at its right and bottom, 3 decimals): a layout that reflows the page
   * still places the point on the element. Absent when the element has no box.
   */
  relativeX?: number;
  /** As {@link HeatmapData.relativeX}, of the height. */
  relativeY?: number;
}

/**
 * ScrollDepthData: how far down one page view's document was seen (`scroll_depth`, once per page
 * view, with `enableHeatmapTracking`).
 */
export interface ScrollDepthData {
  /** The deepest point seen, in percent of the document's height (0–100, as SessionData's). */
  maxScrollDepth: number;
  /** The document's height then, px. */
  documentHeight: number;
  action: 'scroll';
  viewport: { width: number; height: number };
}

