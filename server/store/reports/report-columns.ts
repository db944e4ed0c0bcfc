/**
 * The report columns of `events`, one list for both stores' schemas and the backfill that fills
 * them in an older database (`report-backfill.ts`); what fills them at ingest is
 * `server/reports/dimensions.ts`.
 */

/** The report columns of `events` (version 5), in insert order, each a nullable TEXT. */
export const REPORT_COLUMNS = [
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

/** The name of the backfill of the report columns in `backfills`. */
export const REPORT_BACKFILL = 'report_columns';
