/*
 * The aggregate reads behind the report endpoints (docs/protocol.md, "Reports"). Both stores
 * implement them with the same SQL (`report-queries.ts`); one contract suite
 * (`report-store.contract.ts`) checks both against direct counts.
 */

import { FRUSTRATION_SIGNALS, type FrustrationSignal } from '../../protocol/frustration-signals.js';
import { FILTER_DIMENSIONS, type FilterDimension } from '../../protocol/report-dimensions.js';
import { HEATMAP_GRID, SCROLL_DEPTH_EVENT, SCROLL_DEPTH_STEP } from '../../protocol/heatmap.js';

/** The heatmap's event type and grids (defined with the wire contract). */
export { HEATMAP_GRID, SCROLL_DEPTH_EVENT, SCROLL_DEPTH_STEP };

/** The frustration signals' event types (defined with the wire contract). */
export { FRUSTRATION_SIGNALS, type FrustrationSignal };

/** Dimensions a report can group by or filter on, by their parameter name (defined with the wire contract). */
export { FILTER_DIMENSIONS, type FilterDimension };

/** The events column of each dimension, by its parameter name. */
export const DIMENSION_COLUMNS: Readonly<Record<FilterDimension, string>> = {
  page: 'path',
  host: 'host',
  referrer: 'referrer_host',
  channel: 'channel',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  browser: 'browser',
  os: 'os',
  device: 'device',
  screen: 'screen_class',
  country: 'country',
  event_type: 'event_type',
};

/** The columns and values of `filters`, in FILTER_DIMENSIONS order (a stable SQL text per set). */
export function filterColumns(filters: Partial<Record<FilterDimension, string>> | undefined): Array<[column: string, value: string]> {
  if (filters === undefined) return [];
  return FILTER_DIMENSIONS.filter((d) => filters[d] !== undefined).map((d) => [DIMENSION_COLUMNS[d], filters[d] as string]);
}

/** Dimensions of the top-N report: the filter dimensions and `custom_event`. */
export const TOP_DIMENSIONS = [...FILTER_DIMENSIONS, 'custom_event'] as const;

/** A dimension of the top-N report. */
export type TopDimension = (typeof TOP_DIMENSIONS)[number];

/** Top-N dimensions counted over page views: they describe a page load (all but the event type and custom events). */
export const PAGE_TOP_DIMENSIONS: ReadonlySet<TopDimension> = new Set(FILTER_DIMENSIONS.filter((d) => d !== 'event_type'));

/** The property names of the web vitals in `performance` events, by their report keys (docs/decisions.md, wire table). */
export const VITAL_PROPERTIES = {
  lcp: 'largestContentfulPaint',
  inp: 'interactionToNextPaint',
  cls: 'cumulativeLayoutShift',
  fcp: 'firstContentfulPaint',
} as const;

/**
 * Event types that the bundled client sends by itself or from its helpers (docs/decisions.md, "Wire
 * mapping of every client call"); every other type is a custom event of the top-N `custom_event`.
 */
export const BUILT_IN_EVENT_TYPES: readonly string[] = [
  'page_view',
  'user_identify',
  'user_alias',
  'group_identify',
  'feature_used',
  'funnel_started',
  'funnel_step',
  'funnel_completed',
  'funnel_abandoned',
  'subscription_started',
  'subscription_paused',
  'subscription_reactivated',
  'subscription_upgraded',
  'subscription_downgraded',
  'subscription_canceled',
  'trial_started',
  'trial_converted',
  'trial_expired',
  'payment_succeeded',
  'payment_failed',
  'experiment_exposure',
  'error',
  'performance',
  'click',
  'hover',
  ...FRUSTRATION_SIGNALS,
  SCROLL_DEPTH_EVENT,
  'form_field_change',
  'form_submit',
];

/**
 * Who counts as one visitor: `anonymous`, the client's anonymous id, else the server's daily
 * visitor hash (an event without an anonymous id); `hash`, the daily hash alone, for cookieless
 * clients, whose anonymous id lasts one page load (docs/decisions.md, "Report columns").
 */
export type VisitorKey = 'anonymous' | 'hash';

/** What every report reads: one project, a time range, filters. */
export interface ReportQuery {
  projectId: string;
  /** Inclusive lower bound on `timestamp`, ms. */
  from: number;
  /** Exclusive upper bound on `timestamp`, ms. */
  to: number;
  /** Equality filters on dimensions. */
  filters: Partial<Record<FilterDimension, string>>;
  /** Count events stored with `is_bot` (a project whose bot policy is `flag`). */
  includeBots: boolean;
  visitorKey: VisitorKey;
}

/** Counts over a time range or one bucket of it. */
export interface Totals {
  events: number;
  pageViews: number;
  visitors: number;
  sessions: number;
}

/** One bucket of a time series: its start, ms. Empty buckets are absent. */
export interface SeriesPoint extends Totals {
  time: number;
}

/** One value of a top-N report. */
export interface TopRow {
  value: string;
  events: number;
  visitors: number;
}

/** Sessions whose events lie in the range (events outside it are not seen). */
export interface SessionStats {
  sessions: number;
  /** Sessions with at most one page view. */
  bounces: number;
  /** Sum over sessions of last event time minus first, ms. */
  totalDurationMs: number;
  pageViews: number;
}

/** The 75th percentile (nearest rank) of each web vital on one page; null without a sample. */
export interface PageVitals {
  path: string;
  /** `performance` events of the page. */
  samples: number;
  lcp: number | null;
  inp: number | null;
  cls: number | null;
  fcp: number | null;
}

