import type { Dialect, Values } from './dialect.js';
import { HEATMAP_GRID, SCROLL_DEPTH_EVENT, SCROLL_DEPTH_STEP, type HeatmapElement, type HeatmapReport } from '../report-store.js';

/*
 * The heatmap report's SQL for SQLite and PostgreSQL (docs/protocol.md, "GET
 * /api/v1/reports/heatmap"): one page's `click` events by selector and by cell of the grid over the
 * element's box, and its `scroll_depth` events by depth. Both statements read the page's clicks
 * and scroll depths of the range through `events_by_heatmap` (project, path, time; only those two
 * event types are in it), so their cost is the page's own heatmap events, not the project's: no
 * rollup keeps a selector or a position.
 *
 * A cell is `floor(relative × GRID)` of the position, computed as an integer division of the
 * position in thousandths (`ROUND(relative × 1000)`: the client sends 3 decimals), so that every
 * database puts a position on a cell's edge in the same cell, whatever the last bit of its
 * floating-point product; 1 (the right or bottom edge, and what rounds to it) is in the last cell. Integer division
 * (`/`) and `CAST(... AS INTEGER)` of a whole number are the same in both databases.
 */

/**
 * The condition of the `events_by_heatmap` partial index (`sqlite-schema.ts`, `postgres-schema.ts`),
 * written into both statements as it is: SQLite uses a partial index only for a query whose WHERE
 * holds its condition term for term, and PostgreSQL only when it can prove it from constants.
 */
export const HEATMAP_EVENT_TYPES_SQL = `event_type IN ('click', '${SCROLL_DEPTH_EVENT}')`;

/** Thousandths of a cell's side. */
const PER_CELL = 1000 / HEATMAP_GRID;

/** The cell of a fraction's expression, or null outside 0–1 (and for null). */
function cellOf(relative: string): string {
  const thousandths = `ROUND(${relative} * 1000)`;
  return `CASE WHEN ${relative} >= 0 AND ${relative} <= 1 THEN
      CASE WHEN ${thousandths} >= 1000 THEN ${HEATMAP_GRID - 1} ELSE CAST(${thousandths} AS INTEGER) / ${PER_CELL} END END`;
}

/** The clicks' statement: the `limit` most clicked selectors, each with its cells, and every click's count. */
export function heatmapClicksSql(dialect: Dialect, v: Values, where: string, limit: number): string {
  const by = dialect.byteOrder;
  return `WITH c AS MATERIALIZED (
      SELECT COALESCE(${dialect.textProperty('selector')}, '') AS selector,
        ${cellOf(dialect.numberProperty('relativeX'))} AS cx, ${cellOf(dialect.numberProperty('relativeY'))} AS cy
      FROM events WHERE ${where} AND ${HEATMAP_EVENT_TYPES_SQL} AND event_type = 'click'),
    g AS (SELECT selector, COUNT(*) AS n FROM c GROUP BY selector),
    chosen AS (SELECT selector, n FROM g ORDER BY n DESC, ${by('selector')} LIMIT ${v.add(limit)}),
    cells AS (
      SELECT c.selector, c.cx, c.cy, COUNT(*) AS k FROM c JOIN chosen ON chosen.selector = c.selector
      WHERE c.cx IS NOT NULL AND c.cy IS NOT NULL GROUP BY c.selector, c.cx, c.cy)
    SELECT chosen.selector, chosen.n, (SELECT COUNT(*) FROM c) AS total, cells.cx, cells.cy, cells.k
    FROM chosen LEFT JOIN cells ON cells.selector = chosen.selector
    ORDER BY chosen.n DESC, ${by('chosen.selector')}, cells.cy, cells.cx`;
}

/** Steps of the scroll map: 10, 20, … 100 percent. */
export const SCROLL_STEPS: readonly number[] = Array.from({ length: 100 / SCROLL_DEPTH_STEP }, (_, i) => (i + 1) * SCROLL_DEPTH_STEP);

/** The scroll depths' statement: page views with a depth, and those reaching each step. */
export function heatmapScrollSql(dialect: Dialect, where: string): string {
  return `SELECT COUNT(*) AS views, ${SCROLL_STEPS.map((step) => `COALESCE(SUM(CASE WHEN d >= ${step} THEN 1 ELSE 0 END), 0) AS r${step}`).join(', ')}
    FROM (SELECT ${dialect.numberProperty('maxScrollDepth')} AS d FROM events WHERE ${where} AND ${HEATMAP_EVENT_TYPES_SQL} AND event_type = '${SCROLL_DEPTH_EVENT}') s
    WHERE d IS NOT NULL`;
}

/** The report from both statements' rows. */
export function heatmapReport(clickRows: ReadonlyArray<Record<string, unknown>>, scrollRows: ReadonlyArray<Record<string, unknown>>): HeatmapReport {
  const elements: HeatmapElement[] = [];
  let current: HeatmapElement | undefined;
  let clicks = 0;
  for (const row of clickRows) {
    clicks = Number(row.total);
    const selector = String(row.selector);
    if (current === undefined || current.selector !== selector) {
      current = { selector, count: Number(row.n), cells: [] };
      elements.push(current);
    }
    if (row.k !== null && row.k !== undefined) current.cells.push({ x: Number(row.cx), y: Number(row.cy), count: Number(row.k) });
  }
  const scroll = scrollRows[0];
  return {
    clicks,
    elements,
    pageViews: Number(scroll?.views ?? 0),
    reached: SCROLL_STEPS.map((step) => Number(scroll?.[`r${step}`] ?? 0)),
  };
}
