/** The calls the dashboard's panels make, one function per endpoint, typed by their answers. */
import type { ApiClient } from './api-client.js';
import type { FunnelStep } from '../lib/funnel-steps.js';
import { stepParam } from '../lib/funnel-steps.js';
import type {
  ErrorsAnswer,
  EventsAnswer,
  FunnelAnswer,
  LiveAnswer,
  RecordingAnswer,
  SessionStatsAnswer,
  SessionsAnswer,
  TimeseriesAnswer,
  TopAnswer,
  VitalsAnswer,
} from './wire-types.js';

/** A report's range, ms. */
export interface Span {
  from: number;
  to: number;
}

/** A top-N dimension the dashboard shows. */
export type TopDimension = 'page' | 'referrer' | 'channel' | 'utm_source' | 'browser' | 'os' | 'device' | 'screen' | 'event_type' | 'custom_event';

const span = (s: Span) => ({ from: new Date(s.from).toISOString(), to: new Date(s.to).toISOString() });

export const timeseries = (api: ApiClient, s: Span, interval: 'hour' | 'day', signal?: AbortSignal) =>
  api.get<TimeseriesAnswer>('reports/timeseries', { ...span(s), interval }, signal);

export const top = (api: ApiClient, s: Span, dimension: TopDimension, limit: number, signal?: AbortSignal) =>
  api.get<TopAnswer>(`reports/top/${dimension}`, { ...span(s), limit }, signal);

export const sessionStats = (api: ApiClient, s: Span, signal?: AbortSignal) => api.get<SessionStatsAnswer>('reports/sessions', span(s), signal);

export const vitals = (api: ApiClient, s: Span, signal?: AbortSignal) => api.get<VitalsAnswer>('reports/vitals', { ...span(s), limit: 50 }, signal);

export const errors = (api: ApiClient, s: Span, signal?: AbortSignal) => api.get<ErrorsAnswer>('reports/errors', { ...span(s), limit: 50 }, signal);

export const funnel = (api: ApiClient, s: Span, steps: readonly FunnelStep[], signal?: AbortSignal) =>
  api.get<FunnelAnswer>('reports/funnel', { ...span(s), step: steps.map(stepParam) }, signal);

export const live = (api: ApiClient, minutes: number, signal?: AbortSignal) => api.get<LiveAnswer>('reports/live', { minutes }, signal);

/** Events, newest first, optionally of one session or since a time. */
export const events = (api: ApiClient, query: { sessionId?: string; from?: number; limit: number }, signal?: AbortSignal) =>
  api.get<EventsAnswer>(
    'events',
    { limit: query.limit, session_id: query.sessionId, from: query.from === undefined ? undefined : new Date(query.from).toISOString() },
    signal,
  );

export const recordedSessions = (api: ApiClient, signal?: AbortSignal) => api.get<SessionsAnswer>('sessions', { limit: 100 }, signal);

export const recording = (api: ApiClient, sessionId: string, signal?: AbortSignal) =>
  api.get<RecordingAnswer>(`sessions/${encodeURIComponent(sessionId)}/recording`, undefined, signal);
