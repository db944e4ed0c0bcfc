/**
 * `enableHeatmapTracking`: clicks (`click`) and resting-pointer hovers (`hover`) with the fields of
 * HeatmapData (`main/types.ts`): page coordinates, tag, a stable selector (`selector.ts`), action,
 * viewport, and where in the element's box the pointer was (`relativeX`, `relativeY`: fractions of
 * its width and height), so that the dashboard places a click on the element it hit however the
 * page is laid out where it is shown (docs/protocol.md, "GET /api/v1/reports/heatmap"). Reading
 * the box costs one layout read per click, never per `mousemove` (a hover reads it once, when sent).
 *
 * Hovers are sampled, not sent per `mousemove`: a move only stores the event; one timer at a
 * time checks whether the pointer has rested {@link HOVER_REST_MS} on an element, which is then
 * sent unless it was the last one sent; at most {@link MAX_HOVERS_PER_MINUTE} in any 60 s.
 *
 * The session's click count is the page observers' (one per click); a heatmap `click` event only
 * counts as a click event (`SessionData.clickEvents`), so one click is never counted twice.
 */
import type { EventProperties } from '../../protocol/event-model/analytics-event.js';
import type { Logger } from '../logger.js';
import type { HeatmapData } from '../types.js';
import { createRateLimit } from './rate-limit.js';
import { createRemovers } from './removers.js';
import { selectorOf } from './selector.js';

/** How long the pointer must rest on an element for a `hover` (ms). */
export const HOVER_REST_MS = 1000;
/** Most `hover` events in any 60 s. */
export const MAX_HOVERS_PER_MINUTE = 20;

/** What heatmap tracking needs. */
export interface HeatmapDeps {
  send: (name: 'click' | 'hover', properties: EventProperties) => void;
  now: () => number;
  log: Logger;
}

/** Starts click and hover tracking on `win`; returns the remover. */
export function trackHeatmap(win: Window, deps: HeatmapDeps): () => void {
  const r = createRemovers(deps.log, 'heatmap tracking');
  const passive = { passive: true, capture: true };
  r.listen(win.document, 'click', (event) => deps.send('click', heatmapData(win, event as MouseEvent, 'click')), passive);

  const hoverAllowed = createRateLimit(MAX_HOVERS_PER_MINUTE, 60_000, deps.now);
  let last: MouseEvent | undefined;
  let lastMoveAt = 0;
  let sentTarget: EventTarget | null = null;
  let timer: number | undefined;
  const check = r.guard(() => {
    timer = undefined;
    const rested = deps.now() - lastMoveAt;
    if (rested < HOVER_REST_MS) {
      timer = win.setTimeout(check, HOVER_REST_MS - rested);
      return;
    }
    if (last === undefined || last.target === sentTarget || !hoverAllowed()) return;
    sentTarget = last.target;
    deps.send('hover', heatmapData(win, last, 'move'));
  });
  r.listen(
    win.document,
    'mousemove',
    (event) => {
      last = event as MouseEvent;
      lastMoveAt = deps.now();
      timer ??= win.setTimeout(check, HOVER_REST_MS);
    },
    passive,
  );
  r.add(() => win.clearTimeout(timer));
  return r.stop;
}

/** HeatmapData of a mouse event, as event properties (the viewport is JSON-encoded on the way). */
export function heatmapData(win: Window, event: MouseEvent, action: HeatmapData['action']): EventProperties {
  const target = event.target as Partial<Element> | null;
  const element = typeof target?.tagName === 'string' ? (target as Element) : undefined;
  const data: HeatmapData = {
    // Document coordinates (pageX/pageY), computed so that they are right in every environment.
    x: Math.round(event.clientX + (win.scrollX || 0)),
    y: Math.round(event.clientY + (win.scrollY || 0)),
    element: element?.tagName.toLowerCase(),
    selector: element === undefined ? undefined : selectorOf(element),
    action,
    viewport: { width: win.innerWidth, height: win.innerHeight },
  };
  const box = element === undefined || typeof element.getBoundingClientRect !== 'function' ? undefined : element.getBoundingClientRect();
  if (box !== undefined && box.width > 0 && box.height > 0) {
    data.relativeX = fraction((event.clientX - box.left) / box.width);
    data.relativeY = fraction((event.clientY - box.top) / box.height);
  }
  return data as unknown as EventProperties;
}

/** A share clamped to 0–1 and rounded to 3 decimals (a pointer on the box's edge may fall a pixel out). */
function fraction(value: number): number {
  return Number.isFinite(value) ? Math.round(Math.min(1, Math.max(0, value)) * 1000) / 1000 : 0;
}
