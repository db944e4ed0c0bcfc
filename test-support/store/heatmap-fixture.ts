import type { EventDimensions, StoredEvent } from '../../server/store/event-store.js';
import type { PropertyValue } from '../../protocol/wire-types.js';
import type { FilterDimension, HeatmapCell, HeatmapElement, HeatmapReport, ReportQuery } from '../../server/store/report-store.js';
import { HEATMAP_GRID, SCROLL_DEPTH_EVENT, SCROLL_DEPTH_STEP } from '../../server/store/report-store.js';
import { NO_DIMENSIONS, makeEvent } from './event-store.fixtures.js';

/*
 * Generated events for the heatmap report's contract (`report-store.contract.ts`, and against
 * direct SQL in `server/routes/heatmap-report.test.ts`), and the report as a direct count over the
 * same rows, sharing none of the stores' SQL.
 */

const DAY_MS = 86_400_000;

/** A small deterministic generator (mulberry32), so a failure is reproduced by its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const TYPES = ['click', 'click', 'click', SCROLL_DEPTH_EVENT, SCROLL_DEPTH_EVENT, 'page_view', 'hover'];
// ASCII only, so that JavaScript's string order is the byte order the stores sort by.
const SELECTORS = ['#buy', '#nav > a:nth-of-type(2)', 'button[data-testid="plan"]', 'B', 'a', 'body > main > p', null];
const PATHS = ['/', '/pricing', null];
const BROWSERS = ['Firefox', 'Chrome', null];
/** Positions as the client sends them (3 decimals), the grid's edges, and what the report must not place. */
const EDGES: readonly PropertyValue[] = [0, 1, 0.1, 0.3, 0.7, 0.9, 0.999, 0.9996, 0.5, -0.1, 1.2, '0.5', null];
const DEPTHS: readonly PropertyValue[] = [0, 10, 9, 100, 55.5, 99.9, '80', null];

/** `count` events of one project around the day from `t0`: clicks, scroll depths and others, some out of range, some bots. */
export function heatmapFixture(projectId: string, t0: number, count: number, seed: number): StoredEvent[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const position = (): PropertyValue => (next() < 0.2 ? pick(EDGES) : Math.round(next() * 1000) / 1000);
  return Array.from({ length: count }, (_, k) => {
    const eventType = pick(TYPES);
    const properties: Record<string, PropertyValue> = {};
    if (eventType === SCROLL_DEPTH_EVENT) {
      const depth = next() < 0.15 ? pick(DEPTHS) : Math.round(next() * 100);
      if (depth !== null) properties.maxScrollDepth = depth;
    } else {
      const selector = pick(SELECTORS);
      if (selector !== null) properties.selector = selector;
      if (next() < 0.9) {
        properties.relativeX = position();
        properties.relativeY = position();
      }
    }
    // Path before browser: the order the generator draws them in.
    const dimensions: EventDimensions = { ...NO_DIMENSIONS, path: pick(PATHS), browser: pick(BROWSERS) };
    return makeEvent(projectId, 2_000_000 + k, {
      eventType,
      // A little before and after the day, so that its edges matter.
      timestamp: t0 - 60_000 + Math.floor(next() * (DAY_MS + 120_000)),
      sessionId: `s${Math.floor(next() * 40)}`,
      isBot: next() < 0.1,
      visitorId: null,
      properties,
      dimensions,
    });
  });
}

/** The dimension fields the contract filters on. */
const FILTER_FIELDS: Partial<Record<FilterDimension, keyof EventDimensions>> = { page: 'path', browser: 'browser' };

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The cell of a position as report-heatmap.ts defines it, or null. */
export function cellOf(value: PropertyValue | undefined): number | null {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) return null;
  const thousandths = Math.round(value * 1000);
  return thousandths >= 1000 ? HEATMAP_GRID - 1 : Math.floor(thousandths / (1000 / HEATMAP_GRID));
}

/** The heatmap report of `q` as a direct count over `events` (report-store.ts gives its order). */
export function expectedHeatmap(events: readonly StoredEvent[], q: ReportQuery, limit: number): HeatmapReport {
  const kept = events.filter((e) => {
    if (e.projectId !== q.projectId || e.timestamp < q.from || e.timestamp >= q.to) return false;
    if (!q.includeBots && e.isBot) return false;
    return !Object.entries(q.filters).some(([dimension, value]) => {
      const field = FILTER_FIELDS[dimension as FilterDimension];
      if (field === undefined) throw new Error(`the fixture has no filter ${dimension}`);
      return (e.dimensions?.[field] ?? null) !== value;
    });
  });
  const bySelector = new Map<string, { count: number; cells: Map<string, HeatmapCell> }>();
  let clicks = 0;
  for (const e of kept) {
    if (e.eventType !== 'click') continue;
    clicks++;
    const selector = typeof e.properties.selector === 'string' ? e.properties.selector : '';
    let group = bySelector.get(selector);
    if (group === undefined) bySelector.set(selector, (group = { count: 0, cells: new Map() }));
    group.count++;
    const x = cellOf(e.properties.relativeX);
    const y = cellOf(e.properties.relativeY);
    if (x === null || y === null) continue;
    const key = `${x},${y}`;
    const cell = group.cells.get(key) ?? { x, y, count: 0 };
    cell.count++;
    group.cells.set(key, cell);
  }
  const elements: HeatmapElement[] = [...bySelector.entries()]
    .map(([selector, g]) => ({ selector, count: g.count, cells: [...g.cells.values()].sort((a, b) => a.y - b.y || a.x - b.x) }))
    .sort((a, b) => b.count - a.count || byBytes(a.selector, b.selector))
    .slice(0, limit);
  const depths = kept
    .filter((e) => e.eventType === SCROLL_DEPTH_EVENT && typeof e.properties.maxScrollDepth === 'number')
    .map((e) => e.properties.maxScrollDepth as number);
  const steps = Array.from({ length: 100 / SCROLL_DEPTH_STEP }, (_, i) => (i + 1) * SCROLL_DEPTH_STEP);
  return { clicks, elements, pageViews: depths.length, reached: steps.map((step) => depths.filter((d) => d >= step).length) };
}
