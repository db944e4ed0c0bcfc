/**
 * Which recording shows a page, and where in it (the heatmap's backdrop): the latest page view of
 * the page whose session was recorded, and the moment just after that page view, when the page is
 * on screen. Pure, so that the rule is tested without a player.
 */
import type { RecordedEvent, WireEvent } from '../api/wire-types.js';

/** rrweb's event types the choice reads. */
const FULL_SNAPSHOT = 2;
const META = 4;

/** How long after a page view its page is taken to be drawn, ms. */
export const SETTLE_MS = 1500;

/** A page view whose session has a recording. */
export interface RecordedPageView {
  sessionId: string;
  /** The page view's time, ms. */
  at: number;
  /** The page's address as the page view had it. */
  url: string | null;
}

/** The page's address of a page view (`properties.page`, JSON text), or null. */
export function urlOf(event: WireEvent): string | null {
  const page = event.properties.page;
  if (typeof page !== 'string') return null;
  try {
    const parsed = JSON.parse(page) as { url?: unknown };
    return typeof parsed.url === 'string' ? parsed.url : null;
  } catch {
    return null;
  }
}

/** The first of `pageViews` (newest first) whose session is among `recorded`, or null. */
export function chooseRecordedPageView(pageViews: readonly WireEvent[], recorded: ReadonlySet<string>): RecordedPageView | null {
  for (const event of pageViews) {
    if (event.session_id === null || !recorded.has(event.session_id) || event.timestamp === null) continue;
    const at = Date.parse(event.timestamp);
    if (Number.isFinite(at)) return { sessionId: event.session_id, at, url: urlOf(event) };
  }
  return null;
}

/** Where the player is paused to show the page: its offset from the recording's start, and the recorded viewport. */
export interface SnapshotMoment {
  offsetMs: number;
  width: number;
  height: number;
}

/**
 * The moment of `events` that shows the page viewed at `at`: {@link SETTLE_MS} after it, within
 * the recording, and the viewport of the last meta event before it. Null when the recording has
 * no full snapshot by then (nothing to draw).
 */
export function snapshotMoment(events: readonly RecordedEvent[], at: number): SnapshotMoment | null {
  if (events.length === 0) return null;
  let start = Infinity;
  let end = -Infinity;
  for (const e of events) {
    if (e.timestamp < start) start = e.timestamp;
    if (e.timestamp > end) end = e.timestamp;
  }
  const target = Math.min(end, Math.max(start, at + SETTLE_MS));
  let snapshot = false;
  let width = 0;
  let height = 0;
  for (const e of events) {
    if (e.timestamp > target) continue;
    if (e.type === FULL_SNAPSHOT) snapshot = true;
    if (e.type === META) {
      const data = e.data as { width?: unknown; height?: unknown } | null;
      if (typeof data?.width === 'number' && typeof data.height === 'number') [width, height] = [data.width, data.height];
    }
  }
  if (!snapshot || width <= 0 || height <= 0) return null;
  return { offsetMs: target - start, width, height };
}
