/*
 * The span of each project's events, day by day: what a derived table built from the events (the
 * daily rollups, the report aggregates) must cover.
 */

const DAY_MS = 86_400_000;

/**
 * The first and last event time of each project with events: what a new rollup must build. The
 * projects are found by index seeks, one per project, not by a scan of the events.
 */
export const PROJECT_SPANS_SQL = `WITH RECURSIVE p (project_id) AS (
  SELECT (SELECT project_id FROM events ORDER BY project_id LIMIT 1)
  UNION ALL
  SELECT (SELECT e.project_id FROM events e WHERE e.project_id > p.project_id ORDER BY e.project_id LIMIT 1) FROM p WHERE p.project_id IS NOT NULL)
SELECT p.project_id,
  (SELECT MIN(timestamp) FROM events e WHERE e.project_id = p.project_id) AS first_ts,
  (SELECT MAX(timestamp) FROM events e WHERE e.project_id = p.project_id) AS last_ts
FROM p WHERE p.project_id IS NOT NULL`;

/** A project's first and last event time (text from PostgreSQL's BIGINT). */
export type Span = { project_id: string; first_ts: number | string | null; last_ts: number | string | null };

/** The (project, day) pairs of existing events, each day of each project's span. */
export function* spanDays(spans: readonly Span[]): Generator<[string, number]> {
  for (const span of spans) {
    if (span.first_ts === null || span.last_ts === null) continue;
    for (let day = Math.floor(Number(span.first_ts) / DAY_MS); day <= Math.floor(Number(span.last_ts) / DAY_MS); day++) yield [span.project_id, day];
  }
}

/** The projects with events, by index seeks (one per project), not by a scan of the events. */
export const EVENT_PROJECTS_SQL = `WITH RECURSIVE p (project_id) AS (
  SELECT (SELECT project_id FROM events ORDER BY project_id LIMIT 1)
  UNION ALL
  SELECT (SELECT e.project_id FROM events e WHERE e.project_id > p.project_id ORDER BY e.project_id LIMIT 1) FROM p WHERE p.project_id IS NOT NULL)
SELECT project_id FROM p WHERE project_id IS NOT NULL`;

/**
 * The time of a project's first event at or after a time (`ph(1)` the project, `ph(2)` the time):
 * walked day by day, it visits the days that hold events and no other, however far apart.
 */
export const nextEventTimeSql = (ph: (n: number) => string): string =>
  `SELECT MIN(timestamp) AS t FROM events WHERE project_id = ${ph(1)} AND timestamp >= ${ph(2)}`;
