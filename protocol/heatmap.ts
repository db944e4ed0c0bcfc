/**
 * The heatmap's definitions shared by the client, which sends its events, and the server, which
 * counts them (docs/protocol.md, "GET /api/v1/reports/heatmap"): the event type of a page view's
 * scroll depth, and the grids the report counts in.
 */

/** The event type of a page view's scroll depth (ScrollDepthData of the client's types). */
export const SCROLL_DEPTH_EVENT = 'scroll_depth';

/**
 * Cells per side of the grid laid over an element's box: a click's `relativeX` and `relativeY`
 * (fractions 0–1) are counted in cell `floor(relative × HEATMAP_GRID)`, the last cell holding 1.
 */
export const HEATMAP_GRID = 10;

/** The scroll map's step, percent of the document: page views reaching 10%, 20%, … 100%. */
export const SCROLL_DEPTH_STEP = 10;
