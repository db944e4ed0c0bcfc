/**
 * The report columns of `events`, one list for both stores' schemas and the backfill that fills
 * them in an older database (`report-backfill.ts`); what fills them at ingest is
 * `server/reports/dimensions.ts`.
 */

/**
 * The report columns version 5 of both schemas added, in insert order, each a nullable TEXT. A
 * migration from before version 5 adds these and no more: a later column comes with its own step.
 */
export const REPORT_COLUMNS_V5 = [
  'path',
  'host',
  'referrer_host',
  'channel',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'browser',
  'os',
  'device',
  'screen_class',
  'anonymous_id',
] as const;

/**
 * Every report column of `events`, in insert order, each a nullable TEXT: version 5's, then
 * `country` (SQLite's version 7, PostgreSQL's 9), which comes from the client's full address at
 * ingest and which no backfill can give an older event (its stored address is truncated).
 */
export const REPORT_COLUMNS = [...REPORT_COLUMNS_V5, 'country'] as const;

/** The name of the backfill of the report columns in `backfills`. */
export const REPORT_BACKFILL = 'report_columns';
