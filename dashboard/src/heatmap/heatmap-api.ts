/**
 * The heatmap's calls (docs/protocol.md, "GET /api/v1/reports/heatmap"): the report of one page,
 * and what the backdrop is drawn from: the page views of that page, the recorded sessions, and one
 * recording.
 */
import type { ApiClient } from '../api/api-client.js';
import type { ReportQuery } from '../api/reports.js';
import * as reports from '../api/reports.js';
import type { EventsAnswer } from '../api/wire-types.js';

/** Clicks in one cell of an element's grid. */
export interface HeatmapCell {
  x: number;
  y: number;
  count: number;
}

/** One element's clicks. */
export interface HeatmapElement {
  selector: string;
  count: number;
  cells: HeatmapCell[];
}

/** One step of the scroll map. */
export interface ScrollStep {
  depth: number;
  page_views: number;
  share: number | null;
}

/** `GET /api/v1/reports/heatmap`. */
export interface HeatmapAnswer {
  from: string | null;
  to: string | null;
  path: string;
  grid: number;
  clicks: { total: number; elements: HeatmapElement[] };
  scroll: { page_views: number; depths: ScrollStep[] };
}

/** Elements asked for: the report's most. */
export const HEATMAP_ELEMENTS = 100;

/** The heatmap of `path` for the view's range and filters (the page is the path, not a filter). */
export function heatmap(api: ApiClient, q: ReportQuery, path: string, signal?: AbortSignal): Promise<HeatmapAnswer> {
  const { page: _page, ...filters } = q.filters;
  return api.get<HeatmapAnswer>(
    'reports/heatmap',
    { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), ...filters, path, limit: HEATMAP_ELEMENTS },
    signal,
  );
}

/** The latest page views of `path` in the range, newest first (their sessions may have a recording). */
export function pageViewsOf(api: ApiClient, q: ReportQuery, path: string, signal?: AbortSignal): Promise<EventsAnswer> {
  return reports.events(api, { eventType: 'page_view', filters: { page: path }, from: q.from, to: q.to, limit: 100 }, signal);
}
