/**
 * The dimensions of the report endpoints (docs/protocol.md, "Reports"): each is a query parameter
 * that filters a report to one value, and a top-N list. One definition for the server, which
 * validates the parameters and maps each to its column, and the dashboard, which shows a chip per
 * filter in this order.
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
] as const;

/** A dimension a report can filter on. */
export type FilterDimension = (typeof FILTER_DIMENSIONS)[number];