/** Errors of one message. */
export interface ErrorGroup {
  /** `properties.message`; empty when the event had none. */
  message: string;
  count: number;
  visitors: number;
  lastSeen: number;
  /** `properties.stack` of the latest error of the group. */
  lastStack: string | null;
}

/** Most session ids listed per element of the frustration report. */
export const FRUSTRATION_SESSION_IDS = 5;

/** One element's frustration signal on one page. */
export interface FrustrationRow {
  signal: FrustrationSignal;
  /** `properties.selector` of the events; empty when they had none. */
  selector: string;
  /** The page's path (the events' `path` column); empty when they had none. */
  path: string;
  /** Events of this signal, element and page. */
  count: number;
  /** Distinct sessions among them (exact). */
  sessions: number;
  /**
   * Up to {@link FRUSTRATION_SESSION_IDS} of those sessions, the one with the latest signal first
   * (ties by id in byte order): where a replay shows it.
   */
  sessionIds: string[];
}

/** Clicks in one cell of the grid over an element's box (`HEATMAP_GRID` cells a side). */
export interface HeatmapCell {
  /** Column, 0 (left) to `HEATMAP_GRID - 1`. */
  x: number;
  /** Row, 0 (top) to `HEATMAP_GRID - 1`. */
  y: number;
  count: number;
}

/** The clicks on one element of a page. */
export interface HeatmapElement {
  /** `properties.selector` of the clicks; empty when they had none. */
  selector: string;
  /** Clicks on it. */
  count: number;
  /**
   * Those of its clicks with a position in the element (`relativeX` and `relativeY` numbers from 0
   * to 1), per cell; cells without clicks are absent. Rows then columns, ascending.
   */
  cells: HeatmapCell[];
}

/** A page's heatmap: its clicks by element, and how far down its page views were seen. */
export interface HeatmapReport {
  /** Every click on the page (those of elements past the limit too). */
  clicks: number;
  /** The elements with the most clicks, most first, ties by selector in byte order. */
  elements: HeatmapElement[];
  /** Page views with a scroll depth (`scroll_depth` events with a numeric `maxScrollDepth`). */
  pageViews: number;
  /**
   * `reached[i]`: those of them whose depth is at least `(i + 1) × SCROLL_DEPTH_STEP` percent, for
   * every step up to 100.
   */
  reached: number[];
}

/** A funnel step: an event type, or a page view of a path. */
export interface FunnelStepSpec {
  kind: 'event' | 'page';
  value: string;
}

/** Per variant of an experiment: exposed visitors, and those of them who converted after exposure. */
export interface VariantResult {
  variant: string;
  exposures: number;
  /** Null when no conversion event was asked for. */
  conversions: number | null;
}

/** An experiment with exposures in the range. */
export interface ExperimentSummary {
  /** `properties.experiment` of its `experiment_exposure` events. */
  experiment: string;
  /** Distinct visitors exposed to any of its variants. */
  visitors: number;
}

/** The reports of one store. */
export interface ReportStore {
  /**
   * Brings every daily rollup up to date now (the store also does it in the background); resolves
   * with the number of days refreshed, 0 for a store without rollups. The days of `skip`
   * (`project:day` keys) are passed over, as the background refresh passes over a day it
   * refreshed recently.
   */
  refreshRollups(skip?: readonly string[]): Promise<number>;
  /**
   * One turn of keeping filtered top lists ahead of their first view (the store also does it in
   * the background): keeps frequent filter values of one day, the day's events read once for
   * them, or looks at a few days; resolves
   * false once every such day is kept (or the store keeps none). With `whenIdle`, as the
   * background takes its turns, a turn stops as soon as a report reads, and resolves false (try
   * again later).
   */
  keepFilteredAhead(whenIdle?: boolean): Promise<boolean>;
  /**
   * Resolves once what reports started keeping in this process (an experiment report's cells,
   * built after its first read; the estimates a series computed) is kept or given up: for tests and the benchmark, which time or
   * check the reads after it.
   */
  keptSettled(): Promise<void>;
  totals(query: ReportQuery): Promise<Totals>;
  /** Buckets of `bucketMs` (a minute, an hour, a day), aligned to the epoch (UTC). */
  series(query: ReportQuery, bucketMs: number): Promise<SeriesPoint[]>;
  /** Most events first, then by value (byte order). Page dimensions count page views only. */
  top(query: ReportQuery, dimension: TopDimension, limit: number): Promise<TopRow[]>;
  sessions(query: ReportQuery): Promise<SessionStats>;
  /** Pages with the most samples first. */
  vitals(query: ReportQuery, limit: number): Promise<PageVitals[]>;
  /** Most frequent first. */
  errors(query: ReportQuery, limit: number): Promise<ErrorGroup[]>;
  /** Sessions that reached each step, in order, within the session. */
  funnel(query: ReportQuery, steps: readonly FunnelStepSpec[]): Promise<number[]>;
  /** Experiments with exposures in the range, the most exposed visitors first, then by name (byte order). */
  experiments(query: ReportQuery, limit: number): Promise<ExperimentSummary[]>;
  /**
   * The `limit` elements with the most events of each frustration signal, by selector and page:
   * signals in byte order, then most events first, ties by selector and path in byte order.
   */
  frustration(query: ReportQuery, limit: number): Promise<FrustrationRow[]>;
  /**
   * The heatmap of the page that `query.filters.page` names (the events' `path`): `click` events
   * by selector (the `limit` most clicked) and cell, `scroll_depth` events by depth.
   */
  heatmap(query: ReportQuery, limit: number): Promise<HeatmapReport>;
  /** Variants in byte order. */
  experiment(query: ReportQuery, experiment: string, conversion: string | null): Promise<VariantResult[]>;
}
