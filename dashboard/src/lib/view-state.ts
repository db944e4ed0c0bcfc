/**
 * What a view of the dashboard looks at: the range, the filters of every report panel, the funnel's
 * steps and the experiments page's choices. It lives in the URL's query (`?range=30d&channel=social`), before the
 * hash route, so a view can be shared as a link and survives a reload; the read key never does
 * (it is in `sessionStorage`). The filter names are the report endpoints' own parameters
 * (docs/protocol.md, "Reports", "Report columns").
 */
import type { FilterDimension as ReportDimension } from '../../../protocol/report-dimensions.js';
import { type FunnelStep, MAX_STEPS, parseStep, stepParam } from './funnel-steps.js';
import { RANGES, type RangeKey } from './range.js';

/**
 * The dimensions a report can be filtered by, in the order chips show them. The dashboard takes
 * only types from protocol/ (scripts/import-rules.test.ts), so the list is written out here and
 * the type check holds it to the endpoints' own (protocol/report-dimensions.ts): no unknown
 * dimension, none missing.
 */
export const FILTER_DIMENSIONS = [
  'page',
  'host',
  'referrer',
  'channel',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'browser',
  'os',
  'device',
  'screen',
  'country',
  'event_type',
] as const satisfies readonly ReportDimension[];

/** One filterable dimension. */
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];

/** `true` only while every dimension of the endpoints has a chip (else the type check fails here). */
export type EveryDimensionHasAChip = AssertTrue<[Exclude<ReportDimension, FilterDimension>] extends [never] ? true : false>;
type AssertTrue<T extends true> = T;

/** At most one value per dimension: every filter must hold (the endpoints refuse a repeat). */
export type Filters = Partial<Record<FilterDimension, string>>;

/** How a chip names its dimension. */
export const FILTER_LABELS: Readonly<Record<FilterDimension, string>> = {
  page: 'Page',
  host: 'Host',
  referrer: 'Referrer',
  channel: 'Channel',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  browser: 'Browser',
  os: 'OS',
  device: 'Device',
  screen: 'Screen',
  country: 'Country',
  event_type: 'Event',
};

/** The longest value the endpoints take (longer ones are a 400). */
export const MAX_VALUE_LENGTH = 512;

/** The state of a view. */
export interface ViewState {
  range: RangeKey;
  filters: Filters;
  /** The funnel page's steps, in order (`step=page:/&step=event:signup`, as the funnel report takes them). */
  steps: FunnelStep[];
  /** The experiment the experiments page shows, null for its default. */
  experiment: string | null;
  /** The conversion event type of the experiments page, null for none. */
  conversion: string | null;
}

/** The range when the query names none. */
export const DEFAULT_RANGE: RangeKey = '7d';

const usable = (value: string | null): value is string => value !== null && value !== '' && value.length <= MAX_VALUE_LENGTH;

/** The view of a query string (`location.search`); what it cannot use (unknown names, empty values) is ignored. */
export function parseViewState(search: string): ViewState {
  const params = new URLSearchParams(search);
  const range = RANGES.find((r) => r.key === params.get('range'))?.key ?? DEFAULT_RANGE;
  const filters: Filters = {};
  for (const dimension of FILTER_DIMENSIONS) {
    const value = params.get(dimension);
    if (usable(value)) filters[dimension] = value;
  }
  const steps = params
    .getAll('step')
    .filter(usable)
    .map(parseStep)
    .filter((step): step is FunnelStep => step !== null)
    .slice(0, MAX_STEPS);
  const experiment = params.get('experiment');
  const conversion = params.get('conversion');
  return { range, filters, steps, experiment: usable(experiment) ? experiment : null, conversion: usable(conversion) ? conversion : null };
}

/** The query string of a view, `?…` or '' for the default view; dimensions in a fixed order, so a view has one URL. */
export function viewSearch(state: ViewState): string {
  const params = new URLSearchParams();
  if (state.range !== DEFAULT_RANGE) params.set('range', state.range);
  for (const dimension of FILTER_DIMENSIONS) {
    const value = state.filters[dimension];
    if (usable(value ?? null)) params.set(dimension, value as string);
  }
  for (const step of state.steps) params.append('step', stepParam(step));
  if (state.experiment !== null) params.set('experiment', state.experiment);
  if (state.conversion !== null) params.set('conversion', state.conversion);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** `state` with `dimension` filtered to `value` (replacing any value it had). */
export function withFilter(state: ViewState, dimension: FilterDimension, value: string): ViewState {
  return { ...state, filters: { ...state.filters, [dimension]: value } };
}

/** `state` without the filter on `dimension`. */
export function withoutFilter(state: ViewState, dimension: FilterDimension): ViewState {
  const filters = { ...state.filters };
  delete filters[dimension];
  return { ...state, filters };
}

/** The filters as a list, in {@link FILTER_DIMENSIONS} order. */
export function filterList(filters: Filters): Array<{ dimension: FilterDimension; value: string }> {
  return FILTER_DIMENSIONS.flatMap((dimension) => {
    const value = filters[dimension];
    return value === undefined ? [] : [{ dimension, value }];
  });
}

/** A key that changes exactly when the filters do (for effect dependencies). */
export function filtersKey(filters: Filters): string {
  return filterList(filters)
    .map((f) => `${f.dimension}=${f.value}`)
    .join('\n');
}
