/**
 * Where the heatmap's clicks go on a rendered page: each element is found by its selector in the
 * page's document, and each cell of its clicks is placed at the cell's centre inside the element's
 * box as it is laid out there, so a layout that differs from the visitor's (another width, reflowed
 * text) still puts the click on the element that was clicked.
 */
import type { HeatmapElement } from './heatmap-api.js';

/** One drawn spot: a cell's clicks at a point of the document, px. */
export interface ClickSpot {
  x: number;
  y: number;
  count: number;
  selector: string;
}

/** The spots, and the selectors that name no element of this document (listed, not drawn). */
export interface PlacedClicks {
  spots: ClickSpot[];
  unplaced: string[];
  /** The most clicks of one spot, for the scale of the drawing. */
  max: number;
}

/** The element a selector names in `doc`, or null (an invalid selector names none). */
function find(doc: Document, selector: string): Element | null {
  if (selector === '') return null;
  try {
    return doc.querySelector(selector);
  } catch {
    return null;
  }
}

/**
 * Places `elements`' cells (a `grid` × `grid` grid over each box) in `doc`, in document
 * coordinates: the box as laid out plus the document's scroll.
 */
export function placeClicks(doc: Document, elements: readonly HeatmapElement[], grid: number): PlacedClicks {
  const view = doc.defaultView;
  const scrollX = view?.scrollX ?? 0;
  const scrollY = view?.scrollY ?? 0;
  const spots: ClickSpot[] = [];
  const unplaced: string[] = [];
  let max = 0;
  for (const element of elements) {
    const found = find(doc, element.selector);
    const box = found?.getBoundingClientRect();
    if (box === undefined || (box.width === 0 && box.height === 0)) {
      unplaced.push(element.selector);
      continue;
    }
    for (const cell of element.cells) {
      spots.push({
        x: box.left + scrollX + ((cell.x + 0.5) / grid) * box.width,
        y: box.top + scrollY + ((cell.y + 0.5) / grid) * box.height,
        count: cell.count,
        selector: element.selector,
      });
      if (cell.count > max) max = cell.count;
    }
  }
  return { spots, unplaced, max };
}
