/**
 * The answers of the read API and the report endpoints as the dashboard reads them
 * (docs/protocol.md, "Read API" and "Reports"). Declared here rather than imported from the
 * server: they are the wire form (snake_case, ISO times), which the server makes in its routes from
 * its own internal types, and the dashboard imports nothing from server/ (scripts/import-rules.test.ts).
 */

import type { FrustrationSignal } from '../../../protocol/frustration-signals.js';

/** Counts over a range or one bucket of it. */
export interface WireTotals {
  events: number;
  page_views: number;
  visitors: number;
  sessions: number;
}

/** One bucket of a series. */
export interface WirePoint extends WireTotals {
  /** Start of the bucket, ISO. */
  time: string | null;
}

/** `GET /api/v1/reports/timeseries`. */
export interface TimeseriesAnswer {
  from: string | null;
  to: string | null;
  interval: 'hour' | 'day';
  totals: WireTotals;
  points: WirePoint[];
}

/** `GET /api/v1/reports/live`. */
export interface LiveAnswer {
  from: string | null;
  to: string | null;
  minutes: number;
  totals: WireTotals;
  points: WirePoint[];
}

/** One row of a top-N report. */
export interface TopRow {
  value: string;
  events: number;
  visitors: number;
}

/** `GET /api/v1/reports/top/:dimension`. */
export interface TopAnswer {
  dimension: string;
  rows: TopRow[];
}

/** `GET /api/v1/reports/sessions`. */
export interface SessionStatsAnswer {
  sessions: number;
  bounces: number;
  /** Null without sessions. */
  bounce_rate: number | null;
  average_duration_ms: number | null;
  page_views: number;
  pages_per_session: number | null;
}

/** p75 of each web vital on one page; null without a sample. */
export interface PageVitals {
  path: string;
  samples: number;
  lcp: number | null;
  inp: number | null;
  cls: number | null;
  fcp: number | null;
}

/** `GET /api/v1/reports/vitals`. */
export interface VitalsAnswer {
  pages: PageVitals[];
}

/** Errors of one message. */
export interface ErrorGroup {
  message: string;
  count: number;
  visitors: number;
  last_seen: string | null;
  last_stack: string | null;
}

/** `GET /api/v1/reports/errors`. */
export interface ErrorsAnswer {
  errors: ErrorGroup[];
}

/** One element of a frustration signal, on one page. */
export interface FrustrationElement {
  selector: string;
  page: string;
  count: number;
  sessions: number;
  /** The latest few of those sessions, latest first: replays that show the signal. */
  session_ids: string[];
}

/** `GET /api/v1/reports/frustration`: every signal, an empty list for one without events. */
export interface FrustrationAnswer {
  signals: Record<FrustrationSignal, FrustrationElement[]>;
}

/** One step of a funnel's answer. */
export interface FunnelStepResult {
  step: string;
  sessions: number;
  conversion_rate: number | null;
  drop_off: number;
  drop_off_rate: number | null;
}

/** `GET /api/v1/reports/funnel`. */
export interface FunnelAnswer {
  steps: FunnelStepResult[];
}

/** Property values as stored: scalars. */
export type PropertyValue = string | number | boolean | null;

/** An event as `GET /api/v1/events` answers it. */
export interface WireEvent {
  event_id: string;
  event_type: string;
  user_id: string | null;
  session_id: string | null;
  timestamp: string | null;
  received_at: string | null;
  properties: Record<string, PropertyValue>;
  user_agent: string | null;
}

/** `GET /api/v1/events`. */
export interface EventsAnswer {
  events: WireEvent[];
  next_cursor: string | null;
}

/** A recorded session as `GET /api/v1/sessions` lists it. */
export interface RecordedSession {
  session_id: string;
  user_id: string | null;
  start_url: string | null;
  duration: number;
  chunk_count: number;
  event_count: number;
  first_received_at: string | null;
  last_received_at: string | null;
  finished: boolean;
}

/** `GET /api/v1/sessions`. */
export interface SessionsAnswer {
  sessions: RecordedSession[];
}

/** One recorded rrweb event. */
export interface RecordedEvent {
  type: number;
  data: unknown;
  timestamp: number;
}

/** `GET /api/v1/sessions/:id/recording`. */
export interface RecordingAnswer {
  session_id: string;
  events: RecordedEvent[];
  gaps: Array<{ from: number; to: number }>;
  finished: boolean;
}

/** One variant of an experiment's answer. */
export interface VariantResult {
  variant: string;
  /** Distinct visitors exposed to the variant. */
  exposures: number;
  /** Those of them with the conversion event at or after their first exposure; null without `conversion`. */
  conversions: number | null;
  conversion_rate: number | null;
}

/** `GET /api/v1/reports/experiments`: the experiments exposed in the range, the most exposed first. */
export interface ExperimentsAnswer {
  experiments: Array<{ experiment: string; visitors: number }>;
}

/** `GET /api/v1/reports/experiments/:experiment`. */
export interface ExperimentAnswer {
  experiment: string;
  conversion: string | null;
  variants: VariantResult[];
}
