import type { Dialect, Values } from './dialect.js';
import { FRUSTRATION_SESSION_IDS, FRUSTRATION_SIGNALS, type FrustrationRow, type FrustrationSignal } from '../report-store.js';

/*
 * The frustration report's SQL for SQLite and PostgreSQL (docs/protocol.md, "GET
 * /api/v1/reports/frustration"): the signal events of the range, grouped by signal, selector and
 * page path; the `limit` largest groups of each signal; for each, its distinct sessions and the few
 * latest of them, whose replays show the signal. It reads the events (through `events_by_time`):
 * signals are a small share of a project's events, and no rollup keeps a property such as the
 * selector.
 */

/** The statement of the report, values added through `v` in the order of the text. */
export function frustrationSql(dialect: Dialect, v: Values, where: string, limit: number): string {
  const signals = FRUSTRATION_SIGNALS.map((s) => v.add(s)).join(', ');
  const by = dialect.byteOrder;
  return `WITH s AS MATERIALIZED (
      SELECT event_type AS signal, COALESCE(${dialect.textProperty('selector')}, '') AS selector, COALESCE(path, '') AS page,
        session_id, timestamp
      FROM events WHERE ${where} AND event_type IN (${signals})),
    g AS (
      SELECT signal, selector, page, COUNT(*) AS n, COUNT(DISTINCT session_id) AS sessions,
        ROW_NUMBER() OVER (PARTITION BY signal ORDER BY COUNT(*) DESC, ${by('selector')}, ${by('page')}) AS pos
      FROM s GROUP BY signal, selector, page),
    chosen AS (SELECT * FROM g WHERE pos <= ${v.add(limit)}),
    latest AS (
      SELECT s.signal, s.selector, s.page, s.session_id,
        ROW_NUMBER() OVER (PARTITION BY s.signal, s.selector, s.page ORDER BY MAX(s.timestamp) DESC, ${by('s.session_id')}) AS k
      FROM s JOIN chosen ON chosen.signal = s.signal AND chosen.selector = s.selector AND chosen.page = s.page
      WHERE s.session_id IS NOT NULL
      GROUP BY s.signal, s.selector, s.page, s.session_id)
    SELECT chosen.signal, chosen.selector, chosen.page, chosen.n, chosen.sessions, latest.session_id, latest.k
    FROM chosen LEFT JOIN latest ON latest.signal = chosen.signal AND latest.selector = chosen.selector
      AND latest.page = chosen.page AND latest.k <= ${v.add(FRUSTRATION_SESSION_IDS)}
    ORDER BY ${by('chosen.signal')}, chosen.pos, latest.k`;
}

/** The report's rows from the statement's: one per group, its session ids gathered in order. */
export function frustrationRows(rows: ReadonlyArray<Record<string, unknown>>): FrustrationRow[] {
  const out: FrustrationRow[] = [];
  let current: FrustrationRow | undefined;
  for (const row of rows) {
    const signal = String(row.signal) as FrustrationSignal;
    const selector = String(row.selector);
    const path = String(row.page);
    if (current === undefined || current.signal !== signal || current.selector !== selector || current.path !== path) {
      current = { signal, selector, path, count: Number(row.n), sessions: Number(row.sessions), sessionIds: [] };
      out.push(current);
    }
    if (row.session_id !== null && row.session_id !== undefined) current.sessionIds.push(String(row.session_id));
  }
  return out;
}
