/** The calls the dashboard's panels make, one function per endpoint, typed by their answers. */
import type { ApiClient, Params } from './api-client.js';
import type { Filters } from '../lib/view-state.js';
import type { FunnelStep } from '../lib/funnel-steps.js';
import { stepParam } from '../lib/funnel-steps.js';
import { withoutFrameSources } from '../replay/frame-sources.js';
import type {
  ErrorsAnswer,
  ExperimentAnswer,
  ExperimentsAnswer,
  EventsAnswer,
  FrustrationAnswer,
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

/** A report's question: its range and the filters every panel of the view shares. */
export interface ReportQuery extends Span {
  filters: Filters;
}

/** A top-N dimension the dashboard shows. */
export type TopDimension = 'page' | 'referrer' | 'channel' | 'utm_source' | 'browser' | 'os' | 'device' | 'screen' | 'country' | 'event_type' | 'custom_event';

/** The common parameters of a report (docs/protocol.md, "Common parameters"). */
const common = (q: ReportQuery): Params => ({ from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), ...q.filters });

export const timeseries = (api: ApiClient, q: ReportQuery, interval: 'hour' | 'day', signal?: AbortSignal) =>
  api.get<TimeseriesAnswer>('reports/timeseries', { ...common(q), interval }, signal);

export const top = (api: ApiClient, q: ReportQuery, dimension: TopDimension, limit: number, signal?: AbortSignal) =>
  api.get<TopAnswer>(`reports/top/${dimension}`, { ...common(q), limit }, signal);

export const sessionStats = (api: ApiClient, q: ReportQuery, signal?: AbortSignal) => api.get<SessionStatsAnswer>('reports/sessions', common(q), signal);

export const vitals = (api: ApiClient, q: ReportQuery, signal?: AbortSignal) => api.get<VitalsAnswer>('reports/vitals', { ...common(q), limit: 50 }, signal);

export const errors = (api: ApiClient, q: ReportQuery, signal?: AbortSignal) => api.get<ErrorsAnswer>('reports/errors', { ...common(q), limit: 50 }, signal);

/** The elements with the most rage, dead and error clicks, `limit` per signal, with their latest sessions. */
export const frustration = (api: ApiClient, q: ReportQuery, limit: number, signal?: AbortSignal) =>
  api.get<FrustrationAnswer>('reports/frustration', { ...common(q), limit }, signal);

export const funnel = (api: ApiClient, q: ReportQuery, steps: readonly FunnelStep[], signal?: AbortSignal) =>
  api.get<FunnelAnswer>('reports/funnel', { ...common(q), step: steps.map(stepParam) }, signal);

/** The experiments exposed in the range, the most exposed visitors first, at most `limit`. */
export const experiments = (api: ApiClient, q: ReportQuery, limit: number, signal?: AbortSignal) =>
  api.get<ExperimentsAnswer>('reports/experiments', { ...common(q), limit }, signal);

/** Exposed visitors per variant of `experiment`, and with `conversion` those who converted. */
export const experiment = (api: ApiClient, q: ReportQuery, name: string, conversion: string | null, signal?: AbortSignal) =>
  api.get<ExperimentAnswer>(`reports/experiments/${encodeURIComponent(name)}`, { ...common(q), conversion: conversion ?? undefined }, signal);

export const live = (api: ApiClient, minutes: number, filters: Filters, signal?: AbortSignal) =>
  api.get<LiveAnswer>('reports/live', { minutes, ...filters }, signal);

/** Events, newest first, optionally of one session or type, with the view's filters, from a time. */
export const events = (
  api: ApiClient,
  query: { sessionId?: string; eventType?: string; filters?: Filters; from?: number; to?: number; limit: number },
  signal?: AbortSignal,
) =>
  api.get<EventsAnswer>(
    'events',
    {
      ...query.filters,
      limit: query.limit,
      session_id: query.sessionId,
      event_type: query.eventType,
      from: query.from === undefined ? undefined : new Date(query.from).toISOString(),
      to: query.to === undefined ? undefined : new Date(query.to).toISOString(),
    },
    signal,
  );

export const recordedSessions = (api: ApiClient, signal?: AbortSignal) => api.get<SessionsAnswer>('sessions', { limit: 100 }, signal);

/** A session's recording, its frames emptied for the player (`replay/frame-sources.ts`). */
export const recording = (api: ApiClient, sessionId: string, signal?: AbortSignal): Promise<RecordingAnswer> =>
  api
    .get<RecordingAnswer>(`sessions/${encodeURIComponent(sessionId)}/recording`, undefined, signal)
    .then((answer) => ({ ...answer, events: withoutFrameSources(answer.events) }));
